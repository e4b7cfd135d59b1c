package profile

import (
	"encoding/json"
	"fmt"
)

// MaxListPages bounds how many pages of an MCP list (tools/list,
// prompts/list, resources/list) are read: a server whose cursor never ends
// must not hold anything up.
const MaxListPages = 20

// ListAll reads an MCP list page by page, following nextCursor, and returns
// one result object holding every item under key ({"tools": [...]}). call
// sends the list request with the given params (nil for the first page,
// {"cursor": ...} after) and returns its result; an error reply is its
// error.
func ListAll(method, key string, call func(params []byte) (result []byte, err error)) ([]byte, error) {
	all := []json.RawMessage{} // [] rather than null when the server lists nothing
	var params []byte
	for range MaxListPages {
		res, err := call(params)
		if err != nil {
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, fmt.Errorf("%s result: %w", method, err)
		}
		var items []json.RawMessage
		if raw := page[key]; raw != nil && json.Unmarshal(raw, &items) != nil { // absent or null: an empty list
			return nil, fmt.Errorf("%s result: %q is not a list", method, key)
		}
		all = append(all, items...)
		var cursor string
		if json.Unmarshal(page["nextCursor"], &cursor) != nil || cursor == "" {
			break
		}
		params, _ = json.Marshal(map[string]string{"cursor": cursor})
	}
	return json.Marshal(map[string]any{key: all})
}
