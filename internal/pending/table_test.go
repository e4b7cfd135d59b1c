package pending

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/rpcload/rpcload/internal/wire"
)

func TestResolveVerdicts(t *testing.T) {
	type step struct {
		op      string // add, reply, sweep, leak
		id      string // raw reply id
		at      int64
		want    Verdict
		changed bool
		n       int // entries expected from sweep/leak
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"answered", []step{{op: "add"}, {op: "reply", id: "1", want: Answered}}},
		{"duplicate", []step{{op: "add"}, {op: "reply", id: "1", want: Answered}, {op: "reply", id: "1", want: DuplicateReply}}},
		{"unknown never sent", []step{{op: "add"}, {op: "reply", id: "2", want: UnknownID}}},
		{"unknown zero", []step{{op: "add"}, {op: "reply", id: "0", want: UnknownID}}},
		{"unknown string garbage", []step{{op: "add"}, {op: "reply", id: `"x"`, want: UnknownID}}},
		{"unknown null", []step{{op: "add"}, {op: "reply", id: `null`, want: UnknownID}}},
		{"type changed", []step{{op: "add"}, {op: "reply", id: `"1"`, want: Answered, changed: true}}},
		{"timeout then late then duplicate", []step{
			{op: "add"}, {op: "sweep", at: 9, n: 0}, {op: "sweep", at: 10, n: 1},
			{op: "reply", id: "1", want: Late}, {op: "reply", id: "1", want: DuplicateReply}}},
		{"leak", []step{{op: "add"}, {op: "add"}, {op: "reply", id: "2", want: Answered}, {op: "leak", n: 1}, {op: "reply", id: "1", want: DuplicateReply}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := NewAt(4, 1)
			var buf []Entry
			for i, s := range tc.steps {
				switch s.op {
				case "add":
					if _, err := tb.Add(Entry{Deadline: 10}); err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
				case "reply":
					_, v, changed := tb.Resolve([]byte(s.id))
					if v != s.want || changed != s.changed {
						t.Fatalf("step %d: reply %s = %v changed=%v, want %v changed=%v", i, s.id, v, changed, s.want, s.changed)
					}
				case "sweep":
					if buf = tb.Sweep(s.at, buf[:0]); len(buf) != s.n {
						t.Fatalf("step %d: sweep(%d) removed %d, want %d", i, s.at, len(buf), s.n)
					}
				case "leak":
					if buf = tb.Leak(buf[:0]); len(buf) != s.n {
						t.Fatalf("step %d: leak removed %d, want %d", i, len(buf), s.n)
					}
				}
			}
		})
	}
}

