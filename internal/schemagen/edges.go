package schemagen

import (
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Edge values, for ValidEdges. Each choice point of the generator (a
// number, a string, an array's length, an object's members, an enum member)
// asks edge() first: half the time it takes a value at an edge of what the
// schema allows instead of a plausible one. The hooks are no-ops, and draw
// nothing from the random source, when g.edges is false, so Valid and
// Invalid are unchanged.

const (
	smallArray     = 64        // edge arrays longer than this repeat a few generated items
	reuseItems     = 8         // the distinct items generated for such an array
	longArrayDepth = 2         // long arrays (1,001 and 5,000 items) only this close to the root
	longArrayBytes = 128 << 10 // the most bytes one repeated array adds
	longStrMin     = 1000      // a long string without maxLength: 1,000 to 4,096 characters
	longStrMax     = 4096
	extraMemberOdd = 4 // one object in this many gets a member with an edge name, when allowed
)

// edge reports whether this choice point takes an edge.
func (g *gen) edge() bool { return g.edges && g.r.IntN(2) == 0 }

// ---- numbers

var (
	smallEdges = rats("0", "-1", "1")
	fracEdges  = rats("0.5", "-0.5", "0.0000001", "-0.0000001", "1000000000000000.5", "-1000000000000000.5")
	upperEdges = rats("2147483647", "9007199254740992", "9007199254740993", "9223372036854775807", "18446744073709551616")
	lowerEdges = rats("-2147483648", "-9223372036854775808")
)

func rats(ss ...string) []*big.Rat {
	out := make([]*big.Rat, len(ss))
	for i, s := range ss {
		out[i], _ = new(big.Rat).SetString(s)
	}
	return out
}

// edgeNums lists the edge values of [lo, hi] (either may be nil) that are
// multiples of m (nil: any): the bounds (moved inwards to a multiple), 0, 1,
// -1, ±m, the small and large fractions when fractions is set, and the
// largest 32-, 53- and 64-bit integers on an open side. The values are
// shared: callers must not change them.
func edgeNums(lo, hi, m *big.Rat, fractions bool) []*big.Rat {
	var out []*big.Rat
	add := func(v *big.Rat) {
		if (lo != nil && v.Cmp(lo) < 0) || (hi != nil && v.Cmp(hi) > 0) {
			return
		}
		if m != nil && !new(big.Rat).Quo(v, m).IsInt() {
			return
		}
		for _, o := range out {
			if o.Cmp(v) == 0 {
				return
			}
		}
		out = append(out, v)
	}
	snap := func(v *big.Rat, round func(*big.Rat) *big.Int) *big.Rat {
		if m == nil {
			return v
		}
		return new(big.Rat).Mul(new(big.Rat).SetInt(round(new(big.Rat).Quo(v, m))), m)
	}
	if lo != nil {
		add(snap(lo, ceilRat))
	}
	if hi != nil {
		add(snap(hi, floorRat))
	}
	base := slices.Clone(smallEdges)
	if m != nil {
		base = append(base, m, new(big.Rat).Neg(m))
	}
	if fractions {
		base = append(base, fracEdges...)
	}
	if hi == nil {
		base = append(base, upperEdges...)
	}
	if lo == nil {
		base = append(base, lowerEdges...)
	}
	trunc := func(r *big.Rat) *big.Int { return new(big.Int).Quo(r.Num(), r.Denom()) }
	for _, v := range base {
		add(snap(v, trunc))
	}
	return out
}

func (g *gen) pickNum(list []*big.Rat) (any, bool) {
	if len(list) == 0 {
		return nil, false
	}
	return json.Number(decimal(list[g.r.IntN(len(list))])), true
}

// edgeInteger is an edge integer for w, or false for a plausible one.
func (g *gen) edgeInteger(w *object) (any, bool) {
	if !g.edge() {
		return nil, false
	}
	lo, hi, ok := bounds(w)
	m, hasM, err := multiple(w)
	if !ok || err != nil {
		return nil, false
	}
	step := big.NewRat(1, 1)
	if hasM { // integer multiples of p/q (lowest terms) are the multiples of p
		step.SetInt(new(big.Int).Abs(m.Num()))
	}
	return g.pickNum(edgeNums(intRat(lo), intRat(hi), step, false))
}

func intRat(n *big.Int) *big.Rat {
	if n == nil {
		return nil
	}
	return new(big.Rat).SetInt(n)
}

// edgeNumber is an edge number for w (an exclusive bound is moved inwards by
// 0.000001, as Valid does), or false for a plausible one.
func (g *gen) edgeNumber(w *object) (any, bool) {
	if !g.edge() {
		return nil, false
	}
	lo, hi, ok := ratBounds(w)
	m, _, err := multiple(w)
	if !ok || err != nil {
		return nil, false
	}
	return g.pickNum(edgeNums(lo, hi, m, true))
}

// plainFloat writes v without an exponent, and 0 for -0.
func plainFloat(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// plainNumber rewrites a JSON number without an exponent (1e3 is 1000,
// -0.0 is 0); false when the exponent is beyond maxExp.
func plainNumber(s string) (string, bool) {
	body, neg := strings.CutPrefix(s, "-")
	mant, expStr, hasExp := strings.Cut(strings.ToLower(body), "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expStr)
		if err != nil || e > maxExp || e < -maxExp {
			return s, false
		}
		exp = e
	}
	ip, fp, _ := strings.Cut(mant, ".")
	digits := ip + fp
	point := len(ip) + exp
	var whole, frac string
	switch {
	case point <= 0:
		whole, frac = "0", strings.Repeat("0", -point)+digits
	case point >= len(digits):
		whole = digits + strings.Repeat("0", point-len(digits))
	default:
		whole, frac = digits[:point], digits[point:]
	}
	whole = strings.TrimLeft(whole, "0")
	frac = strings.TrimRight(frac, "0")
	if whole == "" {
		whole = "0"
	}
	out := whole
	if frac != "" {
		out += "." + frac
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return out, true
}

// literal returns a value the schema gives (enum, const, examples, default)
// as generated output: unchanged for Valid; for ValidEdges a copy whose
// numbers have no exponent, or errUnsat when one cannot be written so.
func (g *gen) literal(v any) (any, error) {
	if !g.edges {
		return v, nil
	}
	p, ok := plainValue(v)
	if !ok {
		return nil, errUnsat
	}
	return p, nil
}

func plainValue(v any) (any, bool) {
	switch t := v.(type) {
	case json.Number:
		s, ok := plainNumber(string(t))
		return json.Number(s), ok
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			p, ok := plainValue(e)
			if !ok {
				return nil, false
			}
			out[i] = p
		}
		return out, true
	case *object:
		o := newObject()
		for _, k := range t.keys {
			p, ok := plainValue(t.vals[k])
			if !ok {
				return nil, false
			}
			o.set(k, p)
		}
		return o, true
	}
	return v, true
}

// enumIndex picks a member of an enum of n: uniformly for Valid; for
// ValidEdges the first or the last half the time.
func (g *gen) enumIndex(n int) int {
	if g.edge() {
		if g.r.IntN(2) == 0 {
			return 0
		}
		return n - 1
	}
	return g.r.IntN(n)
}

// edgeAny is an edge value for a schema that accepts anything.
func (g *gen) edgeAny() (any, bool) {
	if !g.edge() {
		return nil, false
	}
	switch g.r.IntN(5) {
	case 0:
		return g.pickNum(edgeNums(nil, nil, nil, true))
	case 1:
		return g.edgeText(span{})
	case 2:
		return []any{}, true
	case 3:
		return newObject(), true
	}
	return nil, true
}

// ---- arrays and objects

// edgeCount chooses an edge length for an array, or keeps n: empty, minItems,
// maxItems (up to maxCount), and, without maxItems near the root, 1,001 or
// 5,000. long says the items past the tuple are a few generated ones
// repeated (see repeatItems). Items past the tuple are not added where
// items is false, or absent under an unevaluatedItems the checker does not
// check.
func (g *gen) edgeCount(w *object, n int64, prefix int, rest any, depth int) (int64, bool) {
	if !g.edges || depth > softDepth || !g.edge() {
		return n, false
	}
	lo, _ := count(w, "minItems")
	hi, hasHi := count(w, "maxItems")
	u, _ := w.get("uniqueItems")
	unique := u == true
	closed := rest == false
	if ue, ok := w.get("unevaluatedItems"); ok && ue != true {
		items, _ := w.get("items")
		more, _ := w.get("additionalItems")
		closed = closed || (!isSchema(items) && !isSchema(more))
	}
	var cands []int64
	add := func(k int64) {
		switch {
		case k < lo, hasHi && k > hi, closed && k > int64(prefix),
			unique && k > smallArray && k != lo, slices.Contains(cands, k):
			return
		}
		cands = append(cands, k)
	}
	add(0)
	add(lo)
	if hasHi && hi <= maxCount {
		add(hi)
	}
	if !hasHi && depth <= longArrayDepth {
		add(1001)
		add(5000)
	}
	if len(cands) == 0 {
		return n, false
	}
	k := cands[g.r.IntN(len(cands))]
	return k, k > smallArray && !unique && k > int64(prefix+reuseItems)
}

// repeatItems fills an array up to n items by repeating the items generated
// after the tuple's p, so a long array costs a few items' work. It stops
// earlier (never below lo) when the array would outgrow its share of the
// size or checker budgets, repeating only the smallest item when that comes
// closer to n.
func (g *gen) repeatItems(out []any, p int, n, lo int64, depth int) []any {
	tail := out[p:]
	if len(tail) == 0 {
		return out
	}
	size, small := 0, 0
	sizes := make([]int, len(tail))
	for i, e := range tail {
		sizes[i] = jsonLen(e) + 1
		size += sizes[i]
		if sizes[i] < sizes[small] {
			small = i
		}
	}
	per := int64(size/len(tail) + 1)
	// the array is checked again by each valid above it, depth+1 times; a
	// repeated item costs a step each time (the checker's memo)
	bytes := min(longArrayBytes, (sizeBudget/2-int64(g.size))/2)
	checkRoom := (checkBudget/32 - int64(g.c.steps)) / int64(depth+2)
	room := min(bytes/per, checkRoom)
	if r := min(bytes/int64(sizes[small]), checkRoom); int64(p)+room < n && r > room {
		// repeating the smallest item alone comes closer to n
		tail, per, room = tail[small:small+1], int64(sizes[small]), r
	}
	n = max(min(n, int64(p)+room), lo)
	if n < int64(len(out)) {
		return out[:n]
	}
	start := int64(len(out))
	for i := start; i < n; i++ {
		out = append(out, tail[(i-int64(p))%int64(len(tail))])
	}
	g.size += int(per * (n - start))
	return out
}

// memoMax bounds the checker's memo.
const memoMax = 1 << 16

// memoKey names a schema and a value: an array or object by identity, a
// number or a short string by value. ValidEdges repeats items (repeatItems)
// and checks each value again at every level above it; the checker
// remembers which values it found valid so a repeated item costs one
// look-up. Identity is safe there because the generator never changes a
// value once it has been checked (Invalid does, so the memo is for
// ValidEdges only); an array is named by its first element's address and
// its length.
type memoKey struct {
	s    *object
	arr  *any
	n    int
	obj  *object
	kind byte // 'a' array, 'o' object, 'n' number, 's' string
	text string
}

func memoKeyOf(s *object, v any) (memoKey, bool) {
	switch t := v.(type) {
	case []any:
		if len(t) == 0 {
			return memoKey{s: s, kind: 'a'}, true
		}
		return memoKey{s: s, arr: &t[0], n: len(t), kind: 'a'}, true
	case *object:
		return memoKey{s: s, obj: t, kind: 'o'}, true
	case json.Number:
		return memoKey{s: s, kind: 'n', text: string(t)}, len(t) <= 64
	case string:
		return memoKey{s: s, kind: 's', text: t}, len(t) <= 64
	}
	return memoKey{}, false
}

// jsonLen is the length of v encoded by appendJSON.
func jsonLen(v any) int {
	switch t := v.(type) {
	case nil:
		return 4
	case bool:
		if t {
			return 4
		}
		return 5
	case json.Number:
		return len(t)
	case string:
		return stringLen(t)
	case []any:
		n := 1 + max(len(t), 1)
		for _, e := range t {
			n += jsonLen(e)
		}
		return n
	case *object:
		n := 1 + max(2*len(t.keys), 1)
		for _, k := range t.keys {
			n += stringLen(k) + jsonLen(t.vals[k])
		}
		return n
	}
	return 0
}

// stringLen is the length of s quoted by appendString.
func stringLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20 || c == 0x7f:
			n += 5
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				n += 5 // \ufffd for one byte
			}
			i += size - 1
		}
	}
	return n
}

