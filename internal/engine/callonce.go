package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rpcload/rpcload/internal/pending"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/transport"
	"github.com/rpcload/rpcload/internal/wire"
)

// CallOnce connects to cfg's target as a run would (the profile's handshake
// included), sends one request and returns its result: for discovery
// (rpc.discover, tools/list), not for load. cfg's load settings are not
// used; an error reply is an error naming its code and message.
func CallOnce(ctx context.Context, cfg Config, method string, params []byte) ([]byte, error) {
	cfg.Method, cfg.Params, cfg.Calls = method, nil, nil
	cfg.Steady(1)
	cfg.Conns, cfg.Duration = 1, time.Second
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := newExchangeRun(&cfg)
	var request func(params []byte) ([]byte, error)
	var closeAll func()
	switch {
	case cfg.Target.IsStream():
		d, err := r.startStreams(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUnreachable, cfg.Target.URL, err)
		}
		closeAll = d.close
		request = func(p []byte) ([]byte, error) { return d.slots[0].sess.call(method, p) }
	case r.prof.Name() == profile.MCP:
		d, err := r.startMCPHTTP(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUnreachable, cfg.Target.URL, err)
		}
		closeAll = d.close
		request = func(p []byte) ([]byte, error) {
			body := profile.Step{Method: method, Params: p}.Append(nil, 1, wire.IDInt)
			ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			defer cancel()
			_, _, msgs, err := d.exchange(ctx, d.headers(r.era, method, p), body, nil)
			return lastResponse(msgs), err
		}
	default:
		d := newHTTPDriver(r)
		closeAll = func() {}
		request = func(p []byte) ([]byte, error) {
			ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			defer cancel()
			c, err := transport.DialH1(ctx, d.opts)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrUnreachable, cfg.Target.URL, err)
			}
			defer c.Close()
			body := profile.Step{Method: method, Params: p}.Append(nil, 1, wire.IDInt)
			reply, _, err := c.Post(body, nil, time.Now().Add(cfg.Timeout))
			var se *transport.StatusError
			if err != nil && !errors.As(err, &se) {
				return nil, err
			}
			return reply, nil
		}
	}
	defer closeAll()
	p, err := r.prof.Params(r.era, method, params)
	if err != nil {
		return nil, err
	}
	rep, err := request(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	var m wire.Message
	wire.Scan(rep, &m)
	switch m.Kind {
	case wire.KindResult:
		return append([]byte(nil), m.Result...), nil
	case wire.KindError:
		msg, _ := wire.Unquote(nil, m.ErrMsg)
		return nil, fmt.Errorf("%s: error %d: %s", method, m.Code, msg)
	}
	return nil, fmt.Errorf("%s: the reply is not a JSON-RPC response: %.200s", method, rep)
}

// newExchangeRun is the state of a run that exchanges requests one at a
// time outside the load loop (CallOnce, Diff): cfg is validated; nothing it
// sees is a finding of a run.
func newExchangeRun(cfg *Config) *run {
	r := newRun(cfg)
	r.tables = map[*pending.Table]tableOwner{}
	r.children = map[transport.ChildStream]struct{}{}
	now := time.Now()
	r.base, r.epoch = now, now
	r.stopping.Store(true) // nothing of this is a run's finding
	return r
}

// startStreams dials cfg.Conns stream connections, each with the profile's
// handshake; the first detects the era. The error is the first dial's.
func (r *run) startStreams(ctx context.Context) (*streamDriver, error) {
	d := &streamDriver{r: r}
	if err := d.start(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// startMCPHTTP opens the MCP Streamable HTTP session (era probe, legacy
// handshake).
func (r *run) startMCPHTTP(ctx context.Context) (*mcpHTTPDriver, error) {
	d := newMCPHTTPDriver(r)
	if err := d.start(ctx); err != nil {
		return nil, err
	}
	return d, nil
}