func TestCapacityBound(t *testing.T) {
	tb := NewAt(3, 1)
	for i := 0; i < 3; i++ {
		if _, err := tb.Add(Entry{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.Add(Entry{}); err != ErrFull {
		t.Fatalf("4th add: err=%v, want ErrFull", err)
	}
	if _, v, _ := tb.Resolve([]byte("2")); v != Answered {
		t.Fatalf("resolve 2 = %v", v)
	}
	id, err := tb.Add(Entry{})
	if err != nil || id != 4 {
		t.Fatalf("add after free: id=%d err=%v, want 4 <nil>", id, err)
	}
}

func TestSweepClassesIndependent(t *testing.T) {
	tb := NewAt(8, 1)
	tb.Add(Entry{Class: 0, Deadline: 100}) // id 1
	tb.Add(Entry{Class: 1, Deadline: 10})  // id 2, shorter timeout class added later
	got := tb.Sweep(50, nil)
	if len(got) != 1 || got[0].ID != 2 {
		t.Fatalf("sweep(50) = %+v, want only id 2", got)
	}
}

// TestModel drives the table with random operations and compares every
// verdict with a plain map-based model of the same rules.
func TestModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tb := NewAt(64, 1)
	type state int
	const (
		pending state = iota + 1
		answered
		timedOut
	)
	model := map[uint64]state{}
	deadline := map[uint64]int64{}
	var next uint64 = 1
	inflight, now := 0, int64(0)
	for i := 0; i < 50000; i++ {
		now += int64(r.IntN(3))
		switch op := r.IntN(10); {
		case op < 4:
			id, err := tb.Add(Entry{Deadline: now + 50, Format: wire.IDInt})
			if inflight >= 64 {
				if err != ErrFull {
					t.Fatalf("op %d: add with %d pending: err=%v", i, inflight, err)
				}
				continue
			}
			if err != nil || id != next {
				t.Fatalf("op %d: add = %d, %v; want %d", i, id, err, next)
			}
			model[id], deadline[id] = pending, now+50
			inflight++
			next++
		case op < 9:
			id := uint64(r.IntN(int(next) + 3))
			_, v, _ := tb.Resolve(strconv.AppendUint(nil, id, 10))
			var want Verdict
			switch model[id] {
			case pending:
				want, model[id] = Answered, answered
				inflight--
			case timedOut:
				want, model[id] = Late, answered
			case answered:
				want = DuplicateReply
			default:
				want = UnknownID
			}
			if v != want {
				t.Fatalf("op %d: resolve %d = %v, want %v", i, id, v, want)
			}
		default:
			got := tb.Sweep(now, nil)
			want := 0
			for id, s := range model {
				if s == pending && deadline[id] <= now {
					model[id] = timedOut
					inflight--
					want++
				}
			}
			if len(got) != want {
				t.Fatalf("op %d: sweep removed %d, want %d", i, len(got), want)
			}
		}
	}
}

func TestIndexBackwardShift(t *testing.T) {
	var x index
	x.rebuild(16, nil)
	r := rand.New(rand.NewPCG(3, 4))
	ref := map[uint64]int32{}
	for i := 0; i < 100000; i++ {
		k := uint64(r.IntN(12) + 1)
		if _, ok := ref[k]; ok && r.IntN(2) == 0 {
			x.del(k)
			delete(ref, k)
		} else if !ok {
			x.put(k, int32(i))
			ref[k] = int32(i)
		}
		for k := uint64(1); k <= 12; k++ {
			v, ok := x.get(k)
			if rv, rok := ref[k]; ok != rok || (ok && v != rv) {
				t.Fatalf("iteration %d: get(%d) = %d,%v want %d,%v", i, k, v, ok, rv, rok)
			}
		}
	}
}

func TestAddResolveAllocs(t *testing.T) {
	tb := NewAt(1024, 1)
	id := make([]byte, 0, 24)
	allocs := testing.AllocsPerRun(1000, func() {
		n, _ := tb.Add(Entry{Deadline: 1})
		id = strconv.AppendUint(id[:0], n, 10)
		tb.Resolve(id)
	})
	if allocs != 0 {
		t.Fatalf("add+resolve allocates %v per request, want 0", allocs)
	}
}

func BenchmarkAddResolve(b *testing.B) {
	tb := NewAt(4096, 1)
	id := make([]byte, 0, 24)
	// Keep 1000 in flight so lookups probe a populated table.
	for i := 0; i < 1000; i++ {
		tb.Add(Entry{})
	}
	b.ReportAllocs()
	for b.Loop() {
		n, _ := tb.Add(Entry{})
		id = strconv.AppendUint(id[:0], n-1000, 10)
		tb.Resolve(id)
	}
}

// BenchmarkInflightMemory reports the live heap held per pending entry with
// 100,000 requests in flight (measured with runtime.ReadMemStats after GC).
func BenchmarkInflightMemory(b *testing.B) {
	const inflight = 100000
	var perEntry float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tb := NewAt(inflight, 1)
		for i := 0; i < inflight; i++ {
			tb.Add(Entry{})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perEntry = float64(after.HeapAlloc-before.HeapAlloc) / inflight
		runtime.KeepAlive(tb)
	}
	b.ReportMetric(perEntry, "bytes/inflight")
}

func TestAddBatch(t *testing.T) {
	tb := NewAt(5, 1)
	tb.Add(Entry{})
	first, err := tb.AddBatch(Entry{Method: 2}, 3)
	if err != nil || first != 2 {
		t.Fatalf("AddBatch = %d, %v; want 2", first, err)
	}
	for id := uint64(2); id <= 4; id++ {
		e, v, _ := tb.Resolve([]byte(strconv.FormatUint(id, 10)))
		if v != Answered || e.Batch != 2 || e.BatchLen != 3 || e.Method != 2 {
			t.Fatalf("resolve %d = %+v %v", id, e, v)
		}
	}
	tb.AddBatch(Entry{}, 3) // ids 5..7: 4 in the table now
	if _, err := tb.AddBatch(Entry{}, 2); err != ErrFull {
		t.Fatalf("batch past capacity: err=%v, want ErrFull (all or none)", err)
	}
	if tb.Len() != 4 || !tb.Pending(5) || tb.Pending(8) {
		t.Fatalf("len %d pending(5)=%v pending(8)=%v", tb.Len(), tb.Pending(5), tb.Pending(8))
	}
}

// TestNewAtHandsOutIdsFromFirst: tables made with NewAt allocate from their
// own first id on and resolve those ids, so tables sharing a session never
// hand out the same id.
func TestNewAtHandsOutIdsFromFirst(t *testing.T) {
	for _, first := range []uint64{1, 1<<32 + 1, 5 << 32} {
		tb := NewAt(4, first)
		id, err := tb.Add(Entry{Deadline: 1})
		if err != nil || id != first {
			t.Fatalf("NewAt(4, %d).Add = %d, %v; want %d", first, id, err, first)
		}
		raw := strconv.AppendUint(nil, id, 10)
		if _, v, _ := tb.Resolve(raw); v != Answered {
			t.Errorf("Resolve(%s) = %s, want answered", raw, v)
		}
	}
	if id, _ := NewAt(1, 0).Add(Entry{}); id != 1 {
		t.Errorf("NewAt(1, 0) handed out %d first; ids start at 1 at the least", id)
	}
}

// TestOldestSent: the oldest pending entry across timeout classes, by send
// time; none once all are resolved.
func TestOldestSent(t *testing.T) {
	tb := NewAt(8, 1)
	if _, ok := tb.OldestSent(); ok {
		t.Fatal("an empty table has an oldest entry")
	}
	a, _ := tb.Add(Entry{Class: 1, Sent: 50, Deadline: 1000})
	b, _ := tb.Add(Entry{Class: 0, Sent: 70, Deadline: 100})
	c, _ := tb.Add(Entry{Class: 1, Sent: 90, Deadline: 1000})
	for _, step := range []struct {
		resolve uint64
		want    int64
		ok      bool
	}{{0, 50, true}, {a, 70, true}, {b, 90, true}, {c, 0, false}} {
		if step.resolve != 0 {
			tb.Resolve([]byte(strconv.FormatUint(step.resolve, 10)))
		}
		got, ok := tb.OldestSent()
		if got != step.want || ok != step.ok {
			t.Errorf("after resolving %d: oldest %d %v, want %d %v", step.resolve, got, ok, step.want, step.ok)
		}
	}
}

// TestStage: a writer opens a stage, fills entries in place with the ids the
// table will hand out, and commits them at once with their send time; the
// stage never takes more than the room, gives back what it did not use, and
// its entries are invisible until the commit.
func TestStage(t *testing.T) {
	timeouts := [MaxClasses]int64{100, 500}
	tests := []struct {
		name      string
		capacity  int
		before    int // entries added one by one first
		limit     int // Open's limit
		fill      []Entry
		wantRoom  int
		wantFirst uint64
	}{
		{"fills in order", 8, 1, 4, []Entry{{Method: 1}, {Method: 2, Class: 1, Batch: 3, BatchLen: 2}, {Method: 2, Class: 1, Batch: 3, BatchLen: 2}}, 4, 2},
		{"nothing used", 8, 2, 3, nil, 3, 3},
		{"limited by the room", 4, 3, 5, []Entry{{Method: 7}}, 1, 4},
		{"full table", 2, 2, 1, nil, 0, 3},
		{"grows to fit", 1000, 64, 100, []Entry{{}, {}}, 100, 65},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := NewAt(tc.capacity, 1)
			for range tc.before {
				tb.Add(Entry{})
			}
			var st Stage
			if first := tb.Open(&st, tc.limit); first != tc.wantFirst || st.Room() != tc.wantRoom {
				t.Fatalf("Open = first %d, room %d; want %d, %d", first, st.Room(), tc.wantFirst, tc.wantRoom)
			}
			for i, want := range tc.fill {
				e := st.Entry()
				if e == nil || e.ID != tc.wantFirst+uint64(i) {
					t.Fatalf("entry %d = %+v, want id %d", i, e, tc.wantFirst+uint64(i))
				}
				e.Method, e.Class, e.Batch, e.BatchLen = want.Method, want.Class, want.Batch, want.BatchLen
				if tb.Pending(e.ID) {
					t.Fatalf("id %d pending before the commit", e.ID)
				}
			}
			if st.Room() == 0 && st.Entry() != nil {
				t.Fatal("a full stage handed out another entry")
			}
			tb.Commit(&st, 1000, &timeouts)
			if st.First() != tc.wantFirst || st.Len() != len(tc.fill) {
				t.Fatalf("after Commit: first %d, len %d; want %d, %d", st.First(), st.Len(), tc.wantFirst, len(tc.fill))
			}
			if tb.Len() != tc.before+len(tc.fill) {
				t.Fatalf("len %d, want %d: unused slots must go back", tb.Len(), tc.before+len(tc.fill))
			}
			for i, want := range tc.fill {
				id := tc.wantFirst + uint64(i)
				e, v, _ := tb.Resolve([]byte(strconv.FormatUint(id, 10)))
				if v != Answered || e.ID != id || e.Method != want.Method || e.Batch != want.Batch || e.BatchLen != want.BatchLen ||
					e.Sent != 1000 || e.Deadline != 1000+timeouts[want.Class] {
					t.Fatalf("resolve %d = %+v %v, want %+v sent at 1000, answered", id, e, v, want)
				}
			}
			if id, err := tb.Add(Entry{}); err == nil && id != tc.wantFirst+uint64(len(tc.fill)) {
				t.Fatalf("next Add got id %d, want %d", id, tc.wantFirst+uint64(len(tc.fill)))
			}
		})
	}
}

