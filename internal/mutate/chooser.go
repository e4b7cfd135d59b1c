package mutate

import "math/rand/v2"

// Chooser is the source of every random choice an op makes. Ops draw from it
// and from nothing else, so a case is reproduced by replaying the same
// choices: a seed (NewRand) for the black-box engine, the fuzzer's own bytes
// (NewBytes) for native Go fuzzing.
type Chooser interface {
	// Intn returns a number in [0, n). n is at least 1; a smaller n gives 0.
	Intn(n int) int
}

// pcgStream is a fixed second PCG word, so a run is fully named by its seed.
const pcgStream = 0x9e3779b97f4a7c15

type randChooser struct{ r *rand.Rand }

// NewRand returns a Chooser drawing from math/rand/v2's PCG seeded with seed;
// callers print the seed so a run can be repeated.
func NewRand(seed uint64) Chooser {
	return &randChooser{r: rand.New(rand.NewPCG(seed, pcgStream))}
}

func (c *randChooser) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	return c.r.IntN(n)
}

type byteChooser struct {
	data []byte
	pos  int
}

// NewBytes returns a Chooser that reads its choices from data: each Intn(n)
// consumes as many bytes as n-1 needs (none for n == 1, one up to 256, two
// up to 65536, ...), big-endian, reduced modulo n; once data is exhausted
// every choice is 0. Every byte string is a valid choice stream, which is
// what lets Go's coverage-guided fuzzer steer the ops through its []byte.
// data is read, never written; it must not change while the Chooser is used.
func NewBytes(data []byte) Chooser {
	return &byteChooser{data: data}
}

func (c *byteChooser) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	var v uint64
	for rest := uint64(n - 1); rest > 0; rest >>= 8 {
		v <<= 8
		if c.pos < len(c.data) {
			v |= uint64(c.data[c.pos])
			c.pos++
		}
	}
	return int(v % uint64(n))
}