const (
	plausibleMembers = iota
	requiredMembers
	allMembers
)

// memberEdge chooses which optional members an object gets: as Valid does,
// none (only the required ones), or all.
func (g *gen) memberEdge(depth int) int {
	if !g.edges || depth > softDepth || !g.edge() {
		return plausibleMembers
	}
	return requiredMembers + g.r.IntN(2)
}

// edgeNames are the names of extra members.
var edgeNames = []string{"", "__proto__", "constructor", strings.Repeat("k", 1024), "ключ", "🔑", "名前", "a.b", "a/b~0", "$ref", " ", "null"}

// edgeMember is, now and then, the name of an extra member with an edge
// name, for an object whose additionalProperties allow one (and that has no
// unevaluatedProperties, which the checker does not check).
func (g *gen) edgeMember(w *object, ap any, chosen map[string]bool, full bool, depth int) (string, bool) {
	if !g.edges || ap == false || full || depth > softDepth || g.r.IntN(extraMemberOdd) != 0 {
		return "", false
	}
	if ue, ok := w.get("unevaluatedProperties"); ok && ue != true {
		return "", false
	}
	k := edgeNames[g.r.IntN(len(edgeNames))]
	return k, !chosen[k]
}

// ---- strings

// span is a range of string lengths in runes; hasHi false means no upper
// bound.
type span struct {
	lo, hi int64
	hasHi  bool
}

