// Package fuzzcase is the byte form of one fuzz input, shared by the native
// Go harness (package rpcfuzz) and the black-box CLI's export-go / import-go.
//
// A native fuzz target takes one []byte. That byte string is either the
// literal form of a case (Encode: the frames themselves, so a finding saved
// by Go or exported by rpcfuzz stays the same input whatever the corpus and
// the mutator become) or, for anything Decode does not accept, a choice
// stream that drives the structure-aware mutator over the seed corpus.
//
// The file Go keeps for each such input under testdata/fuzz/FuzzXxx/ is
// written and read by MarshalGoCorpus and UnmarshalGoCorpus, byte for byte in
// the format of `go test -fuzz`.
package fuzzcase

import (
	"encoding/binary"

	"github.com/rpcload/rpcload/internal/mutate"
)

// Marker is the first byte of a literal case, and the byte that opens its
// optional wire section. 0xFF never occurs in UTF-8, so no JSON text is
// mistaken for a literal case, and a choice stream starting with it is one
// byte's worth of choices away from any other.
const Marker byte = 0xFF

// Encode gives the literal form of c: Marker, the number of frames as a
// uvarint, each frame as a uvarint length and its bytes, then, when c.Wire is
// non-nil, Marker again and Wire as a uvarint length and its bytes. The
// form is canonical: Decode accepts exactly what Encode writes, so a
// literal input and its case convert both ways without change.
func Encode(c mutate.Case) []byte {
	n := 1 + binary.MaxVarintLen64
	for _, f := range c.Frames {
		n += binary.MaxVarintLen64 + len(f)
	}
	if c.Wire != nil {
		n += 1 + binary.MaxVarintLen64 + len(c.Wire)
	}
	out := make([]byte, 0, n)
	out = append(out, Marker)
	out = binary.AppendUvarint(out, uint64(len(c.Frames)))
	for _, f := range c.Frames {
		out = binary.AppendUvarint(out, uint64(len(f)))
		out = append(out, f...)
	}
	if c.Wire != nil {
		out = append(out, Marker)
		out = binary.AppendUvarint(out, uint64(len(c.Wire)))
		out = append(out, c.Wire...)
	}
	return out
}

// Decode reads the literal form Encode writes and reports whether data is
// one. Anything else (a different first byte, a length running past the end,
// a length written with more bytes than it needs, trailing bytes, a case
// with neither frames nor wire bytes) gives false: the native harness then
// reads data as a choice stream. The case's frames and wire bytes share
// data's memory (capped, so appending to one never writes into the next).
func Decode(data []byte) (mutate.Case, bool) {
	if len(data) == 0 || data[0] != Marker {
		return mutate.Case{}, false
	}
	rest := data[1:]
	count, rest, ok := uvarint(rest)
	// Each frame takes at least its one-byte length, which bounds the count
	// before anything is allocated for it.
	if !ok || count > uint64(len(rest)) {
		return mutate.Case{}, false
	}
	var c mutate.Case
	if count > 0 {
		c.Frames = make([][]byte, 0, count)
	}
	for range count {
		var f []byte
		if f, rest, ok = chunk(rest); !ok {
			return mutate.Case{}, false
		}
		c.Frames = append(c.Frames, f)
	}
	if len(rest) > 0 {
		if rest[0] != Marker {
			return mutate.Case{}, false
		}
		if c.Wire, rest, ok = chunk(rest[1:]); !ok || len(rest) > 0 {
			return mutate.Case{}, false
		}
	}
	if len(c.Frames) == 0 && c.Wire == nil {
		return mutate.Case{}, false
	}
	return c, true
}

// chunk reads a uvarint length and that many bytes.
func chunk(b []byte) (piece, rest []byte, ok bool) {
	n, b, ok := uvarint(b)
	if !ok || n > uint64(len(b)) {
		return nil, nil, false
	}
	return b[:n:n], b[n:], true
}

// uvarint reads a uvarint written in its shortest form; a longer form would
// decode to the same case as a different byte string and break the
// round trip Decode then Encode.
func uvarint(b []byte) (v uint64, rest []byte, ok bool) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n != uvarintLen(v) {
		return 0, nil, false
	}
	return v, b[n:], true
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
