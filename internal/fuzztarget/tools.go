package fuzztarget

// The MCP tools, search and sum, where empty_string and long_array are
// planted. Their handlers validate the arguments against the tools'
// inputSchema (tools.json) first, so the bugs fire only on arguments that
// fit it: what an API-aware fuzzer makes from the schema.

import (
	_ "embed" // the tool list
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/rpcload/rpcload/internal/wire"
)

// toolsSource is the tools array of tools/list.
//
//go:embed tools.json
var toolsSource []byte

// toolsDoc is toolsSource compacted once.
var toolsDoc = mustCompact("tools.json", toolsSource)

// Limits of the tools: the first two are in their schemas, the last two
// are where the planted bugs fire and how many hits search makes.
const (
	maxQueryLength = 200
	maxSearchLimit = 100
	maxSumValues   = 1000 // long_array fires past it
	searchHits     = 3
)

// toolsCall answers tools/call: params {"name": string, "arguments":
// object} (arguments optional, other members ignored). An unknown tool or
// params of another shape are a protocol error (why, for -32602);
// arguments that break the tool's inputSchema are a tool execution error,
// a result with isError.
func (s *Server) toolsCall(params *member, ms []member) (result []byte, why string) {
	const usage = `tools/call needs params {"name": string, "arguments": object}`
	if params == nil {
		return nil, usage
	}
	name := last(ms, "name")
	if name == nil || name.kind() != kindString {
		return nil, usage + "; name is missing or not a string"
	}
	var args []member
	if a := last(ms, "arguments"); a != nil {
		if a.kind() != kindObject {
			return nil, usage + "; arguments is not an object"
		}
		args = items(a.val)
	}
	switch tool := unquote(name.val); tool {
	case "search":
		return s.search(args), ""
	case "sum":
		return s.sum(args), ""
	default:
		return nil, "unknown tool " + strconv.Quote(tool)
	}
}

// search returns min(limit, 3) hits "QUERY #i", as structuredContent and
// as its JSON text (the spec asks for both). empty_string crashes it on
// an empty query.
func (s *Server) search(args []member) []byte {
	if name, ok := unknownMember(args, "query", "limit"); ok {
		return toolText("search: unknown argument "+strconv.Quote(name), true)
	}
	q := last(args, "query")
	switch {
	case q == nil:
		return toolText("search: query is required", true)
	case q.kind() != kindString:
		return toolText("search: query must be a string", true)
	}
	query := unquote(q.val)
	if utf8.RuneCountInString(query) > maxQueryLength {
		return toolText("search: query is longer than 200 characters", true)
	}
	hits := int64(searchHits)
	if l := last(args, "limit"); l != nil {
		limit, integer, inRange := schemaInt(l.val, 1, maxSearchLimit)
		switch {
		case !integer:
			return toolText("search: limit must be an integer", true)
		case !inRange:
			return toolText("search: limit must be between 1 and 100", true)
		}
		hits = min(hits, limit)
	}
	if query == "" && s.bugs&EmptyString != 0 {
		panic(Crash{EmptyString})
	}
	structured := []byte(`{"hits":[`)
	for i := range hits {
		if i > 0 {
			structured = append(structured, ',')
		}
		structured = wire.AppendString(structured, query+" #"+strconv.FormatInt(i+1, 10))
	}
	structured = append(structured, "]}"...)
	out := append([]byte(`{"content":[{"type":"text","text":`), wire.AppendString(nil, string(structured))...)
	out = append(out, `}],"structuredContent":`...)
	out = append(out, structured...)
	return append(out, '}')
}

// sum returns the sum of values as text. long_array crashes it past 1000
// values.
func (s *Server) sum(args []member) []byte {
	if name, ok := unknownMember(args, "values"); ok {
		return toolText("sum: unknown argument "+strconv.Quote(name), true)
	}
	v := last(args, "values")
	switch {
	case v == nil:
		return toolText("sum: values is required", true)
	case v.kind() != kindArray:
		return toolText("sum: values must be an array of numbers", true)
	}
	values := items(v.val)
	for i := range values {
		if values[i].kind() != kindNumber {
			return toolText("sum: values["+strconv.Itoa(i)+"] must be a number", true)
		}
	}
	if len(values) > maxSumValues && s.bugs&LongArray != 0 {
		panic(Crash{LongArray})
	}
	return toolText(sumText(values), false)
}

// sumText adds numbers: exactly while every one is an integer literal and
// the sum fits int64, else in float64, whose +Inf, -Inf and NaN are
// written as such (the text is no JSON number).
func sumText(values []member) string {
	var acc int64
	exact := true
	for i := range values {
		x, err := strconv.ParseInt(string(values[i].val), 10, 64)
		r := acc + x
		if err != nil || (acc^r)&(x^r) < 0 {
			exact = false
			break
		}
		acc = r
	}
	if exact {
		return strconv.FormatInt(acc, 10)
	}
	var f float64
	for i := range values {
		x, _ := strconv.ParseFloat(string(values[i].val), 64) // ±Inf past float64, as the sum would be
		f += x
	}
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return string(wire.AppendFloat(nil, f, 64))
}

// toolText is a CallToolResult of one text block; isError marks a tool
// execution error (arguments the tool refuses), which the spec wants in a
// result the model can read rather than in a protocol error.
func toolText(text string, isError bool) []byte {
	out := append([]byte(`{"content":[{"type":"text","text":`), wire.AppendString(nil, text)...)
	out = append(out, "}]"...)
	if isError {
		out = append(out, `,"isError":true`...)
	}
	return append(out, '}')
}
