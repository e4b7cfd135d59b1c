package pending

import (
	"errors"
	"sync"

	"github.com/rpcload/rpcload/internal/wire"
)

// ErrFull is returned by Add when the table already holds its capacity.
var ErrFull = errors.New("pending: table full")

// Verdict is how one request (or one reply that matched no request) ended.
type Verdict uint8

// The verdicts; their String names are part of the output contract.
const (
	Answered       Verdict = iota + 1 // the first reply for a pending id
	DuplicateReply                    // a further reply for an id already answered
	UnknownID                         // a reply whose id this table never sent
	Late                              // the first reply for an id that had timed out
	Timeout                           // no reply before the deadline; the entry left the table
	Leaked                            // still pending when the run ended
)

var verdictNames = [...]string{"", "answered", "duplicate_reply", "unknown_id", "late", "timeout", "leaked"}

// String returns the verdict's snake_case name.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(?)"
}

// MaxClasses is the number of timeout classes a table keeps apart.
const MaxClasses = 8

// Entry is what the table remembers about one request in flight.
// Times are nanoseconds on the run's clock.
type Entry struct {
	ID     uint64
	Format wire.IDFormat
	Class  uint8 // timeout class; all entries of one class share a timeout
	Method uint16
	// BatchLen sits here, in what would otherwise be padding after Method:
	// the entry is 56 bytes and a slot 64, one cache line.
	BatchLen    uint32 // requests in its batch (ids Batch .. Batch+BatchLen-1)
	Intended    int64  // when the schedule wanted the request sent
	Sent        int64  // when the writer took it for the wire
	Deadline    int64  // when it times out
	Fingerprint uint64
	Batch       uint64 // id of the first request of its batch; 0 = sent alone
}

type slot struct {
	Entry
	prev, next int32 // neighbours in the entry's class list; -1 = none
}

type list struct{ head, tail int32 }

// Table is the registry of one connection. The zero value is not usable; call NewAt.
type Table struct {
	mu       sync.Mutex // guards every field below
	capacity int
	next     uint64 // the next id to hand out
	slots    []slot
	free     []int32
	index    index
	classes  [MaxClasses]list
	timedOut bitmap // ids that timed out and have had no reply since
}

// NewAt returns a table that holds at most capacity entries and hands out
// ids from first on. Memory grows with use (doubling) up to that bound and
// is then reused. Tables that share one session with the server (MCP's
// Streamable HTTP, where ids must be unique among the requests in flight in
// the session) get disjoint ranges.
func NewAt(capacity int, first uint64) *Table {
	if capacity < 1 {
		capacity = 1
	}
	t := &Table{capacity: capacity, next: max(first, 1), timedOut: bitmap{pages: map[uint64]*page{}}}
	for i := range t.classes {
		t.classes[i] = list{-1, -1}
	}
	t.grow(min(capacity, 64))
	return t
}

// grow makes room for n entries in all. It allocates exactly n slots and a
// free list of exactly n (append would round both up, and a table that is
// grown once to a known peak should hold no more than that).
func (t *Table) grow(n int) {
	old := len(t.slots)
	if n <= old {
		return
	}
	slots := make([]slot, n)
	copy(slots, t.slots)
	t.slots = slots
	free := make([]int32, len(t.free), n)
	copy(free, t.free)
	for i := n - 1; i >= old; i-- {
		free = append(free, int32(i))
	}
	t.free = free
	t.index.rebuild(2*n, t.slots)
}

// Grow makes room for n entries at once (at most the capacity), so a table
// whose peak is known in advance (a closed-loop connection holds at most its
// share of the concurrency) is allocated once at that size instead of
// doubling past it.
func (t *Table) Grow(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.grow(min(n, t.capacity))
}

// Stage is the entries of one write, registered together. Open reserves free
// slots for them; the writer fills each in place (Entry), with no lock,
// since no one else looks at a reserved slot; Commit stamps their send time
// and registers them all under one lock. Ids follow from the table's
// counter, so a writer that is its table's only adder knows them before it
// registers them and can encode its requests first. The zero value is ready
// for Open and can be reused.
type Stage struct {
	t     *Table
	first uint64  // id of the first entry
	slots []int32 // reserved slots; the first n are filled
	n     int
}

// Open starts a stage of at most limit entries (fewer if the table has
// less room) and returns the id its first entry will have. The caller must
// be the table's only adder until Commit.
func (t *Table) Open(st *Stage, limit int) (first uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	used := len(t.slots) - len(t.free)
	k := max(0, min(limit, t.capacity-used))
	if k > len(t.free) {
		t.grow(min(max(2*len(t.slots), used+k), t.capacity))
	}
	st.t, st.first, st.n = t, t.next, 0
	st.slots = append(st.slots[:0], t.free[len(t.free)-k:]...)
	t.free = t.free[:len(t.free)-k]
	return t.next
}

// Room returns how many more entries the stage can take.
func (st *Stage) Room() int { return len(st.slots) - st.n }

// Len returns how many entries the stage holds; their ids are First() on.
func (st *Stage) Len() int { return st.n }

// First returns the id of the stage's first entry.
func (st *Stage) First() uint64 { return st.first }

// Entry returns the next entry of the stage to fill, its ID set and every
// other field zero; nil when the stage is full. It stays the caller's until
// Commit; Sent and Deadline are Commit's to set.
func (st *Stage) Entry() *Entry {
	if st.n == len(st.slots) {
		return nil
	}
	sl := &st.t.slots[st.slots[st.n]]
	sl.Entry = Entry{ID: st.first + uint64(st.n)}
	st.n++
	return &sl.Entry
}