// TestStageTimesOut: committed entries time out by their class's deadline.
func TestStageTimesOut(t *testing.T) {
	tb := NewAt(8, 1)
	var st Stage
	tb.Open(&st, 2)
	st.Entry().Class = 0
	st.Entry().Class = 1
	tb.Commit(&st, 50, &[MaxClasses]int64{10, 100})
	for _, step := range []struct {
		at   int64
		want int
	}{{59, 0}, {60, 1}, {149, 0}, {150, 1}} {
		if got := tb.Sweep(step.at, nil); len(got) != step.want {
			t.Errorf("Sweep(%d) removed %d, want %d", step.at, len(got), step.want)
		}
	}
}

// TestGrow: a table grown to its known peak holds exactly that many slots
// and an index twice its size (rounded up to a power of two), never more
// than the capacity, and keeps working past it.
func TestGrow(t *testing.T) {
	tests := []struct{ capacity, reserve, wantSlots, wantBuckets int }{
		{100000, 25000, 25000, 65536},
		{100000, 10, 64, 128}, // below the first size: nothing changes
		{300, 1000, 300, 1024},
	}
	for _, tc := range tests {
		tb := NewAt(tc.capacity, 1)
		tb.Grow(tc.reserve)
		if len(tb.slots) != tc.wantSlots || cap(tb.slots) != tc.wantSlots || cap(tb.free) != tc.wantSlots || len(tb.index.keys) != tc.wantBuckets {
			t.Errorf("NewAt(%d, 1).Grow(%d): %d slots (cap %d), free cap %d, %d buckets; want %d slots, %d buckets",
				tc.capacity, tc.reserve, len(tb.slots), cap(tb.slots), cap(tb.free), len(tb.index.keys), tc.wantSlots, tc.wantBuckets)
		}
		for i := range tc.wantSlots + 1 {
			if _, err := tb.Add(Entry{}); err != nil && i < tc.capacity {
				t.Fatalf("add %d: %v", i, err)
			}
		}
	}
}

// TestSlotSize pins the memory of one pending request: a slot is one cache
// line (BatchLen fills the padding after Method).
func TestSlotSize(t *testing.T) {
	if s := unsafe.Sizeof(slot{}); s != 64 {
		t.Fatalf("slot is %d bytes, want 64", s)
	}
}

// BenchmarkStageResolve registers 64 entries at a time through a Stage (a
// stream writer's write) and resolves them; ns/op is per entry.
func BenchmarkStageResolve(b *testing.B) {
	tb := NewAt(4096, 1)
	for i := 0; i < 1000; i++ { // 1000 in flight, as in BenchmarkAddResolve
		tb.Add(Entry{})
	}
	timeouts := [MaxClasses]int64{1e9}
	var st Stage
	id := make([]byte, 0, 24)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%64 != 0 {
			continue
		}
		first := tb.Open(&st, 64)
		for range 64 {
			st.Entry().Method = 1
		}
		tb.Commit(&st, int64(i), &timeouts)
		for k := range 64 {
			id = strconv.AppendUint(id[:0], first+uint64(k)-1000, 10)
			tb.Resolve(id)
		}
	}
}
