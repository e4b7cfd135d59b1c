package wire

// Scan scans and validates exactly one frame (surrounding JSON whitespace is
// allowed) without allocating, and fills *m (resetting it first). It never
// panics on any input. Nesting is tracked iteratively (no recursion), so a
// frame nested 1,000,000 deep is simply ProblemInvalidJSON (too deep).
//
// See the package documentation for how frames are classified.
func Scan(frame []byte, m *Message) { scan(frame, m, true) }

// scan is Scan; with fast false it never takes the reply path (scanner.reply),
// so tests can hold the two paths to the same verdicts.
func scan(frame []byte, m *Message, fast bool) {
	*m = Message{}
	s := scanner{d: frame, fast: fast}
	i := SkipSpace(frame, 0)
	end := bad
	if i < len(frame) {
		switch frame[i] {
		case '{':
			end = s.envelope(i, m)
		case '[':
			end = s.batch(i, m)
		default:
			end = s.skip(i, 0)
			m.Problems |= ProblemNotObject
		}
	}
	if end < 0 || SkipSpace(frame, end) != len(frame) {
		*m = Message{Kind: KindInvalid, Problems: ProblemInvalidJSON}
		return
	}
	if s.flags&strBadUTF8 != 0 {
		m.Problems |= ProblemInvalidUTF8
	}
}

// batch counts the elements of the top-level array at d[i]. Elements are
// only validated, not classified: the caller scans each one it cares about.
func (s *scanner) batch(i int, m *Message) int {
	d := s.d
	i = SkipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		m.Kind = KindBatch
		return i + 1
	}
	for {
		if i >= len(d) {
			return bad
		}
		if d[i] != '{' {
			m.Problems |= ProblemNotObject
		}
		if i = s.skip(i, 1); i < 0 {
			return bad
		}
		m.BatchLen++
		if i = SkipSpace(d, i); i >= len(d) {
			return bad
		}
		switch d[i] {
		case ',':
			i = SkipSpace(d, i+1)
		case ']':
			m.Kind = KindBatch
			return i + 1
		default:
			return bad
		}
	}
}

// Envelope member bits: one per recognised name so that repeats are found
// with a mask test instead of remembering names.
const (
	mJSONRPC uint8 = 1 << iota
	mID
	mMethod
	mParams
	mResult
	mError
	mExtra
)

// envelope scans the top-level object at d[i] and classifies it.
func (s *scanner) envelope(i int, m *Message) int {
	d := s.d
	if s.fast && len(d)-i > len(replyHead) && string(d[i:i+len(replyHead)]) == replyHead {
		return s.reply(i+len(replyHead), m)
	}
	i = SkipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		classify(0, m)
		return i + 1
	}
	return s.members(i, 0, m)
}

// replyHead is how nearly every reply (and every request rpcload writes)
// begins: the version, then the id, with no whitespace.
const replyHead = `{"jsonrpc":"2.0","id":`

