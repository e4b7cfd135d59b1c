package mutate

// Lexical ops: byte-level breakage of the JSON text. They work on any frame,
// parseable or not, so they also apply after another op broke the frame.

func truncateStructural(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	t, ok := pickToken(c, f, func(t token) bool {
		return t.kind == tokOpen || t.kind == tokColon || t.kind == tokComma || isString(t)
	})
	if !ok {
		return nil, false
	}
	cut := t.end
	if t.kind == tokString {
		cut = t.start + 1 + c.Intn(t.end-t.start-1) // after the opening quote, before the closing one
	}
	if cut >= len(f) {
		return nil, false
	}
	return clone(f[:cut]), true
}

// invalidUTF8Seqs: a stray continuation byte, bytes that never occur, overlong
// encodings, UTF-8-encoded surrogates, a code point above U+10FFFF, and
// sequences cut short.
var invalidUTF8Seqs = [][]byte{
	{0x80}, {0xBF}, {0xFF}, {0xFE}, {0xC0, 0x80}, {0xC1, 0xBF}, {0xE0, 0x80, 0x80},
	{0xED, 0xA0, 0x80}, {0xED, 0xBF, 0xBF}, {0xF4, 0x90, 0x80, 0x80},
	{0xF8, 0x88, 0x80, 0x80, 0x80}, {0xE2, 0x82}, {0xC3}, {0xF0, 0x9F, 0x98},
}

func invalidUTF8(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	seq := invalidUTF8Seqs[c.Intn(len(invalidUTF8Seqs))]
	// Inside a string is where a decoder must deal with it; anywhere else a
	// parser should already stop, which is worth a try now and then.
	if c.Intn(4) > 0 {
		if t, ok := pickToken(c, f, isString); ok {
			return insert(f, stringInterior(c, f, t), seq), true
		}
	}
	return insert(f, c.Intn(len(f)+1), seq), true
}

var loneSurrogates = lits(`\ud800`, `\udbff`, `\udc00`, `\udfff`, `\uD800`, `\ud800\ud800`, `\udc00\ud800`, `\ud800\u0041`)

func loneSurrogate(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	t, ok := pickToken(c, f, isString)
	if !ok {
		return nil, false
	}
	return insert(f, stringInterior(c, f, t), loneSurrogates[c.Intn(len(loneSurrogates))]), true
}

// boms: UTF-8 (once, twice, before whitespace) and the UTF-16 marks a server
// may mistake for the encoding of the rest.
var boms = lits("\xEF\xBB\xBF", "\xEF\xBB\xBF\xEF\xBB\xBF", "\xEF\xBB\xBF ", "\xFE\xFF", "\xFF\xFE")

func bomPrefix(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	return insert(f, 0, boms[c.Intn(len(boms))]), true
}

func controlChar(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	t, ok := pickToken(c, f, isString)
	if !ok {
		return nil, false
	}
	ch := byte(c.Intn(0x20)) // U+0000..U+001F must be escaped in a JSON string
	return insert(f, stringInterior(c, f, t), []byte{ch}), true
}

var nonfiniteNumbers = lits("NaN", "Infinity", "-Infinity", "+Infinity", "nan", "inf", "-NaN",
	"+1", ".5", "01", "-01", "1.", "0x10", "1e", "-", "1_000", "0.5e+-1")

func nonfiniteNumber(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	return replaceValueToken(c, f, nonfiniteNumbers[c.Intn(len(nonfiniteNumbers))])
}

// replaceValueToken replaces a value (number, literal, or a string that is
// not a member name) with text.
func replaceValueToken(c Chooser, f []byte, text []byte) ([]byte, bool) {
	t, ok := pickToken(c, f, isValueToken)
	if !ok {
		return nil, false
	}
	return splice(f, t.start, t.end, text), true
}

var comments = lits("//c\n", "/* c */", "/**/", "/*", "//", "#c\n", "/* // */", "/*/")

func comment(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	at, ok := structuralPoint(c, f)
	if !ok {
		return nil, false
	}
	return insert(f, at, comments[c.Intn(len(comments))]), true
}

var trailingCommas = lits(",", ",,", ", ")

func trailingComma(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	t, ok := pickToken(c, f, func(t token) bool { return t.kind == tokClose })
	if !ok {
		return nil, false
	}
	return insert(f, t.start, trailingCommas[c.Intn(len(trailingCommas))]), true
}

// hugeNumbers: beyond float64 (1e400), beyond int64 and uint64, beyond 2^53
// (where float64 ids collide), negative zero, subnormal and underflowing
// values, absurd exponents, and a 400-digit integer.
var hugeNumbers = append(lits("1e400", "-1e400", "1E400", "1e-400", "-0", "-0.0", "0e0", "-0e-0",
	"123456789012345678901", "-123456789012345678901", "100000000000000000000000000000",
	"9223372036854775807", "9223372036854775808", "-9223372036854775809",
	"18446744073709551615", "18446744073709551616", "9007199254740993", "9007199254740993.0",
	"1.7976931348623157e309", "4.9e-325", "0.30000000000000000000000000000000001",
	"1e999999999", "1e-999999999", "1e+99999999999999999999"),
	append([]byte("1"), repeatBytes('0', 400)...))

func hugeNumber(c Chooser, f []byte, _ *Env) ([]byte, bool) {
	return replaceValueToken(c, f, hugeNumbers[c.Intn(len(hugeNumbers))])
}

// longLengths sit around the buffer sizes readers use (4 KiB pages, 64 KiB
// bufio.Scanner tokens) and at 1 MiB; every one is clamped to MaxFrame.
var longLengths = []int{1024, 4095, 4096, 4097, 65535, 65536, 65537, 1 << 20}

// longUnits fill a long string: plain ASCII, escapes (decoded length
// differs from the raw one), and multibyte UTF-8.
var longUnits = lits("a", `\u0041`, `\\`, `\"`, "\u00e9", "\U0001F600", `\n`)

func longString(c Chooser, f []byte, env *Env) ([]byte, bool) {
	t, ok := pickToken(c, f, func(t token) bool { return isString(t) && !t.key })
	if !ok {
		return nil, false
	}
	unit := longUnits[c.Intn(len(longUnits))]
	room := env.maxFrame() - (len(f) - (t.end - t.start)) - 2
	n, ok := pickSize(c, longLengths, 1, room, 64)
	if !ok {
		return nil, false
	}
	s := make([]byte, 0, n+2)
	s = append(s, '"')
	s = appendRepeat(s, unit, n/len(unit))
	s = append(s, '"')
	return splice(f, t.start, t.end, s), true
}

var lineFill = []byte{' ', '\t'}

// longLine makes one very long line out of whitespace between tokens: the
// JSON stays valid, so only a reader's line or buffer limit can object.
func longLine(c Chooser, f []byte, env *Env) ([]byte, bool) {
	at, ok := structuralPoint(c, f)
	if !ok {
		at = len(f)
	}
	n, ok := pickSize(c, longLengths, 1, env.maxFrame()-len(f), 64)
	if !ok {
		return nil, false
	}
	return insert(f, at, repeatBytes(lineFill[c.Intn(len(lineFill))], n)), true
}
