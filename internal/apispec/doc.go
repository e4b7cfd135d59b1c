// Package apispec is what rpcfuzz knows of a target's API: its methods (and
// an MCP server's tools, prompts and resources), the JSON Schema of each
// one's params and result, and whether a call may be repeated with the same
// answer. It reads OpenRPC documents (a file, or the result of
// rpc.discover), MCP list results (tools/list, prompts/list,
// resources/list), an LSP server's capabilities (the requests its
// InitializeResult announces, about the documents the client opened:
// FromLSP) and seeds given on the command line.
//
// It makes the frame of a call with given params (Method.Frame), and reads
// a frame back: which method it calls and the params it carries (API.Find).
// Params and results are checked with a full JSON Schema validator
// (santhosh-tekuri/jsonschema, draft 2020-12 unless a schema says
// otherwise, no file or network read), so a verdict on a frame is the
// validator's, whatever made the frame: the generator (internal/schemagen)
// only proposes values.
//
// A verdict on params is three-valued (Verdict): valid, invalid, or not
// judged. Params are not judged when a server could read them otherwise
// than the validator does: a member name written twice (a server may keep
// either value), a number with an exponent, written -0, with a fraction
// of zeros (2.0: an integer to JSON Schema, not to a typed decoder) or
// beyond float64's range, a string with a lone surrogate, nesting deeper
// than 64. The
// oracles built on a verdict (a valid call must succeed, an invalid one
// must be refused) then say nothing, rather than something a server could
// dispute.
package apispec