func (s span) fits(str string) bool {
	n := int64(utf8.RuneCountInString(str))
	return n >= s.lo && (!s.hasHi || n <= s.hi)
}

// formatEdges are values at the edges of the formats the generator writes.
var formatEdges = map[string][]string{
	"date-time": {"1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
		"2024-02-29T12:00:00+14:00", "2000-01-01T00:00:00-12:00", "2016-12-31T23:59:60Z"},
	"date": {"1970-01-01", "0001-01-01", "9999-12-31", "2024-02-29"},
	"time": {"00:00:00Z", "23:59:59.999999Z", "12:00:00+14:00", "12:00:00-12:00", "23:59:60Z"},
	"uuid": {"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
		"FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF"},
	"email": {"a@b.co", "first.last+tag@example.com", strings.Repeat("x", 64) + "@example.com",
		"user@[192.0.2.1]"},
	"uri": {"https://example.com", "https://user:pass@example.com:65535/a/b?q=1&r=%20#frag",
		"urn:isbn:0451450523", "https://[2001:db8::1]/", "mailto:a@example.com"},
	"uri-reference": {"", "#", "?q=1", "//example.com", "../a/b", "https://example.com/%C3%A9"},
	"hostname":      {"a", "localhost", strings.Repeat("a", 63) + ".example.com", "xn--bcher-kva.example", "a-b.c-d.e"},
	"ipv4":          {"0.0.0.0", "255.255.255.255", "127.0.0.1"},
	"ipv6":          {"::", "::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::ffff:192.0.2.1", "fe80::1"},
}

