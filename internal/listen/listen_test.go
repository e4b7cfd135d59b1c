package listen

import (
	"strings"
	"testing"
)

func TestLocal(t *testing.T) {
	tests := []struct {
		addr    string
		anyHost bool
		want    string // in the error; "" = accepted
	}{
		{"127.0.0.1:0", false, ""},
		{"localhost:0", false, ""},
		{"LOCALHOST:0", false, ""},
		{"127.0.0.2:0", false, ""},
		{"[::1]:0", false, ""},
		{":0", false, "no host means every interface"},
		{"0.0.0.0:0", false, `host "0.0.0.0" is not a loopback address`},
		{"192.0.2.1:9464", false, `host "192.0.2.1" is not a loopback address`},
		{"example.com:9464", false, `host "example.com" is not a loopback address`},
		{"127.0.0.1", false, "want host:port"},
		// Allowed, so it gets past the check, and fails to listen: no
		// machine has an address of TEST-NET-1 (RFC 5737).
		{"192.0.2.1:0", true, "192.0.2.1:0: bind"},
		{"127.0.0.1:no-such-port", false, `address "127.0.0.1:no-such-port"`},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ln, err := Local(tt.addr, tt.anyHost)
			if tt.want == "" {
				if err != nil {
					if strings.Contains(tt.addr, "::1") && strings.Contains(err.Error(), "cannot assign") {
						t.Skip("no IPv6 loopback on this machine")
					}
					t.Fatalf("refused: %v", err)
				}
				ln.Close()
				return
			}
			if err == nil {
				ln.Close()
				t.Fatalf("accepted %s", tt.addr)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), `address "`+tt.addr+`"`) {
				t.Errorf("error %q; want it to begin with the address and contain %q", err, tt.want)
			}
		})
	}
}
