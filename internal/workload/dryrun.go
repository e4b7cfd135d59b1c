package workload

import (
	"fmt"
	"io"
	"math/rand/v2"
)

// Encoder encodes the message a run sends for one tick: the call picked
// for sequence number seq, as the engine writes it on a connection (ids
// numbered as one connection numbers them). msg is empty when nothing is
// sent for the tick; ok is false once a call's data ran out, and nothing
// more is sent then.
type Encoder interface {
	Encode(seq uint64, call uint16) (msg []byte, ok bool)
}

// DryRun writes the first n messages the plan p (validated) sends, one per
// line, encoded by enc, without connecting to anything: for checking
// templates. A shard shows its own part: the whole run's sequence numbers
// i, i+n, ... of shard i/n.
func DryRun(p *Plan, n int, enc Encoder, w io.Writer) error {
	pcg := rand.NewPCG(0, 0)
	rnd := rand.New(pcg)
	for k := uint64(1); k <= uint64(n); k++ {
		seq := p.Shard.Seq(k)
		msg, ok := enc.Encode(seq, p.Pick(pcg, rnd, seq))
		if !ok {
			_, err := fmt.Fprintln(w, "# a call's data ran out: the run would stop sending here")
			return err
		}
		if len(msg) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s\n", msg); err != nil {
			return err
		}
	}
	return nil
}
