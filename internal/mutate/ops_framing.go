package mutate

import "strconv"

// Framing ops: they write Case.Wire, the exact stream bytes, because the lie
// is in the framing around the messages, not in any message.

func appendCLHeader(dst []byte, n int) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\r\n\r\n"...)
}

// clLie returns the header block that lies about a body of n bytes. Longer
// lengths leave a server waiting for bytes that never come: a correct
// server does wait, so the oracles must not call that a hang.
func clLie(c Chooser, n int) []byte {
	var h []byte
	num := func(v string) []byte { return append(append([]byte("Content-Length: "), v...), "\r\n\r\n"...) }
	switch c.Intn(8) {
	case 0: // shorter
		cuts := []int{1, n / 2, n}
		h = appendCLHeader(nil, max(0, n-cuts[c.Intn(len(cuts))]))
	case 1: // longer
		adds := []int{1, 2, 1000}
		h = appendCLHeader(nil, n+adds[c.Intn(len(adds))])
	case 2: // longer than any buffer or integer
		huge := []string{"2147483648", "4294967296", "9223372036854775807", "9223372036854775808", "99999999999999999999"}
		h = num(huge[c.Intn(len(huge))])
	case 3: // negative
		h = num("-" + strconv.Itoa([]int{1, n}[c.Intn(2)]))
	case 4: // not a number
		bad := []string{"", "abc", "0x10", "+" + strconv.Itoa(n), strconv.Itoa(n) + ".0", "1e2", strconv.Itoa(n) + " " + strconv.Itoa(n)}
		h = num(bad[c.Intn(len(bad))])
	case 5: // missing
		missing := []string{"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n", "\r\n", ""}
		h = []byte(missing[c.Intn(len(missing))])
	case 6: // duplicated, agreeing or not
		second := []int{n, n + 5, max(0, n-5), 0}
		h = append([]byte("Content-Length: "), strconv.Itoa(n)...)
		h = append(h, "\r\nContent-Length: "...)
		h = strconv.AppendInt(h, int64(second[c.Intn(len(second))]), 10)
		h = append(h, "\r\n\r\n"...)
	default: // a header spelled the way some parsers reject
		odd := []string{"content-length: %d\r\n\r\n", "Content-Length:%d\r\n\r\n", "Content-Length: %d\n\n", "Content-Length : %d\r\n\r\n", "Content-Length: %d\r\n"}
		tmpl := odd[c.Intn(len(odd))]
		h = []byte(replaceVerb(tmpl, strconv.Itoa(n)))
	}
	return h
}

func replaceVerb(tmpl, v string) string {
	for i := 0; i+1 < len(tmpl); i++ {
		if tmpl[i] == '%' && tmpl[i+1] == 'd' {
			return tmpl[:i] + v + tmpl[i+2:]
		}
	}
	return tmpl
}

func contentLengthLie(c Chooser, in Case, env *Env) (Case, bool) {
	if env.Framing != FramingContentLength || len(in.Frames) == 0 {
		return Case{}, false
	}
	lie := c.Intn(len(in.Frames))
	var w []byte
	for i, f := range in.Frames {
		if i == lie {
			w = append(w, clLie(c, len(f))...)
		} else {
			w = appendCLHeader(w, len(f))
		}
		w = append(w, f...)
	}
	return Case{Frames: in.Frames, Wire: w}, true
}

var newlines = lits("\n", "\r\n", "\n\n", "\r")

// ndjsonNewline puts a line break inside one message: between tokens (a
// reader that splits on lines sees two broken messages; a streaming decoder
// sees one) or inside a string (broken either way).
func ndjsonNewline(c Chooser, in Case, env *Env) (Case, bool) {
	if env.Framing != FramingNewline || len(in.Frames) == 0 {
		return Case{}, false
	}
	k := c.Intn(len(in.Frames))
	f := in.Frames[k]
	at, ok := structuralPoint(c, f)
	if t, found := pickToken(c, f, isString); found && (!ok || c.Intn(2) == 0) {
		at, ok = stringInterior(c, f, t), true
	}
	if !ok {
		return Case{}, false
	}
	nl := newlines[c.Intn(len(newlines))]
	var w []byte
	for i, fr := range in.Frames {
		if i == k {
			w = append(w, fr[:at]...)
			w = append(w, nl...)
			w = append(w, fr[at:]...)
		} else {
			w = append(w, fr...)
		}
		w = append(w, '\n')
	}
	return Case{Frames: in.Frames, Wire: w}, true
}
