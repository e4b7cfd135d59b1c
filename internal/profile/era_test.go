package profile

import (
	"testing"
)

func TestParseEra(t *testing.T) {
	for s, want := range map[string]Era{
		"": EraAuto, "auto": EraAuto, "modern": EraModern, "legacy": EraLegacy,
		"2026-07-28": EraModern, "2025-11-25": EraLegacy, "2025-06-18": EraLegacy20250618,
		"2025-03-26": EraLegacy20250326, "2024-11-05": EraLegacy20241105,
	} {
		if got, err := ParseEra(s); got != want || err != nil {
			t.Errorf("ParseEra(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
	for _, s := range []string{"Modern", "none", "2024-10-07", " legacy", "2027-01-01"} {
		if got, err := ParseEra(s); err == nil {
			t.Errorf("ParseEra(%q) = %s; want an error", s, got)
		}
	}
}

func TestEraMethods(t *testing.T) {
	tests := []struct {
		era             Era
		str, version    string
		modern, legacy_ bool
	}{
		{EraNone, "none", "", false, false},
		{EraAuto, "auto", "", false, false},
		{EraModern, "modern", "2026-07-28", true, false},
		{EraLegacy, "legacy", "2025-11-25", false, true},
		{EraLegacy20250618, "legacy", "2025-06-18", false, true},
		{EraLegacy20250326, "legacy", "2025-03-26", false, true},
		{EraLegacy20241105, "legacy", "2024-11-05", false, true},
		{numEras, "era(7)", "", false, false},
		{255, "era(255)", "", false, false},
	}
	for _, tc := range tests {
		if tc.era.String() != tc.str || tc.era.Version() != tc.version || tc.era.Modern() != tc.modern || tc.era.Legacy() != tc.legacy_ {
			t.Errorf("era %d: %q %q %v %v; want %q %q %v %v", uint8(tc.era), tc.era, tc.era.Version(),
				tc.era.Modern(), tc.era.Legacy(), tc.str, tc.version, tc.modern, tc.legacy_)
		}
	}
}

// discoverResult is a DiscoverResult as schema-2026-07-28.json defines it
// (TestSchemaFixtures validates it).
const discoverResult = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],` +
	`"capabilities":{"tools":{}},"cacheScope":"public","ttlMs":60000,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`

func errorReply(code string) string {
	return `{"jsonrpc":"2.0","id":1,"error":{"code":` + code + `,"message":"m"}}`
}

func TestDetectFromDiscover(t *testing.T) {
	tests := []struct {
		reply string
		want  Era
		ok    bool
	}{
		{discoverResult, EraModern, true},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, EraModern, true},
		{errorReply("-32020"), EraModern, true},
		{errorReply("-32021"), EraModern, true},
		{errorReply("-32022"), EraModern, true},
		{errorReply("-32023"), EraLegacy, true},
		{errorReply("-32601"), EraLegacy, true},
		{errorReply("-32600"), EraLegacy, true},
		{errorReply("-32602"), EraLegacy, true},
		{errorReply("-32002"), EraLegacy, true},
		{errorReply("-32000"), EraLegacy, true},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":"-32022","message":"m"}}`, EraLegacy, true},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, EraLegacy, true},
		{`{"jsonrpc":"2.0","id":1,"result":["2026-07-28"]}`, EraLegacy, true},
		// A DiscoverResult (or -32022) whose versions leave out the modern
		// one: go-sdk v1.8.0 over Streamable HTTP.
		{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{}}}`, EraLegacy, true},
		{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25", "2026-07-28"]}}`, EraModern, true},
		{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":"2025-11-25"}}`, EraModern, true},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`, EraLegacy, true},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m","data":{"supported":["2026-07-28"]}}}`, EraModern, true},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, EraNone, false},
		{`{"jsonrpc":"2.0","id":9,"method":"ping"}`, EraNone, false},
		{`[` + errorReply("-32601") + `]`, EraNone, false},
		{`Starting server...`, EraNone, false},
		{``, EraNone, false},
	}
	for _, tc := range tests {
		if got, ok := DetectFromDiscover(scan(tc.reply)); got != tc.want || ok != tc.ok {
			t.Errorf("DetectFromDiscover(%s) = %s, %v; want %s, %v", tc.reply, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDetectFromHTTP(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   Era
		ok     bool
	}{
		{200, discoverResult, EraModern, true},
		{200, errorReply("-32601"), EraLegacy, true},
		{200, errorReply("-32022"), EraModern, true},
		{200, ``, EraNone, false},
		{202, ``, EraNone, false},
		{400, errorReply("-32022"), EraModern, true},
		{400, errorReply("-32020"), EraModern, true},
		{400, errorReply("-32021"), EraModern, true},
		{400, errorReply("-32600"), EraLegacy, true},
		{400, errorReply("-32000"), EraLegacy, true}, // "Bad Request: No valid session ID provided"
		{400, `Bad Request`, EraLegacy, true},
		{400, ``, EraLegacy, true},
		{404, errorReply("-32601"), EraLegacy, true},
		{404, ``, EraLegacy, true},
		{405, ``, EraLegacy, true},
		{406, ``, EraLegacy, true},
		{415, ``, EraLegacy, true},
		{422, errorReply("-32022"), EraLegacy, true}, // modern errors come with 400 only
		{401, errorReply("-32022"), EraNone, false},
		{403, ``, EraNone, false},
		{407, ``, EraNone, false},
		{408, ``, EraNone, false},
		{429, ``, EraNone, false},
		{500, errorReply("-32603"), EraNone, false},
		{503, ``, EraNone, false},
		{302, ``, EraNone, false},
		{100, ``, EraNone, false},
		{0, ``, EraNone, false},
	}
	for _, tc := range tests {
		if got, ok := DetectFromHTTP(tc.status, []byte(tc.body)); got != tc.want || ok != tc.ok {
			t.Errorf("DetectFromHTTP(%d, %s) = %s, %v; want %s, %v", tc.status, tc.body, got, ok, tc.want, tc.ok)
		}
	}
}