// reply scans an envelope that began with replyHead, from the id's value
// at d[i]. For the member order almost every server writes (then "result"
// or "error", last) it skips the general loop's name matching, whitespace
// skips and classification: it scans each value exactly as member would,
// from the same state, and hands anything else (another member next,
// whitespace, members after the result) to the loop where it stands, with
// the members it has seen. So a frame gets the same verdict either way
// (FuzzScanReply holds the two paths to that), and only a fractional id's
// digits are ever scanned twice. It cut BenchmarkScanResult from 56 to
// 38 ns of CPU.
func (s *scanner) reply(i int, m *Message) int {
	d := s.d
	seen := mJSONRPC | mID
	if i = SkipSpace(d, i); i >= len(d) {
		return bad
	}
	if c := d[i]; c-'1' < 9 {
		// A positive integer, as member would scan it, without its switch.
		vs := i
		for i++; i < len(d) && d[i]-'0' < 10; i++ {
		}
		if i < len(d) && (d[i] == '.' || d[i]|0x20 == 'e') {
			i = s.member(vs, mID, m) // a fraction or exponent: member says what it is
		} else {
			m.IDKind, m.ID = IDNumber, d[vs:i]
		}
	} else {
		i = s.member(i, mID, m)
	}
	if i < 0 {
		return bad
	}
	mem, n := uint8(0), 0
	switch rest := d[i:]; {
	case len(rest) > 10 && string(rest[:10]) == `,"result":`:
		mem, n = mResult, 10
	case len(rest) > 9 && string(rest[:9]) == `,"error":`:
		mem, n = mError, 9
	default:
		return s.after(i, seen, m)
	}
	if i = SkipSpace(d, i+n); i >= len(d) {
		return bad
	}
	seen |= mem
	if mem == mResult {
		vs := i // as member scans a result
		if i = s.skip(i, 1); i < 0 {
			return bad
		}
		m.Result = d[vs:i]
		if i < len(d) && d[i] == '}' {
			m.Kind = KindResult // what classify makes of these three members
			return i + 1
		}
		return s.after(i, seen, m)
	}
	if i = s.member(i, mem, m); i < 0 {
		return bad
	}
	return s.after(i, seen, m)
}

// after goes on with an envelope after a member's value ended at d[i]:
// the closing brace, or a comma and the members after it.
func (s *scanner) after(i int, seen uint8, m *Message) int {
	d := s.d
	if i = SkipSpace(d, i); i >= len(d) {
		return bad
	}
	switch d[i] {
	case '}':
		classify(seen, m)
		return i + 1
	case ',':
		return s.members(SkipSpace(d, i+1), seen, m)
	}
	return bad
}

// members scans envelope members from the name at d[i] through the closing
// brace and classifies the envelope; seen holds the members scanned before
// d[i], which are all recognised names.
func (s *scanner) members(i int, seen uint8, m *Message) int {
	d := s.d
	var extra nameSet
	for {
		ks, ke := i, 0
		mem, after := plainKey(d, i)
		if mem != 0 {
			if i = SkipSpace(d, after); i >= len(d) {
				return bad
			}
		} else {
			if i >= len(d) || d[i] != '"' {
				return bad
			}
			var fl uint8
			ke, fl = str(d, i)
			s.flags |= fl
			if ke < 0 {
				return bad
			}
			if i = SkipSpace(d, ke); i >= len(d) || d[i] != ':' {
				return bad
			}
			if i = SkipSpace(d, i+1); i >= len(d) {
				return bad
			}
			mem = topMember(d[ks+1:ke-1], fl)
		}
		if seen&mem != 0 && mem != mExtra {
			m.Problems |= ProblemDuplicateKey
		}
		seen |= mem
		if i = s.member(i, mem, m); i < 0 {
			return bad
		}
		if mem == mExtra && extra.repeat(d, ks, ke) {
			m.Problems |= ProblemDuplicateKey
		}
		if i = SkipSpace(d, i); i >= len(d) {
			return bad
		}
		if d[i] == '}' {
			classify(seen, m)
			return i + 1
		}
		if d[i] != ',' {
			return bad
		}
		i = SkipSpace(d, i+1)
	}
}

// plainKey recognises an envelope member name at d[i] written the way
// nearly every message writes it: without escapes and with the colon right
// after the closing quote (`"id":`). It returns the member and the offset
// after the colon, or 0 for any other spelling, which the general path
// (str, topMember) then scans; both give the same result for these bytes.
func plainKey(d []byte, i int) (uint8, int) {
	// Each comparison is with a constant, which the compiler turns into a
	// few word loads instead of a call to compare memory.
	b := d[i:]
	switch {
	case len(b) < 5 || b[0] != '"':
	case b[1] == 'i':
		if string(b[:5]) == `"id":` {
			return mID, i + 5
		}
	case b[1] == 'j':
		if len(b) >= 10 && string(b[:10]) == `"jsonrpc":` {
			return mJSONRPC, i + 10
		}
	case b[1] == 'r':
		if len(b) >= 9 && string(b[:9]) == `"result":` {
			return mResult, i + 9
		}
	case b[1] == 'm':
		if len(b) >= 9 && string(b[:9]) == `"method":` {
			return mMethod, i + 9
		}
	case b[1] == 'p':
		if len(b) >= 9 && string(b[:9]) == `"params":` {
			return mParams, i + 9
		}
	case b[1] == 'e':
		if len(b) >= 8 && string(b[:8]) == `"error":` {
			return mError, i + 8
		}
	}
	return 0, 0
}

