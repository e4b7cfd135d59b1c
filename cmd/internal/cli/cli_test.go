package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rpcload/rpcload/internal/transport"
)

func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		code int
		err  error
		want int
	}{
		{ExitOK, nil, ExitOK},
		{ExitFindings, nil, ExitFindings},
		{ExitInterrupted, nil, ExitInterrupted},
		{ExitUnreachable, errors.New("refused"), ExitUnreachable},
		{ExitOK, errors.New("no code of its own"), ExitUsage},
		{ExitUnreachable, Usagef("bad flag"), ExitUsage},
		{ExitFindings, fmt.Errorf("wrapped: %w", Usagef("bad flag")), ExitUsage},
	} {
		if got := ExitCode(tt.code, tt.err); got != tt.want {
			t.Errorf("ExitCode(%d, %v) = %d, want %d", tt.code, tt.err, got, tt.want)
		}
	}
}

func TestSecretFlagsCheck(t *testing.T) {
	for _, tt := range []struct {
		names []string
		ok    bool
	}{
		{nil, true},
		{[]string{"X-Api-Key", "x_token"}, true},
		{[]string{""}, false},
		{[]string{"X-A", "X A"}, false},
		{[]string{"X-A:"}, false},
		{[]string{"X(A)"}, false},
		{[]string{"caf\u00e9"}, false},
	} {
		err := (&SecretFlags{Names: tt.names}).Check()
		var ue UsageError
		if (err == nil) != tt.ok || err != nil && !errors.As(err, &ue) {
			t.Errorf("Check(%q) = %v, want ok %v (a usage error otherwise)", tt.names, err, tt.ok)
		}
	}
}

// TestSchemeChecks: --header and the TLS flags are refused for targets
// they do not apply to, and not checked against a zero target.
func TestSchemeChecks(t *testing.T) {
	for _, tt := range []struct {
		target  transport.Target
		headers []string
		tls     []string
		want    string // "" : no error
	}{
		{transport.Target{Scheme: transport.HTTP, URL: "http://a/"}, []string{"X-A: 1"}, nil, ""},
		{transport.Target{Scheme: transport.WSS, URL: "wss://a/"}, []string{"X-A: 1"}, []string{"--insecure"}, ""},
		{transport.Target{}, []string{"X-A: 1"}, []string{"--insecure"}, ""},
		{transport.Target{Scheme: transport.TCP, URL: "tcp://a:1"}, []string{"X-A: 1"}, nil, "--header applies to http(s) and ws(s) targets only, not tcp"},
		{transport.Target{Scheme: transport.HTTP, URL: "http://a/"}, nil, []string{"--ca-cert", "x.pem"}, "--ca-cert applies to https:// and wss:// targets only, not http://a/"},
		{transport.Target{Scheme: transport.HTTP, URL: "http://a/"}, []string{"X-A: \x00"}, nil, `--header: header "X-A": value contains a control character`},
	} {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		var f TLSFlags
		f.Register(fs, "says so")
		if err := fs.Parse(tt.tls); err != nil {
			t.Fatal(err)
		}
		_, err := Headers(tt.headers, tt.target)
		if err == nil && len(tt.tls) > 0 {
			_, err = f.Load(fs, tt.target)
		}
		var ue UsageError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %q %q: %v", tt.target.URL, tt.headers, tt.tls, err)
		case tt.want != "" && (err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %q %q: %v, want a usage error with %q", tt.target.URL, tt.headers, tt.tls, err, tt.want)
		}
	}
}

func TestHeadersNone(t *testing.T) {
	if h, err := Headers(nil, transport.Target{Scheme: transport.TCP}); h != nil || err != nil {
		t.Errorf("Headers(nil) = %v, %v; want nil, nil", h, err)
	}
}
