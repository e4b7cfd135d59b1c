package wire

// Scan scans and validates exactly one frame (surrounding JSON whitespace is
// allowed) without allocating, and fills *m (resetting it first). It never
// panics on any input. Nesting is tracked iteratively (no recursion), so a
// frame nested 1,000,000 deep is simply ProblemInvalidJSON (too deep).
//
// See the package documentation for how frames are classified.
func Scan(frame []byte, m *Message) {
	*m = Message{}
	s := scanner{d: frame}
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
	var seen uint8
	var extra nameSet
	i = SkipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		i++
	} else {
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
				i++
				break
			}
			if d[i] != ',' {
				return bad
			}
			i = SkipSpace(d, i+1)
		}
	}
	classify(seen, m)
	return i
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