// Commit registers the stage's entries, sent at time sent, each with the
// deadline sent + timeouts[its class], and gives back the slots it did not
// use. First and Len still describe the entries until the stage is opened
// again.
func (t *Table) Commit(st *Stage, sent int64, timeouts *[MaxClasses]int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range st.slots[:st.n] {
		sl := &t.slots[s]
		sl.Class %= MaxClasses
		sl.Sent, sl.Deadline = sent, sent+timeouts[sl.Class]
		sl.prev, sl.next = -1, -1
		t.link(s)
		t.index.put(sl.ID, s)
	}
	t.next += uint64(st.n)
	t.free = append(t.free, st.slots[st.n:]...)
	st.slots = st.slots[:st.n]
}

// Add registers e under a fresh id, which it returns; e.ID is ignored.
func (t *Table) Add(e Entry) (uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.addLocked(e)
}

// AddBatch registers n copies of e under n consecutive fresh ids, the
// requests of one batch, and returns the first id. Each entry records the
// batch (Batch = first id, BatchLen = n), so a reply array can be checked
// for missing elements. It adds all or none.
func (t *Table) AddBatch(e Entry, n int) (uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n < 1 || len(t.slots)-len(t.free)+n > t.capacity {
		return 0, ErrFull
	}
	e.Batch, e.BatchLen = t.next, uint32(n)
	for range n {
		if _, err := t.addLocked(e); err != nil {
			return 0, err // unreachable: capacity was checked
		}
	}
	return e.Batch, nil
}

// Pending reports whether id is still waiting for its reply.
func (t *Table) Pending(id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, found := t.index.get(id)
	return found
}

// Last returns the id handed out most recently (0 before the first) and
// whether it is still pending.
func (t *Table) Last() (id uint64, pending bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id = t.next - 1
	_, pending = t.index.get(id)
	return id, pending
}

func (t *Table) addLocked(e Entry) (uint64, error) {
	if len(t.free) == 0 {
		if len(t.slots) >= t.capacity {
			return 0, ErrFull
		}
		t.grow(min(2*len(t.slots), t.capacity))
	}
	s := t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	e.ID = t.next
	e.Class %= MaxClasses
	t.next++
	t.slots[s] = slot{Entry: e, prev: -1, next: -1}
	t.link(s)
	t.index.put(e.ID, s)
	return e.ID, nil
}

// Resolve judges one reply id (raw JSON). For Answered and Late it returns the
// request's entry; typeChanged reports that the reply carried the id as the
// other JSON type than it was sent with (7 for "7"): the reply still answers
// the request, and the caller reports the change as its own violation.
func (t *Table) Resolve(rawID []byte) (e Entry, v Verdict, typeChanged bool) {
	n, format, ok := wire.ParseCounterID(rawID)
	if !ok || n == 0 {
		return Entry{}, UnknownID, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, found := t.index.get(n); found {
		e = t.slots[s].Entry
		t.remove(s)
		return e, Answered, e.Format != format
	}
	if n >= t.next {
		return Entry{}, UnknownID, false
	}
	if t.timedOut.clear(n) {
		return Entry{ID: n, Format: format}, Late, false
	}
	return Entry{ID: n, Format: format}, DuplicateReply, false
}

// Forget removes a pending entry without a reply verdict, for requests the
// caller knows will never be answered (a write that failed). It reports
// whether the id was pending.
func (t *Table) Forget(id uint64) (Entry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, found := t.index.get(id)
	if !found {
		return Entry{}, false
	}
	e := t.slots[s].Entry
	t.remove(s)
	return e, true
}

// Sweep removes every entry whose deadline is at or before now, remembers
// their ids as timed out (so a reply that comes later is Late), and appends
// them to dst.
func (t *Table) Sweep(now int64, dst []Entry) []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.classes {
		for {
			s := t.classes[c].head
			if s < 0 || t.slots[s].Deadline > now {
				break
			}
			dst = append(dst, t.slots[s].Entry)
			t.timedOut.set(t.slots[s].ID)
			t.remove(s)
		}
	}
	return dst
}

// Leak removes every remaining entry and appends it to dst: the run is over
// and these will never be answered.
func (t *Table) Leak(dst []Entry) []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.classes {
		for t.classes[c].head >= 0 {
			s := t.classes[c].head
			dst = append(dst, t.slots[s].Entry)
			t.remove(s)
		}
	}
	return dst
}

// TimedOut returns how many ids timed out and have had no reply since.
func (t *Table) TimedOut() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.timedOut.count
}

// OldestSent returns the send time of the oldest entry still pending, and
// false when none is. Each class list is in send order, so only the heads
// are looked at.
func (t *Table) OldestSent() (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var oldest int64
	found := false
	for c := range t.classes {
		if s := t.classes[c].head; s >= 0 && (!found || t.slots[s].Sent < oldest) {
			oldest, found = t.slots[s].Sent, true
		}
	}
	return oldest, found
}

// Len returns the number of entries pending.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.slots) - len(t.free)
}

// link appends slot s to the tail of its class list; within a class entries
// are added in send order and share one timeout, so the list is in deadline
// order and Sweep only ever looks at heads.
func (t *Table) link(s int32) {
	l := &t.classes[t.slots[s].Class]
	t.slots[s].prev = l.tail
	if l.tail >= 0 {
		t.slots[l.tail].next = s
	} else {
		l.head = s
	}
	l.tail = s
}

func (t *Table) remove(s int32) {
	sl := &t.slots[s]
	l := &t.classes[sl.Class]
	if sl.prev >= 0 {
		t.slots[sl.prev].next = sl.next
	} else {
		l.head = sl.next
	}
	if sl.next >= 0 {
		t.slots[sl.next].prev = sl.prev
	} else {
		l.tail = sl.prev
	}
	t.index.del(sl.ID)
	sl.ID = 0
	t.free = append(t.free, s)
}
