package testsrv

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseFraming(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Framing
		ok   bool
	}{
		{"newline", FramingNewline, true},
		{"ndjson", FramingNewline, true},
		{"content-length", FramingContentLength, true},
		{"lsp", FramingContentLength, true},
		{"", 0, false},
		{"Content-Length", 0, false},
		{"websocket", 0, false},
	} {
		got, err := ParseFraming(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseFraming(%q) = %v, %v", tc.in, got, err)
		}
		if err != nil && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "newline, content-length")) {
			t.Errorf("ParseFraming(%q) error %q", tc.in, err)
		}
		if err == nil && got.String() != map[string]string{"ndjson": "newline", "lsp": "content-length"}[tc.in] && got.String() != tc.in {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
	if s := Framing(9).String(); s != "Framing(9)" {
		t.Errorf("String = %q", s)
	}
}

func TestServeRejectsFraming(t *testing.T) {
	s := newTestServer(t, Config{})
	ln := newPipeListener()
	defer ln.Close()
	for _, f := range []Framing{framingWS, 7} {
		if err := s.ServeStream(ln, f); !errors.Is(err, ErrConfig) {
			t.Errorf("ServeStream(%v) = %v", f, err)
		}
		if err := s.ServeStdio(strings.NewReader(""), &strings.Builder{}, f); !errors.Is(err, ErrConfig) {
			t.Errorf("ServeStdio(%v) = %v", f, err)
		}
	}
}

// clHead is a Content-Length header for a body of n bytes.
func clHead(n int) string { return "Content-Length: " + strconv.Itoa(n) + "\r\n\r\n" }

func parseErrData(data string) string { return errr("null", "-32700", "Parse error", `"`+data+`"`) }

// TestContentLengthFraming sends a good frame, the raw bytes of the case and
// another good frame, then half-closes. A framing error is answered and ends
// the connection: the frame after it is never read.
func TestContentLengthFraming(t *testing.T) {
	const maxFrame = 200
	big := req("9", "echo", `["`+strings.Repeat("x", 100_000)+`"]`)
	exact := req("8", "echo", `["`+strings.Repeat("y", maxFrame-len(req("8", "echo", `[""]`)))+`"]`)
	r5, ok5 := req("5", "eth_chainId", ""), res("5", `"0x539"`)
	tooLarge := bad("null", `"request too large"`)
	for _, tc := range []struct {
		name, raw string
		want      []string // between the replies to frames 1 and 2; nil = closed after
		closes    bool
	}{
		{"plain", clHead(len(r5)) + r5, []string{ok5}, false},
		{"content-type", "Content-Length: " + strconv.Itoa(len(r5)) + "\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + r5, []string{ok5}, false},
		{"type first, name case", "content-type: x\r\ncontent-LENGTH:" + strconv.Itoa(len(r5)) + "  \r\n\r\n" + r5, []string{ok5}, false},
		{"bare newlines", "Content-Length: " + strconv.Itoa(len(r5)) + "\n\n" + r5, []string{ok5}, false},
		{"same length twice", "Content-Length: " + strconv.Itoa(len(r5)) + "\r\n" + clHead(len(r5)) + r5, []string{ok5}, false},
		{"unknown header ignored", "X-Trace: 1\r\n" + clHead(len(r5)) + r5, []string{ok5}, false},
		{"empty body", clHead(0), []string{parseErr}, false},
		{"whitespace body", clHead(2) + "\r\n", []string{parseErr}, false},
		{"body with newline", clHead(len(r5)+1) + r5 + "\n", []string{ok5}, false},
		{"exactly max", clHead(len(exact)) + exact, []string{res("8", exact[strings.Index(exact, `"params":`)+9:len(exact)-1])}, false},
		{"no length", "Content-Type: x\r\n\r\n" + r5, []string{parseErrData("no Content-Length header")}, true},
		{"blank line first", "\r\n" + clHead(len(r5)) + r5, []string{parseErrData("no Content-Length header")}, true},
		{"ndjson on lsp port", r5 + "\n", []string{parseErrData("malformed header line")}, true},
		{"no colon", "Content-Length 5\r\n\r\n", []string{parseErrData("malformed header line")}, true},
		{"space before colon", "Content-Length : 5\r\n\r\n", []string{parseErrData("malformed header line")}, true},
		{"not a number", "Content-Length: 5x\r\n\r\n", []string{parseErrData("Content-Length is not a decimal number")}, true},
		{"negative", "Content-Length: -5\r\n\r\n", []string{parseErrData("Content-Length is not a decimal number")}, true},
		{"plus sign", "Content-Length: +5\r\n\r\n", []string{parseErrData("Content-Length is not a decimal number")}, true},
		{"empty value", "Content-Length:\r\n\r\n", []string{parseErrData("Content-Length is not a decimal number")}, true},
		{"two lengths", "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", []string{parseErrData("two different Content-Length headers")}, true},
		{"header too long", "Content-Type: " + strings.Repeat("t", 9000) + "\r\n" + clHead(len(r5)) + r5, []string{parseErrData("header block over 8192 bytes")}, true},
		{"line too long", "Content-Type: " + strings.Repeat("t", 40000), []string{parseErrData("header block over 8192 bytes")}, true},
		{"too large", clHead(maxFrame+1) + strings.Repeat(" ", maxFrame+1), []string{tooLarge}, true},
		{"too large, body never sent", clHead(1 << 40), []string{tooLarge}, true},
		{"length overflows int64", "Content-Length: 99999999999999999999999999\r\n\r\n", []string{tooLarge}, true},
		{"big over max", clHead(len(big)) + big, []string{tooLarge}, true},
	} {
		for _, tr := range transports {
			if tr.framing != FramingContentLength || tr.name == "tcp" {
				continue
			}
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				t.Parallel()
				s := newTestServer(t, Config{MaxFrame: maxFrame})
				c := tr.dial(t, s).(*streamClient)
				c.send(r7)
				c.raw(tc.raw)
				c.send(req("2", "eth_chainId", ""))
				want := append([]string{ok7}, tc.want...)
				if !tc.closes {
					want = append(want, res("2", `"0x539"`))
				}
				if got := c.rest(); !slices.Equal(got, want) {
					t.Errorf("got  %q\nwant %q", got, want)
				}
			})
		}
	}
}

