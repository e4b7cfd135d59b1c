// Package discover writes scenario files from discovery documents: an
// OpenRPC document (FromOpenRPC) or the list results of an MCP server
// (FromMCP). The output is YAML a person would write and review: a
// comment saying where it came from, keys in the scenario format's order,
// 2-space indent, short values in flow style, one call per method or tool
// with a comment from its description.
//
// The YAML is built as a go.yaml.in/yaml/v3 node tree and encoded by the
// library, rather than written as text, so every scalar is quoted exactly
// when YAML needs it ("0x12", "yes", "null", ": ", leading "$" ...) and
// comments, flow and block styles are placed on nodes instead of strings.
// Literal keys that start with "$" are written "$$" as the scenario format
// requires; schemas under expect are written as they are.
package discover
