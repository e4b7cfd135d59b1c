package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"

	"github.com/rpcload/rpcload/internal/canonjson"
	"github.com/rpcload/rpcload/internal/wire"
)

// Validator checks a decoded JSON value (as encoding/json decodes into
// any, with json.Number for numbers); a JSON Schema compiled by
// santhosh-tekuri/jsonschema is one.
type Validator interface {
	Validate(v any) error
}

// Expect is what a call's replies must satisfy; the zero value expects
// nothing. A reply that breaks it is the rule expectation_failed.
// Expectations are checked only for the calls that have one, so their cost
// (decoding the result) is paid only where a user asked for it.
type Expect struct {
	ResultEqualsParams bool      // the result equals the params sent, as JSON values (key order and spacing ignored, numbers exact)
	Result             Validator // the result must validate
	ErrorCode          *int64    // the reply must be an error with this code
	ResultEquals       []byte    // the result must equal this JSON value
}

// Any reports whether e expects anything of a reply.
func (e *Expect) Any() bool {
	return e.ResultEqualsParams || e.Result != nil || e.ErrorCode != nil || e.ResultEquals != nil
}

var canonSeed = maphash.MakeSeed()

// Fingerprint is the fingerprint of a JSON value by its canonical form
// (canonjson: key order and spacing ignored, numbers by exact value, as
// --diff compares),
// taken of the params sent for a call that expects them echoed; 0 for
// invalid JSON (and never otherwise, in practice).
func Fingerprint(v []byte) uint64 {
	c, err := canonjson.Append(nil, v)
	if err != nil {
		return 0
	}
	return maphash.Bytes(canonSeed, c)
}

// Check checks an answered reply m against e, with the Fingerprint of the
// params sent, and returns what failed ("" if nothing).
func (e *Expect) Check(m *wire.Message, paramsHash uint64) string {
	switch {
	case e.ErrorCode != nil:
		if m.Kind != wire.KindError || !m.HasCode {
			return fmt.Sprintf("expected error %d, got a result", *e.ErrorCode)
		}
		if m.Code != *e.ErrorCode {
			return fmt.Sprintf("expected error %d, got error %d", *e.ErrorCode, m.Code)
		}
		return ""
	case m.Kind != wire.KindResult:
		if m.Kind == wire.KindError && m.HasCode {
			return fmt.Sprintf("expected a result, got error %d", m.Code)
		}
		return "expected a result"
	case e.ResultEqualsParams:
		if Fingerprint(m.Result) != paramsHash {
			return "the result is not the params sent (an echo of another request's params, or altered)"
		}
	case e.ResultEquals != nil:
		got, err := canonjson.Append(nil, m.Result)
		want, _ := canonjson.Append(nil, e.ResultEquals)
		if err != nil || !bytes.Equal(got, want) {
			return fmt.Sprintf("the result is not %.200s", want)
		}
	case e.Result != nil:
		d := json.NewDecoder(bytes.NewReader(m.Result))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return "the result is not JSON"
		}
		if err := e.Result.Validate(v); err != nil {
			return "the result does not match its schema: " + oneLine(err.Error(), 300)
		}
	}
	return ""
}

func oneLine(s string, n int) string {
	s = string(bytes.Join(bytes.Fields([]byte(s)), []byte(" ")))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