// TestContentLengthTruncated: the stream ends inside a header or a body.
func TestContentLengthTruncated(t *testing.T) {
	for _, tc := range []struct{ raw, where string }{{"Content-Length: 5\r\n", "header"}, {"Content-Len", "header"}, {clHead(50) + "{", "frame"}} {
		raw, where := tc.raw, tc.where
		for _, tr := range transports {
			if tr.framing != FramingContentLength || tr.name == "tcp" {
				continue
			}
			t.Run(strconv.Quote(raw)+"/"+tr.name, func(t *testing.T) {
				s := newTestServer(t, Config{})
				c := tr.dial(t, s).(*streamClient)
				c.send(r7)
				c.raw(raw)
				want := []string{ok7, parseErrData("stream ended inside a " + where)}
				if got := c.rest(); !slices.Equal(got, want) {
					t.Errorf("got  %q\nwant %q", got, want)
				}
			})
		}
	}
}

// TestContentLengthLongFrames: bodies larger than the read buffer, pipelined.
func TestContentLengthLongFrames(t *testing.T) {
	big := `"` + strings.Repeat("x", 100_000) + `"`
	in := req("1", "echo", "["+big+"]")
	s := newTestServer(t, Config{})
	c := dialSocket("tcp", FramingContentLength)(t, s)
	c.send(in, r7, in)
	want := []string{res("1", "["+big+"]"), ok7, res("1", "["+big+"]")}
	if got := c.rest(); !slices.Equal(got, want) {
		t.Errorf("got %d replies (first %.80q)", len(got), got)
	}
}

// TestContentLengthFaultFraming: the junk faults still come framed.
func TestContentLengthFaultFraming(t *testing.T) {
	for _, f := range []Fault{FaultGarbage, FaultInvalidEnvelope, FaultDuplicate} {
		s := newTestServer(t, Config{Faults: []FaultSpec{{f, 1}}})
		c := dialSocket("unix", FramingContentLength)(t, s).(*streamClient)
		c.send(r7)
		_ = c.halfClose()
		var raw strings.Builder
		for l, err := c.r.ReadString('\n'); err == nil || l != ""; l, err = c.r.ReadString('\n') {
			raw.WriteString(l)
		}
		want := map[Fault]string{
			FaultGarbage:         clHead(len(garbageBody)) + garbageBody,
			FaultInvalidEnvelope: clHead(len(invalidEnvelope)) + invalidEnvelope,
			FaultDuplicate:       clHead(len(ok7)) + ok7 + clHead(len(ok7)) + ok7,
		}[f]
		if raw.String() != want {
			t.Errorf("%s: wire %q, want %q", f, raw.String(), want)
		}
		if got := s.Injected(); !maps.Equal(got, wantInjected(f, 1)) {
			t.Errorf("%s: Injected() = %v", f, got)
		}
	}
}
