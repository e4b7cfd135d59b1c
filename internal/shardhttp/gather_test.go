package shardhttp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when the gatherer waits: After(d)
// moves it d on and fires at once, so a gathering over minutes of fake
// time takes microseconds and always polls at the same instants.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	c.mu.Unlock()
	return ch
}

// script is what one fake shard answers to a status poll at a time since
// the start; a done shard's result is fetched with fetch (nil: whole).
type script struct {
	status func(at time.Duration) (Status, error)
	fetch  func(try int) error
}

// fakeClient answers for the scripted shards, by base URL.
type fakeClient struct {
	clock   *fakeClock
	start   time.Time
	scripts map[string]script

	mu      sync.Mutex
	fetches map[string]int
	acks    map[string]string // base → the ETag acknowledged ("" for a failure)
}

func (c *fakeClient) Status(_ context.Context, base string) (Status, error) {
	return c.scripts[base].status(c.clock.Now().Sub(c.start))
}

func (c *fakeClient) Result(_ context.Context, base string) ([]byte, string, error) {
	c.mu.Lock()
	c.fetches[base]++
	try := c.fetches[base]
	c.mu.Unlock()
	if f := c.scripts[base].fetch; f != nil {
		if err := f(try); err != nil {
			return nil, "", err
		}
	}
	data := []byte("result of " + base)
	return data, ETag(data), nil
}

func (c *fakeClient) Ack(_ context.Context, base, etag string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acks[base] = etag
	return nil
}

var errRefused = errors.New("dial tcp: connection refused")

func exit(code int) *int { return &code }

// running answers running as shard, done (exit 0) from doneAt on.
func running(shard string, doneAt time.Duration) func(time.Duration) (Status, error) {
	return func(at time.Duration) (Status, error) {
		if at >= doneAt {
			return Status{Shard: shard, State: Done, ExitCode: exit(0)}, nil
		}
		return Status{Shard: shard, State: Running}, nil
	}
}

// from answers as f from time on, and is refused before.
func from(on time.Duration, f func(time.Duration) (Status, error)) func(time.Duration) (Status, error) {
	return func(at time.Duration) (Status, error) {
		if at < on {
			return Status{}, errRefused
		}
		return f(at)
	}
}

// until answers as f until time off, and is refused from then on (killed).
func until(off time.Duration, f func(time.Duration) (Status, error)) func(time.Duration) (Status, error) {
	return func(at time.Duration) (Status, error) {
		if at >= off {
			return Status{}, errRefused
		}
		return f(at)
	}
}

func failing(shard string, at time.Duration, code int, msg string) func(time.Duration) (Status, error) {
	return func(t time.Duration) (Status, error) {
		if t >= at {
			return Status{Shard: shard, State: Failed, ExitCode: exit(code), Error: msg}, nil
		}
		return Status{Shard: shard, State: Running}, nil
	}
}

func refused(time.Duration) (Status, error) { return Status{}, errRefused }

