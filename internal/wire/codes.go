package wire

// Error codes defined by JSON-RPC 2.0. The spec reserves -32768..-32000 for
// itself: the five named codes, -32099..-32000 for implementation-defined
// server errors, and the rest for future use. Everything outside that block
// belongs to the application.
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
