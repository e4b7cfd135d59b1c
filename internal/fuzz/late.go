package fuzz

// lateGenerations is how many exchanges back a reply may still be set
// aside as late. A server that answers out of order on a loaded machine
// sent the replies of an input two exchanges after it (an input of broken
// lines and two calls, then an input whose own reply was late too): with
// one exchange remembered, the third input blamed them as unknown ids.
const lateGenerations = 3

// maxStaleIDs bounds the ids of an exchange remembered for the next ones.
const maxStaleIDs = 64

// lateWindow remembers what the last few exchanges on a connection ended
// without: replies they may still get (missed), those of frames that
// required one (owed), and their readable ids. A reply to the input now
// that answers none of its frames but fits these is late, not its own.
type lateWindow struct {
	gens [lateGenerations]lateGen // gens[next-1] is the newest
	next int
	ids  [][]byte // the union of the generations' ids, rebuilt by open
}

// lateGen is what one exchange ended without.
type lateGen struct {
	missed, owed int
	ids          [][]byte
	buf          []byte // the ids' bytes (the input's frames are not kept)
}

// totals returns the replies the window may still have coming: all of
// them, and those owed to frames that required one.
func (lw *lateWindow) totals() (missed, owed int) {
	for i := range lw.gens {
		missed += lw.gens[i].missed
		owed += lw.gens[i].owed
	}
	return missed, owed
}

// open starts an exchange: it returns the ids of the remembered
// exchanges (valid until the next open) and makes room for the new one,
// whose readable ids are those of infos; the oldest generation is
// forgotten.
func (lw *lateWindow) open(infos []frameInfo) [][]byte {
	lw.ids = lw.ids[:0]
	for i := range lw.gens {
		lw.ids = append(lw.ids, lw.gens[i].ids...)
	}
	g := &lw.gens[lw.next]
	lw.next = (lw.next + 1) % lateGenerations
	g.missed, g.owed = 0, 0
	g.ids, g.buf = g.ids[:0], g.buf[:0]
	// (The ids are cut from buf once it no longer grows.)
	var ends [maxStaleIDs]int
	n := 0
	for i := range infos {
		if n < maxStaleIDs && keepID(infos, i) {
			g.buf = append(g.buf, infos[i].id...)
			ends[n], n = len(g.buf), n+1
		}
	}
	start := 0
	for _, end := range ends[:n] {
		g.ids = append(g.ids, g.buf[start:end:end])
		start = end
	}
	return lw.ids
}

// close records what the exchange open started ended without.
func (lw *lateWindow) close(missed, owed int) {
	g := &lw.gens[(lw.next+lateGenerations-1)%lateGenerations]
	g.missed, g.owed = missed, owed
}

// took takes n replies that came late off the remembered exchanges,
// oldest first (they are the ones most likely to have come by now):
// between exchanges off all of them, during one (newest false) off those
// before it.
func (lw *lateWindow) took(n int, newest bool) {
	gens := lateGenerations - 1
	if newest {
		gens = lateGenerations
	}
	for k := 0; k < gens && n > 0; k++ {
		g := &lw.gens[(lw.next+k)%lateGenerations]
		d := min(n, g.missed)
		g.missed -= d
		g.owed = max(0, g.owed-d)
		n -= d
	}
}

// keepID reports whether frame i of infos has a readable id to remember
// (or is a request the input cancelled, whose reply may come any time),
// not the same as the frame's before it.
func keepID(infos []frameInfo, i int) bool {
	fi := &infos[i]
	return (fi.readable || fi.cancelled) && fi.id != nil && (i == 0 || string(fi.id) != string(infos[i-1].id))
}