// TestGather drives the polling state machine through every way a shard
// can end, on a fake clock: when the gathering ends (in fake time since
// its start) and with what.
func TestGather(t *testing.T) {
	const wait = 10 * time.Second
	tests := []struct {
		name         string
		scripts      []script // the shards at a:1, b:1, c:1, ...
		allowMissing bool
		err          string        // "" = the gathering succeeds
		missingErr   bool          // the error is a MissingError (allowing missing shards would let it pass)
		endMin       time.Duration // it ends within [endMin, endMax] of the start
		endMax       time.Duration
		results      []string // the sources fetched, in order
		missing      []string // pieces of the reasons left out, one per shard left out
		acks         map[string]string
	}{
		{name: "all done", scripts: []script{{status: running("1/3", 0)}, {status: running("2/3", time.Second)}, {status: running("3/3", 2*time.Second)}},
			endMin: 2 * time.Second, endMax: 2 * time.Second, results: []string{"a:1", "b:1", "c:1"},
			acks: map[string]string{"a:1": "etag", "b:1": "etag", "c:1": "etag"}},
		{name: "slow to start, within the wait", scripts: []script{{status: from(8*time.Second, running("1/2", 9*time.Second))}, {status: running("2/2", 0)}},
			endMin: 9 * time.Second, endMax: 9 * time.Second, results: []string{"a:1", "b:1"}},
		{name: "a shard fails", missingErr: true, scripts: []script{{status: running("1/3", time.Hour)}, {status: failing("2/3", 1500*time.Millisecond, 3, "target unreachable: dial tcp 10.0.0.1:8545: connection refused")}, {status: running("3/3", time.Hour)}},
			err: "shard 2/3 at b:1 failed with exit code 3: target unreachable: dial tcp 10.0.0.1:8545: connection refused", endMin: 1500 * time.Millisecond, endMax: 1500 * time.Millisecond},
		{name: "a shard fails, missing allowed", allowMissing: true,
			scripts: []script{{status: running("1/3", 2*time.Second)}, {status: failing("2/3", 0, 2, "--rate: bad")}, {status: running("3/3", 3*time.Second)}},
			endMin:  3 * time.Second, endMax: 3 * time.Second, results: []string{"a:1", "c:1"}, missing: []string{"shard 2/3 at b:1 failed with exit code 2: --rate: bad"},
			acks: map[string]string{"a:1": "etag", "b:1": "", "c:1": "etag"}},
		{name: "a shard is killed", missingErr: true, scripts: []script{{status: running("1/3", time.Hour)}, {status: until(3*time.Second, running("2/3", time.Hour))}, {status: running("3/3", time.Hour)}},
			// Killed at 3s: its last answer came at 2.5s, 2s before 4.5s.
			err: "shard 2/3 at b:1 stopped answering: nothing for 2s since it said it was running (killed?): dial tcp: connection refused", endMin: 4500 * time.Millisecond, endMax: 4500 * time.Millisecond},
		{name: "a shard is killed once done, before its result came", missingErr: true, scripts: []script{{status: until(time.Second, running("1/1", 0)), fetch: func(int) error { return errRefused }}},
			err: "shard 1/1 at a:1 stopped answering", endMin: 2 * time.Second, endMax: 2500 * time.Millisecond},
		{name: "a shard never answers", missingErr: true, scripts: []script{{status: running("1/3", 0)}, {status: running("2/3", 0)}, {status: refused}},
			err: "the shard at c:1 did not answer within 10s: dial tcp: connection refused", endMin: wait, endMax: wait + 500*time.Millisecond},
		{name: "a shard never answers, missing allowed", allowMissing: true, scripts: []script{{status: running("1/3", 0)}, {status: refused}, {status: running("3/3", 0)}},
			endMin: wait, endMax: wait + 500*time.Millisecond, results: []string{"a:1", "c:1"}, missing: []string{"the shard at b:1 did not answer within 10s"}},
		{name: "not a shard", allowMissing: true, scripts: []script{{status: running("1/2", 0)}, {status: func(time.Duration) (Status, error) {
			return Status{}, &ProtocolError{errors.New("http://b:1/status: not a shard's status")}
		}}}, err: "the shard at b:1 does not answer as a shard does: http://b:1/status: not a shard's status"},
		{name: "the same shard twice", scripts: []script{{status: running("1/2", time.Hour)}, {status: running("1/2", time.Hour)}},
			err: "a:1 and b:1 both serve shard 1/2"},
		{name: "shards of two runs", scripts: []script{{status: running("1/2", time.Hour)}, {status: running("2/3", time.Hour)}},
			err: "a:1 is shard 1/2 but b:1 is shard 2/3"},
		{name: "fewer addresses than shards", missingErr: true, scripts: []script{{status: running("1/3", time.Hour)}, {status: running("2/3", time.Hour)}},
			err: "the run has 3 shards (a:1 is shard 1/3), but only 2 addresses were given"},
		{name: "fewer addresses than shards, missing allowed", allowMissing: true, scripts: []script{{status: running("1/3", 0)}, {status: running("3/3", 0)}},
			results: []string{"a:1", "b:1"}},
		{name: "more addresses than shards", scripts: []script{{status: running("1/1", time.Hour)}, {status: refused}},
			err: "the run has 1 shards (a:1 is shard 1/1), but 2 addresses were given"},
		{name: "a result cut short, then whole", scripts: []script{{status: running("1/1", 0), fetch: func(try int) error {
			if try < maxBadFetches {
				return errors.New("unexpected EOF")
			}
			return nil
		}}}, endMin: time.Second, endMax: time.Second, results: []string{"a:1"}},
		{name: "a result never whole", missingErr: true, scripts: []script{{status: running("1/1", 0), fetch: func(int) error { return errors.New("does not match its ETag") }}},
			err: "shard 1/1 at a:1 is done, but its result did not come whole in 3 tries: does not match its ETag", endMin: time.Second, endMax: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
			client := &fakeClient{clock: clock, start: clock.now, scripts: map[string]script{}, fetches: map[string]int{}, acks: map[string]string{}}
			var sources []string
			for i, s := range tt.scripts {
				src := fmt.Sprintf("%c:1", 'a'+i)
				sources = append(sources, src)
				client.scripts["http://"+src] = s
			}
			g, err := NewGatherer(sources, client)
			if err != nil {
				t.Fatal(err)
			}
			g.Wait, g.AllowMissing, g.Now, g.After = wait, tt.allowMissing, clock.Now, clock.After
			var logs []string
			g.Log = func(line string) { logs = append(logs, line) }
			out, err := g.Gather(context.Background())
			took := clock.Now().Sub(client.start)
			if tt.endMax > 0 && (took < tt.endMin || took > tt.endMax) {
				t.Errorf("ended %s after the start; want within [%s, %s]", took, tt.endMin, tt.endMax)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v; want one with %q\nlog:\n%s", err, tt.err, strings.Join(logs, "\n"))
				}
				var me *MissingError
				if errors.As(err, &me) != tt.missingErr {
					t.Errorf("error %T; a MissingError: want %v", err, tt.missingErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\nlog:\n%s", err, strings.Join(logs, "\n"))
			}
			var got []string
			for _, r := range out.Results {
				got = append(got, r.Source)
				if string(r.Data) != "result of http://"+r.Source || r.ETag != ETag(r.Data) {
					t.Errorf("%s: data %q etag %q", r.Source, r.Data, r.ETag)
				}
			}
			if !slices.Equal(got, tt.results) {
				t.Errorf("results from %q; want %q", got, tt.results)
			}
			if len(out.Missing) != len(tt.missing) {
				t.Fatalf("missing %q; want %d like %q", out.Missing, len(tt.missing), tt.missing)
			}
			for i, m := range tt.missing {
				if !strings.Contains(out.Missing[i], m) {
					t.Errorf("missing[%d] %q; want it to contain %q", i, out.Missing[i], m)
				}
			}
			if tt.acks == nil {
				return
			}
			if err := g.Ack(context.Background(), out); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for src, tag := range tt.acks {
				if tag == "etag" {
					tag = ETag([]byte("result of http://" + src))
				}
				want["http://"+src] = tag
			}
			if fmt.Sprint(client.acks) != fmt.Sprint(want) {
				t.Errorf("acknowledged %v; want %v", client.acks, want)
			}
		})
	}
}

