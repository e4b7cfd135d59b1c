package profile

import (
	"errors"
	"fmt"

	"github.com/rpcload/rpcload/internal/wire"
)

// StepConn is what running Steps needs of a connection: rpcload's session
// and the fuzzer's connection each implement it over their own I/O. The
// runner below holds the order, the ids and the errors; the connection
// holds the writes, the waits and their timeouts.
type StepConn interface {
	// ControlID appends a fresh id for a control request to dst: a raw
	// JSON string in a namespace of the connection's own, so its reply is
	// never taken for a reply to the load (or to a fuzz input).
	ControlID(dst []byte) []byte
	// Send writes msg, a notification, at once.
	Send(msg []byte) error
	// Call writes msg, the request with the control id id, and waits for
	// the reply to it, which it returns. Silence ends in an error of the
	// connection's own (see Handshake.NoReply).
	Call(id, msg []byte) ([]byte, error)
}

// EraConn is a StepConn whose messages depend on the era they go out
// under (Streamable HTTP puts MCP-Protocol-Version in each POST's
// headers). RunSteps tells it the era at the start and again whenever an
// Accept changes it, so a step after initialize is sent under the
// revision the server chose, and after RunSteps the connection holds the
// era it returned. The runner owns the era; a connection that reads it
// from the replies itself would judge them a second time.
type EraConn interface {
	StepConn
	SetEra(Era)
}

// AppendControl appends the step as a request with the raw id id (a
// control id): {"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<params>},
// params left out when nil.
func (s Step) AppendControl(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"method":`...)
	dst = wire.AppendString(dst, s.Method)
	if s.Params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, s.Params...)
	}
	return append(dst, '}')
}

// RunSteps runs steps on c in order: a notification is sent and not
// waited for, a request waits for its reply, which the step's Accept
// judges. It returns the era the connection speaks after them (era,
// unless an Accept changed it), and tells it to c if c is an EraConn. An
// error of c is returned prefixed with the step's method; an Accept's
// error as it is.
func RunSteps(c StepConn, steps []Step, era Era) (Era, error) {
	var m wire.Message
	ec, _ := c.(EraConn)
	if ec != nil {
		ec.SetEra(era)
	}
	for _, st := range steps {
		if st.Notification {
			if err := c.Send(st.Append(nil, 0, wire.IDInt)); err != nil {
				return era, fmt.Errorf("%s: %w", st.Method, err)
			}
			continue
		}
		id := c.ControlID(nil)
		rep, err := c.Call(id, st.AppendControl(nil, id))
		if err != nil {
			return era, fmt.Errorf("%s: %w", st.Method, err)
		}
		if st.Accept != nil {
			wire.Scan(rep, &m)
			if era, err = st.Accept(&m, era); err != nil {
				return era, err
			}
			if ec != nil {
				ec.SetEra(era)
			}
		}
	}
	return era, nil
}

// Handshake is how a new connection is made ready: the MCP era probe when
// the era is not known (or when every connection sends it), then the
// profile's handshake for the era and the caller's own opening steps.
type Handshake struct {
	Profile Profile
	// Era is the era known before the connection: EraAuto to detect it.
	Era Era
	// Reprobe sends the probe on a connection whose era is already known
	// modern, its reply unread and its silence no error: it is part of
	// what a dual-era client says on every new connection, and servers
	// answer what follows it differently without it (the go-sdk refuses a
	// request without _meta before any discover or initialize).
	Reprobe bool
	// Open are steps run after the profile's handshake (LSP didOpen).
	Open []Step
	// NoReply is the error c's Call returns (errors.Is) when no reply
	// came in time: to the probe, it means a legacy server.
	NoReply error
}

// Probe runs the era probe h asks for on c and returns the era the
// connection speaks: the one the probe's reply detects, EraLegacy when
// the probe gets no reply (protocols.md §2), h.Era when no probe is sent.
// On an error it returns h.Era.
func (h Handshake) Probe(c StepConn) (Era, error) {
	probe, ok := h.Profile.Probe()
	switch {
	case !ok:
		return h.Era, nil
	case h.Era == EraAuto:
		detected, err := RunSteps(c, []Step{probe}, h.Era)
		switch {
		case errors.Is(err, h.NoReply):
			return EraLegacy, nil
		case err != nil:
			return h.Era, fmt.Errorf("MCP era probe: %w", err)
		}
		return detected, nil
	case h.Reprobe && h.Era.Modern():
		probe.Accept = nil
		if _, err := RunSteps(c, []Step{probe}, h.Era); err != nil && !errors.Is(err, h.NoReply) {
			return h.Era, fmt.Errorf("MCP era probe: %w", err)
		}
	}
	return h.Era, nil
}

// Steps runs the profile's handshake for era and then h.Open on c, and
// returns the era the connection speaks after them. Errors are prefixed
// with the profile's name.
func (h Handshake) Steps(c StepConn, era Era) (Era, error) {
	steps := h.Profile.Handshake(era)
	if len(h.Open) > 0 {
		steps = append(steps[:len(steps):len(steps)], h.Open...)
	}
	era, err := RunSteps(c, steps, era)
	if err != nil {
		return era, fmt.Errorf("%s handshake: %w", h.Profile.Name(), err)
	}
	return era, nil
}

// Run probes (Probe) and then runs the handshake (Steps) on c.
func (h Handshake) Run(c StepConn) (Era, error) {
	era, err := h.Probe(c)
	if err != nil {
		return era, err
	}
	return h.Steps(c, era)
}
