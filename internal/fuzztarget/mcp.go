package fuzztarget

// The MCP surface: just enough of the Model Context Protocol for a fuzzer
// with --profile mcp to list the tools and call them, in either era. The
// server keeps no session, so it answers whatever the client sends first:
// a legacy client's initialize, a modern one's server/discover, or a call
// straight away.

import (
	"github.com/rpcload/rpcload/internal/wire"
)

// The MCP revisions. The modern one carries its version in every request's
// params._meta; the legacy ones are negotiated by initialize, which
// answers with the one asked for when it is among mcpInitializeVersions
// and with the newest of them otherwise. They are the revisions
// internal/profile speaks (a test holds them to it).
const (
	mcpModern = "2026-07-28"
	mcpLegacy = "2025-11-25" // the newest revision that has initialize
)

var mcpInitializeVersions = [...]string{mcpLegacy, "2025-06-18", "2025-03-26", "2024-11-05"}

// The reserved _meta keys of a modern request (RequestMetaObject in
// schema-2026-07-28.json).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
)

// codeUnsupportedVersion is UnsupportedProtocolVersionError's code.
const codeUnsupportedVersion = -32022

// unsupportedVersionData closes the data of -32022 after "requested".
const unsupportedVersionData = `,"supported":["` + mcpModern + `"]}`

// serverInfo is the Implementation initialize names.
const serverInfo = `{"name":"fuzztarget","version":"1"}`

// discoverResult is the DiscoverResult of server/discover. Only the modern
// revision is listed: supportedVersions are the versions a client may put
// in _meta, and the legacy ones are negotiated by initialize instead.
const discoverResult = `{"supportedVersions":["` + mcpModern + `"],"capabilities":{"tools":{}},` +
	`"cacheScope":"public","ttlMs":0,"_meta":{"io.modelcontextprotocol/serverInfo":` + serverInfo + `},"resultType":"complete"}`

// readMeta reads MCP's per-request _meta, for every method: a modern
// client may send any request with it, and a server that speaks the modern
// revision must refuse a version it does not support whatever the method
// (UnsupportedProtocolVersionError), rather than serve the request. A
// request is modern when its params are an object whose _meta (the last
// one, as encoding/json keeps) is an object holding a string
// io.modelcontextprotocol/protocolVersion. That version must be
// 2026-07-28 (else -32022 with data {requested, supported}), and _meta must
// then hold io.modelcontextprotocol/clientCapabilities, an object, and may
// hold io.modelcontextprotocol/clientInfo, an object with name and version
// strings (else -32602). Any other request is legacy, and its _meta is
// left to the method. refusal is the error reply, or nil.
func readMeta(id []byte, params *member) (modern bool, refusal []byte) {
	if params == nil || params.kind() != kindObject {
		return false, nil
	}
	meta := last(items(params.val), "_meta")
	if meta == nil || meta.kind() != kindObject {
		return false, nil
	}
	ms := items(meta.val)
	version := last(ms, metaProtocolVersion)
	if version == nil || version.kind() != kindString {
		return false, nil
	}
	if unquote(version.val) != mcpModern {
		data := append([]byte(`{"requested":`), version.val...)
		data = append(data, unsupportedVersionData...)
		return true, wire.AppendError(nil, id, codeUnsupportedVersion, "Unsupported protocol version", data)
	}
	if caps := last(ms, metaClientCapabilities); caps == nil || caps.kind() != kindObject {
		return true, invalidParams(id, "params._meta needs "+metaClientCapabilities+", an object")
	}
	if info := last(ms, metaClientInfo); info != nil && !implementation(info) {
		return true, invalidParams(id, "params._meta "+metaClientInfo+" must be an object with name and version strings")
	}
	return true, nil
}

// implementation reports whether m is an Implementation object: name and
// version, both strings, are its required members.
func implementation(m *member) bool {
	if m.kind() != kindObject {
		return false
	}
	ms := items(m.val)
	name, version := last(ms, "name"), last(ms, "version")
	return name != nil && name.kind() == kindString && version != nil && version.kind() == kindString
}

func invalidParams(id []byte, why string) []byte {
	return errorReply(id, wire.CodeInvalidParams, msgInvalidParams, why)
}

// mcpCall answers the MCP methods (ok is false for any other method). In a
// modern request every result carries "resultType":"complete" (the
// 2026-07-28 Result requires it), and the tool list its cache hints.
// Params must be an object when present, with _meta an object.
func (s *Server) mcpCall(id []byte, method string, params *member, modern bool) (reply []byte, ok bool) {
	switch method {
	case "initialize", "ping", "server/discover", "tools/list", "tools/call":
	default:
		return nil, false
	}
	var ms []member
	if params != nil {
		if params.kind() != kindObject {
			return invalidParams(id, "MCP params must be an object"), true
		}
		ms = items(params.val)
		if meta := last(ms, "_meta"); meta != nil && meta.kind() != kindObject {
			return invalidParams(id, "params._meta must be an object"), true
		}
	}
	var result []byte
	why := ""
	switch method {
	case "initialize":
		result, why = initialize(params, ms)
	case "ping":
		result = []byte("{}")
	case "server/discover":
		return wire.AppendResult(nil, id, []byte(discoverResult)), true
	case "tools/list":
		result, why = toolsList(ms, modern)
	case "tools/call":
		result, why = s.toolsCall(params, ms)
	}
	if why != "" {
		return invalidParams(id, why), true
	}
	return wire.AppendResult(nil, id, complete(modern, result)), true
}

// initialize answers a legacy client's initialize with the revision it
// asked for when the server speaks it, else the newest legacy one (the
// client then decides whether to go on). The params must be
// InitializeRequestParams: protocolVersion a string, capabilities an
// object, clientInfo an Implementation.
func initialize(params *member, ms []member) (result []byte, why string) {
	const usage = `initialize needs params {"protocolVersion": string, "capabilities": object, "clientInfo": {"name", "version"}}`
	if params == nil {
		return nil, usage
	}
	want, caps, info := last(ms, "protocolVersion"), last(ms, "capabilities"), last(ms, "clientInfo")
	switch {
	case want == nil || want.kind() != kindString:
		return nil, usage + "; protocolVersion is missing or not a string"
	case caps == nil || caps.kind() != kindObject:
		return nil, usage + "; capabilities is missing or not an object"
	case info == nil || !implementation(info):
		return nil, usage + "; clientInfo is missing or not an Implementation"
	}
	version := mcpLegacy
	for _, v := range mcpInitializeVersions {
		if unquote(want.val) == v {
			version = v
		}
	}
	result = append([]byte(`{"protocolVersion":"`), version...)
	return append(result, `","capabilities":{"tools":{}},"serverInfo":`+serverInfo+`}`...), ""
}

// toolsList answers tools/list: every tool on one page, so any cursor is
// unknown (-32602, as the spec has an invalid cursor answered).
func toolsList(ms []member, modern bool) (result []byte, why string) {
	if cursor := last(ms, "cursor"); cursor != nil {
		return nil, "unknown cursor " + string(cursor.val) + ": the list has one page"
	}
	result = append([]byte(`{"tools":`), toolsDoc...)
	if modern {
		result = append(result, `,"cacheScope":"public","ttlMs":0`...)
	}
	return append(result, '}'), ""
}

// complete adds "resultType":"complete" to a result object of a modern
// request (obj is left as it is).
func complete(modern bool, obj []byte) []byte {
	if !modern {
		return obj
	}
	out := append([]byte(nil), obj[:len(obj)-1]...)
	if len(out) > 1 {
		out = append(out, ',')
	}
	return append(out, `"resultType":"complete"}`...)
}
