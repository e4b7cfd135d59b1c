package fuzz

import (
	"strings"

	"github.com/rpcload/rpcload/internal/wire"
)

// What a crash or an error says, reduced to what stays the same from one
// occurrence to the next: the stderr line that names a crash, an exit
// status without its time, an error message's class for the feedback
// tuples.

// stderrKey is the line of a crashed child's stderr that names the crash
// (stderrPick) with what differs between crashes at one site blanked (see
// stderrNoise), so that they are one finding.
func stderrKey(lines []string) string {
	pick := stderrNoise.ReplaceAllStringFunc(stderrPick(lines), func(n string) string {
		switch {
		case strings.HasPrefix(n, "0x"):
			return "0xN"
		case n[0] == '"' || n[0] == '\'' || n[0] == '`':
			return "?"
		case stderrNumber.MatchString(n):
			return "N"
		case strings.ContainsRune(n, '/'):
			return "PATH"
		}
		return "POS"
	})
	pick = strings.Join(strings.Fields(pick), " ")
	if len(pick) > 200 {
		pick = pick[:200]
	}
	return pick
}

// stderrPick returns the line of a crashed child's stderr that names the
// crash: the first panic, fatal error, traceback or error line, else the
// last line.
func stderrPick(lines []string) string {
	pick := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		low := strings.ToLower(t)
		if crashLine(low) || strings.HasPrefix(low, "error:") {
			pick = t
			break
		}
		pick = t
	}
	return pick
}

// exitKind is an exit status without its time: "exit status 2".
func exitKind(status string) string {
	if i := strings.Index(status, " after "); i >= 0 {
		return status[:i]
	}
	return status
}

// messageClass hashes an error's message and (string) data the way the
// feedback tuple needs: digits and quoted text blanked, lower case, the
// first 48 bytes, so "invalid character '}' at offset 12" and "invalid
// character ']' at offset 3" are one class and "no method" another.
func messageClass(msg, data []byte) uint32 {
	// FNV-1a, as hash/fnv's New32a computes it, without its allocation;
	// the buffers are the stack's unless a message is long.
	const offset32, prime32 = 2166136261, 16777619
	h := uint32(offset32)
	var textBuf [256]byte
	var classBuf [64]byte
	for _, part := range [2][]byte{msg, data} {
		if len(part) < 2 || part[0] != '"' {
			continue
		}
		text := part[1 : len(part)-1]
		if part[len(part)-1] != '"' || !plainText(text) {
			var ok bool
			if text, ok = wire.Unquote(textBuf[:0], part); !ok {
				continue
			}
		}
		b := appendMessageClass(classBuf[:0], text)
		for _, c := range b {
			h = (h ^ uint32(c)) * prime32
		}
		h *= prime32 // the 0 byte after each part: h^0 is h
	}
	return h
}

// appendMessageClass appends the class of an error text to dst: quoted
// text as '?', each run of digits as 'N', lower case, at most 48 bytes.
func appendMessageClass(dst, text []byte) []byte {
	b, start := dst, len(dst)
	quote := byte(0)
	for _, c := range text {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			continue
		case c == '\'' || c == '"' || c == '`':
			quote = c
			b = append(b, '?')
			continue
		case c >= '0' && c <= '9':
			if len(b) > start && b[len(b)-1] == 'N' {
				continue
			}
			c = 'N'
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
		if len(b)-start == 48 {
			break
		}
	}
	return b
}

// plainText reports whether the contents of a JSON string are printable
// ASCII without quotes or escapes: then they are the text as they stand,
// and the string needs no decoding.
func plainText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
