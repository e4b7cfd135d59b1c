// Package pending is the id registry of one connection: it hands out request
// ids, remembers every request still waiting for its reply, and gives each one
// exactly one verdict.
//
// Ids come from a per-table 64-bit counter starting at 1, so an id is never
// reused while the table lives, and "was this id ever sent here?" is a range
// check (1 <= n < next). A reply is resolved by its raw JSON id:
//
//   - the id is pending: Answered (IDTypeChanged is set when the reply wrote
//     the same number as the other JSON type, 7 for "7");
//   - the id timed out earlier: Late (first reply only; a second one is a
//     DuplicateReply);
//   - the id was sent and already answered: DuplicateReply;
//   - anything else: UnknownID.
//
// Entries whose deadline passes are removed by Sweep with the verdict Timeout;
// entries still present when the run ends are removed by Leak with the verdict
// Leaked. The table's size is bounded by its capacity: Add fails with ErrFull
// rather than grow past it.
//
// Every method is safe for concurrent use; one mutex guards all state, because
// the only contenders are a connection's writer (Add) and reader (Resolve) and
// the periodic sweeper. Nothing allocates per request once the table has grown
// to its working size.
package pending
