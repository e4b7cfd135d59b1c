package wire

// Error codes defined by JSON-RPC 2.0. The spec reserves -32768..-32000 for
// itself: the five named codes, -32099..-32000 for implementation-defined
// server errors, and the rest for future use. Everything outside that block
// belongs to the application, which is why reports bucket codes by CodeName
// rather than trusting a server's own labels.
const (
	CodeParseError     = -32700 // the server could not parse the frame as JSON
	CodeInvalidRequest = -32600 // valid JSON, but not a valid request object
	CodeMethodNotFound = -32601 // the method does not exist or is not available
	CodeInvalidParams  = -32602 // invalid method parameters
	CodeInternalError  = -32603 // internal JSON-RPC error
	CodeServerErrorMin = -32099 // implementation-defined server errors -32099..-32000
	CodeServerErrorMax = -32000 // upper end of the server error range
	CodeReservedMin    = -32768 // whole reserved block -32768..-32000
	CodeReservedMax    = -32000 // upper end of the reserved block
)

// CodeName returns "parse_error", "invalid_request", "method_not_found",
// "invalid_params", "internal_error", "server_error" (-32099..-32000),
// "reserved" (rest of -32768..-32000), or "application".
func CodeName(code int64) string {
	switch {
	case code == CodeParseError:
		return "parse_error"
	case code == CodeInvalidRequest:
		return "invalid_request"
	case code == CodeMethodNotFound:
		return "method_not_found"
	case code == CodeInvalidParams:
		return "invalid_params"
	case code == CodeInternalError:
		return "internal_error"
	case code >= CodeServerErrorMin && code <= CodeServerErrorMax:
		return "server_error"
	case code >= CodeReservedMin && code <= CodeReservedMax:
		return "reserved"
	}
	return "application"
}