// edgeStr is an edge string for w, or false for a plausible one: for a
// pattern, a short or a long match; for a known format, an edge of the
// format; otherwise one of edgeText's.
func (g *gen) edgeStr(w *object, lo, hi int64, hasHi bool) (string, bool) {
	if !g.edge() {
		return "", false
	}
	sp := span{lo, hi, hasHi}
	if p, ok := str(w, "pattern"); ok {
		reps, high := 0, false
		if g.r.IntN(2) == 0 {
			reps, high = 32, true
		}
		s, err := g.fromPattern(p, reps, high)
		return s, err == nil && sp.fits(s)
	}
	if f, ok := str(w, "format"); ok && formats[f] != nil {
		var fit []string
		for _, s := range formatEdges[f] {
			if sp.fits(s) {
				fit = append(fit, s)
			}
		}
		if len(fit) == 0 {
			return "", false
		}
		return fit[g.r.IntN(len(fit))], true
	}
	return g.edgeText(sp)
}

// textEdges are the kinds of edge strings: the empty string, the shortest
// (minLength), a long one, unicode, whitespace, and a number or keyword.
var textEdges = []func(g *gen, sp span) (string, bool){
	func(g *gen, sp span) (string, bool) { return "", sp.lo == 0 },
	func(g *gen, sp span) (string, bool) { return g.filler(sp.lo), sp.lo > 0 },
	(*gen).longText,
	(*gen).unicodeText,
	(*gen).blankText,
	func(g *gen, sp span) (string, bool) {
		var fit []string
		for _, s := range keywordStrings {
			if sp.fits(s) {
				fit = append(fit, s)
			}
		}
		if len(fit) == 0 {
			return "", false
		}
		return fit[g.r.IntN(len(fit))], true
	},
}