// member scans the value at d[i] of envelope member mem and records it.
// Fields are overwritten by every occurrence so the last one wins, as with
// encoding/json; problem bits accumulate.
func (s *scanner) member(i int, mem uint8, m *Message) int {
	d := s.d
	c := d[i]
	vs := i
	switch mem {
	case mJSONRPC:
		if len(d)-i >= 5 && string(d[i:i+5]) == `"2.0"` {
			return i + 5 // the version as it is written: nothing to decode
		}
		var fl uint8
		if c != '"' {
			m.Problems |= ProblemBadVersion
			return s.skip(i, 1)
		}
		if i, fl = str(d, i); i < 0 {
			return bad
		}
		s.flags |= fl
		if !isVersion(d[vs:i], fl) {
			m.Problems |= ProblemBadVersion
		}
	case mID:
		switch {
		case c == '"':
			m.IDKind = IDString
			i = s.skip(i, 1)
		case c == 'n':
			m.IDKind = IDNull
			i = lit(d, i)
		case c == '-' || c-'0' < 10:
			var frac bool
			m.IDKind = IDNumber
			if i, frac = num(d, i); frac {
				m.Problems |= ProblemFractionalID
			}
		default:
			m.IDKind = IDOther
			m.Problems |= ProblemBadID
			i = s.skip(i, 1)
		}
		if i >= 0 {
			m.ID = d[vs:i]
		}
	case mMethod:
		i = s.skip(i, 1)
		m.Method = nil
		if c != '"' {
			m.Problems |= ProblemBadMethod
		} else if i >= 0 {
			m.Method = d[vs:i]
		}
	case mParams:
		if c != '[' && c != '{' {
			m.Problems |= ProblemBadParams
		}
		if i = s.skip(i, 1); i >= 0 {
			m.Params = d[vs:i]
		}
	case mResult:
		if i = s.skip(i, 1); i >= 0 {
			m.Result = d[vs:i]
		}
	case mError:
		m.Code, m.HasCode, m.ErrMsg, m.ErrData = 0, false, nil, nil
		if c == '{' {
			i = s.errorObject(i, m)
		} else {
			m.Problems |= ProblemBadErrorObject
			i = s.skip(i, 1)
		}
		if i >= 0 {
			m.Error = d[vs:i]
		}
	default:
		m.Problems |= ProblemExtraMember
		i = s.skip(i, 1)
	}
	return i
}

// classify turns the set of members seen into a Kind and the problems that
// depend on the combination rather than on single members.
func classify(seen uint8, m *Message) {
	if seen&mJSONRPC == 0 {
		m.Problems |= ProblemBadVersion
	}
	res, er := seen&mResult != 0, seen&mError != 0
	if res && er {
		m.Problems |= ProblemBothResultAndError
	}
	switch {
	case seen&mMethod != 0:
		m.Kind = KindNotification
		if seen&mID != 0 {
			m.Kind = KindRequest
		}
		if res || er {
			m.Problems |= ProblemMixedMembers
		}
	case res || er:
		m.Kind = KindError
		if res {
			m.Kind = KindResult
		}
		if seen&mID == 0 {
			m.Problems |= ProblemMissingID
		}
		if seen&mParams != 0 {
			m.Problems |= ProblemMixedMembers
		}
	default:
		m.Kind = KindInvalid
		m.Problems |= ProblemNoResultOrError
	}
}
