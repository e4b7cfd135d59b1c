package wire

// NextElement iterates the elements of a batch frame: start with off = 0;
// returns the raw element, the offset to pass next time, and ok=false when
// there are no more elements (or the frame is not a valid array).
//
// Each call validates only the element it returns, so a frame should be
// checked with Scan (Kind == KindBatch) before iterating; otherwise the
// elements before a syntax error are still returned.
func NextElement(frame []byte, off int) (elem []byte, next int, ok bool) {
	if off < 0 || off > len(frame) {
		return nil, off, false
	}
	i := SkipSpace(frame, off)
	if i >= len(frame) {
		return nil, i, false
	}
	if off == 0 {
		// No element ends at offset 0, so 0 unambiguously means "start".
		if frame[i] != '[' {
			return nil, i, false
		}
		if i = SkipSpace(frame, i+1); i < len(frame) && frame[i] == ']' {
			return nil, i + 1, false
		}
	} else {
		if frame[i] != ',' {
			// ']' ends the batch; anything else means it was not an array.
			return nil, i, false
		}
		i = SkipSpace(frame, i+1)
	}
	s := scanner{d: frame}
	end := s.skip(i, 1)
	if end < 0 {
		return nil, i, false
	}
	return frame[i:end], end, true
}