var (
	// unicodeKinds are the kinds of text in a unicode edge string: non-ASCII
	// letters (always, first), then, each half the time and in a random
	// order, an emoji outside the BMP (or a ZWJ sequence), a combining mark,
	// right-to-left text, an invisible character, a control character
	// (written escaped in the JSON), a quote or a backslash.
	unicodeKinds = [][]string{
		{"é", "ß", "Ω", "日本語", "𝔘", "Ǆ"},
		{"😀", "👨\u200d👩\u200d👧", "🇺🇳"},
		{"e\u0301", "a\u0308", "\u0915\u094d"},
		{"שלום", "مرحبا", "\u200fא"},
		{"\u200b", "\ufeff", "\u2028", "\u00ad"},
		{"\u0000", "\n", "\t", "\r\n", "\u001f", "\u007f", "\u0000\u0001"},
		{"\"", "\\", "\\u0000"},
	}
	blankPieces    = []string{" ", "\t", "\n", "\r", "\u00a0", "\u2003", "\u3000"}
	keywordStrings = []string{"0", "-1", "1", "null", "true", "false", "NaN", "Infinity", "-0", "1e999",
		"0x1F", "undefined", "None", "[]", "{}", "1.0"}
)

// edgeText is an edge string of a length in sp: one kind of textEdges,
// starting at a random one and going on until one fits.
func (g *gen) edgeText(sp span) (string, bool) {
	start := g.r.IntN(len(textEdges))
	for i := range textEdges {
		if s, ok := textEdges[(start+i)%len(textEdges)](g, sp); ok {
			g.size += len(s)
			return s, true
		}
	}
	return "", false
}

// filler is a string of n letters: a random word repeated.
func (g *gen) filler(n int64) string {
	w := g.word(8, 8)
	return strings.Repeat(w, int(n)/len(w)+1)[:n]
}

// longText is maxLength letters when maxLength is at most 4,096, else 1,000
// to 4,096 (at least minLength, at most maxLength).
func (g *gen) longText(sp span) (string, bool) {
	n := sp.hi
	if !sp.hasHi || sp.hi > longStrMax {
		n = max(longStrMin+g.r.Int64N(longStrMax-longStrMin+1), sp.lo)
		if sp.hasHi {
			n = min(n, sp.hi)
		}
	}
	if n == 0 || g.size+int(n) > sizeBudget/2 {
		return "", false
	}
	return g.filler(n), true
}

// unicodeText joins a piece of each of some unicodeKinds, cut to maxLength
// and padded to minLength with é.
func (g *gen) unicodeText(sp span) (string, bool) {
	if (sp.hasHi && sp.hi == 0) || g.size+4*int(sp.lo) > sizeBudget/2 {
		return "", false
	}
	pick := func(list []string) string { return list[g.r.IntN(len(list))] }
	var b strings.Builder
	b.WriteString(pick(unicodeKinds[0]))
	for _, i := range g.r.Perm(len(unicodeKinds) - 1) {
		if g.r.IntN(2) == 0 {
			b.WriteString(pick(unicodeKinds[i+1]))
		}
	}
	return fitRunes(b.String(), sp, "é"), true
}

// blankText is 1 to 8 whitespace characters (at least minLength, at most
// maxLength).
func (g *gen) blankText(sp span) (string, bool) {
	n := max(sp.lo, 1) + g.r.Int64N(8)
	if sp.hasHi {
		n = min(n, sp.hi)
	}
	if n < max(sp.lo, 1) || g.size+4*int(n) > sizeBudget/2 {
		return "", false
	}
	var b strings.Builder
	for range n {
		b.WriteString(blankPieces[g.r.IntN(len(blankPieces))])
	}
	return b.String(), true
}

// fitRunes cuts s to at most sp.hi runes or pads it with pad (one rune) to
// at least sp.lo.
func fitRunes(s string, sp span, pad string) string {
	if sp.hasHi {
		s = truncateRunes(s, int(sp.hi))
	}
	if k := int(sp.lo) - utf8.RuneCountInString(s); k > 0 {
		s += strings.Repeat(pad, k)
	}
	return s
}