// TestGatherLogs: the merger says when it first hears of each shard, what
// it fetched, and every 30 s what it still waits for and why.
func TestGatherLogs(t *testing.T) {
	clock := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	client := &fakeClient{clock: clock, start: clock.now, fetches: map[string]int{}, acks: map[string]string{}, scripts: map[string]script{
		"http://a:1": {status: running("1/2", 40*time.Second)},
		"http://b:1": {status: from(35*time.Second, running("2/2", 45*time.Second))},
	}}
	g, err := NewGatherer([]string{"a:1", "b:1"}, client)
	if err != nil {
		t.Fatal(err)
	}
	g.Now, g.After = clock.Now, clock.After
	var logs []string
	g.Log = func(line string) { logs = append(logs, line) }
	if _, err := g.Gather(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"shard 1/2 at a:1: running",
		"waiting for 2 of 2 shards: shard 1/2 at a:1 (running); the shard at b:1 (not answering yet: dial tcp: connection refused)",
		"shard 2/2 at b:1: running",
		"shard 1/2 at a:1: done (exit code 0); result fetched (20 bytes)",
		"shard 2/2 at b:1: done (exit code 0); result fetched (20 bytes)",
	}
	if !slices.Equal(logs, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(logs, "\n"), strings.Join(want, "\n"))
	}
}

func TestNewGathererRefuses(t *testing.T) {
	for _, tt := range []struct {
		sources []string
		want    string
	}{
		{nil, "no shard address"},
		{[]string{"a:1", "http://a:1/"}, "a:1 and http://a:1/ are the same shard"},
		{[]string{"a:1", "ftp://b:1"}, "not ftp://"},
	} {
		if _, err := NewGatherer(tt.sources, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v; want an error with %q", tt.sources, err, tt.want)
		}
	}
}

// TestGatherCancelled: an interrupt ends the wait at once.
func TestGatherCancelled(t *testing.T) {
	clock := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	client := &fakeClient{clock: clock, start: clock.now, scripts: map[string]script{"http://a:1": {status: refused}}}
	g, err := NewGatherer([]string{"a:1"}, client)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.Now, g.After = clock.Now, func(time.Duration) <-chan time.Time { return nil }
	if _, err := g.Gather(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v; want the cancellation", err)
	}
}
