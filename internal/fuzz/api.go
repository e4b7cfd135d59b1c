package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcload/rpcload/internal/apispec"
	"github.com/rpcload/rpcload/internal/canonjson"
	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/mutate"
	"github.com/rpcload/rpcload/internal/oracle"
	"github.com/rpcload/rpcload/internal/profile"
	"github.com/rpcload/rpcload/internal/wire"
)

// DefaultAPIShare is the share of inputs that are fresh calls of the API's
// methods when there is one (Config.APIShare); the others are mutations of
// the corpus, which holds a valid call of each method too.
const DefaultAPIShare = 0.5

// invalidParamsCode is JSON-RPC 2.0's -32602, what a call whose params its
// method's schema rejects is owed by default.
const invalidParamsCode = -32602

// apiRules holds a run's exchanges to the API's schemas (api.go's oracles).
type apiRules struct {
	api *apispec.API
	// codes are the error codes a call with schema-invalid params may be
	// refused with (Config.InvalidParamsCodes).
	codes []int64
	// meta is the params._meta rpcfuzz's MCP tool and prompt calls carry
	// (nil: none, as over HTTP and in the legacy eras): see mcpEnvelope.
	meta []byte
}

// apiCall is one frame of an exchange that called a method of the API, as
// judged: for the coverage of summary.json.
type apiCall struct {
	method  int
	params  apispec.Verdict
	replied bool
	kind    wire.Kind
	code    int64
}

// apiEcho is a result of an idempotent method's valid call in the
// exchange being judged, for comparing a second equal call's with it.
type apiEcho struct {
	method         int
	params, result []byte // canonical JSON
}

// apiExchange applies the API's oracles to frame i of c and its reply
// (nil: none came): the frame must be a call (a valid request with an id)
// of a method of the API with no envelope member but the request's four,
// which reads the same to any parser (apispec.Unambiguous), with a string
// or integer id no other frame of c has, so that which reply is its answer
// is no guess (a reply with id null may answer any frame). It
// records the call for the coverage, and sets curAPI to the method's name
// for the verdict. A call the input cancels, or one in an input that
// starts, ends or reshapes its session (sessionAltered), is counted but
// not judged.
func (j *judgement) apiExchange(c mutate.Case, infos []frameInfo, i int, reply []byte) (check.Set, string) {
	if j.api == nil || infos[i].class != oracle.Call || !requestMembersOnly(c.Frames[i]) || !apispec.Unambiguous(c.Frames[i]) {
		return 0, ""
	}
	for k := range infos {
		if k != i && infos[k].id != nil && wire.CompareIDs(infos[i].id, infos[k].id, true) != wire.IDDifferent {
			return 0, ""
		}
	}
	frame := c.Frames[i]
	var m wire.Message
	wire.Scan(frame, &m)
	if m.IDKind != wire.IDString && m.IDKind != wire.IDNumber || m.Problems.Has(wire.ProblemFractionalID) {
		// (LSP and MCP ids are integers or strings: a server may refuse a
		// fractional one as an invalid request, whatever the params.)
		return 0, ""
	}
	meth, params, ok := j.api.api.Find(&m)
	if !ok {
		return 0, ""
	}
	pv, why := meth.CheckParams(params)
	if meth.Kind != apispec.Plain && !j.api.mcpEnvelope(m.Params) {
		pv, why = apispec.NotJudged, ""
	}
	call := apiCall{method: meth.Index(), params: pv}
	defer func() { j.v.calls = append(j.v.calls, call) }()
	if reply == nil {
		return 0, ""
	}
	var rep wire.Message
	wire.Scan(reply, &rep)
	call.replied, call.kind, call.code = true, rep.Kind, rep.Code
	j.curAPI = meth.Name
	if cancelledLater(c.Frames, i, m.ID) || sessionAltered(c.Frames, j.pr) {
		// The input cancels the call (LSP's RequestCancelled, -32800, is
		// no verdict on its params), or starts, ends or reshapes the
		// session it is made in (apilsp.go).
		return 0, ""
	}
	switch {
	case rep.Kind == wire.KindResult && pv == apispec.Invalid:
		if meth.Kind == apispec.Tool && apispec.ToolError(rep.Result) {
			return 0, "" // MCP: a tool refuses its arguments with a tool error
		}
		return check.Set(0).Add(check.InvalidParamsAccepted),
			fmt.Sprintf("%s: params its schema rejects (%s) were answered with a result", meth.Name, why)
	case rep.Kind == wire.KindResult:
		if rv, rwhy := meth.CheckResult(rep.Result); rv == apispec.Invalid {
			return check.Set(0).Add(check.ResultSchemaMismatch),
				fmt.Sprintf("%s: the result breaks the declared result schema: %s", meth.Name, rwhy)
		}
		if meth.Idempotent && pv == apispec.Valid {
			return j.idempotent(meth, params, rep.Result)
		}
	case rep.Kind != wire.KindError || !rep.HasCode:
	case pv == apispec.Invalid && !slices.Contains(j.api.codes, rep.Code):
		return check.Set(0).Add(check.ParamsErrorCode),
			fmt.Sprintf("%s: params its schema rejects (%s) were refused with error %d; want %s", meth.Name, why, rep.Code, codeList(j.api.codes))
	case pv == apispec.Valid && rep.Code == invalidParamsCode:
		return check.Set(0).Add(check.ValidParamsRejected),
			fmt.Sprintf("%s: params its schema accepts were refused with -32602 (Invalid params): %s", meth.Name, errorText(&rep))
	case pv == apispec.Valid && rep.Code == -32603:
		return check.Set(0).Add(check.InternalError),
			fmt.Sprintf("%s: params its schema accepts were answered with -32603 (Internal error): %s", meth.Name, errorText(&rep))
	}
	return 0, ""
}

// requestMembersOnly reports whether frame is an object whose members are
// among a request's: jsonrpc, id, method and params. A server may refuse
// a request with another ("result", say) as invalid, or ignore it: either
// way, what it says of the params is no verdict on them.
func requestMembersOnly(frame []byte) bool {
	it, ok := wire.ObjectMembers(frame)
	if !ok {
		return false
	}
	for name, _, more := it.Next(); more; name, _, more = it.Next() {
		switch string(name) {
		case `"jsonrpc"`, `"id"`, `"method"`, `"params"`:
		default:
			return false
		}
	}
	return !it.Malformed()
}

// mcpEnvelope reports whether the params of an MCP tool or prompt call
// hold nothing but name, arguments and the _meta rpcfuzz itself sends
// (a.meta, byte for byte; none when a.meta is nil). The schema judges the
// arguments alone, so its verdict says nothing of a call a server may
// refuse for another member: a _meta that is not an object (-32602), a
// protocolVersion that differs from the header (-32020), a task.
func (a *apiRules) mcpEnvelope(params []byte) bool {
	it, ok := wire.ObjectMembers(params)
	if !ok {
		return false
	}
	metaSeen := false
	for name, v, more := it.Next(); more; name, v, more = it.Next() {
		switch string(name) {
		case `"name"`, `"arguments"`:
		case `"_meta"`:
			if metaSeen || a.meta == nil || !bytes.Equal(wire.TrimSpace(v), a.meta) {
				return false
			}
			metaSeen = true
		default:
			return false
		}
	}
	return !it.Malformed() && metaSeen == (a.meta != nil)
}

// idempotent compares the result of a valid call of an idempotent method
// with the one an equal call got earlier in the same exchange.
func (j *judgement) idempotent(meth *apispec.Method, params, result []byte) (check.Set, string) {
	p, perr := canonjson.Append(nil, orEmpty(params))
	res, rerr := canonjson.Append(nil, result)
	if perr != nil || rerr != nil {
		return 0, ""
	}
	for _, e := range j.echoes {
		if e.method == meth.Index() && bytes.Equal(e.params, p) && !bytes.Equal(e.result, res) {
			return check.Set(0).Add(check.IdempotentMismatch),
				fmt.Sprintf("%s: two equal calls got different results: %s, then %s", meth.Name, trimTo(e.result, 200), trimTo(res, 200))
		}
	}
	j.echoes = append(j.echoes, apiEcho{method: meth.Index(), params: p, result: res})
	return 0, ""
}

func orEmpty(params []byte) []byte {
	if params == nil {
		return []byte("null")
	}
	return params
}

func errorText(m *wire.Message) string {
	msg, ok := wire.Unquote(nil, m.ErrMsg)
	if !ok {
		return "(no message)"
	}
	return strconv.Quote(string(trimTo(msg, 200)))
}

func codeList(codes []int64) string {
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = strconv.FormatInt(c, 10)
	}
	return strings.Join(parts, " or ")
}

// blameCall names the method of a crash or a hang that a call of the API
// explains (tracedKey keys it by the method: one handler's bug, however
// the call was spelled): the verdict's frame when it calls the API, else
// the first call of the API in the input, with a string or number id, that
// no reply answered. (A server that died on the call may first have
// answered the frames before it with id null, which the pairing may give
// the call, leaving an earlier frame looking unanswered.)
func (a *apiRules) blameCall(v *verdict, c mutate.Case, infos []frameInfo, o *outcome) {
	if a == nil {
		return
	}
	if v.in != nil {
		if _, m, _, ok := a.callOf(mutate.Case{Frames: [][]byte{v.in}}); ok {
			v.api = m.Name
			return
		}
	}
	for i, f := range c.Frames {
		if infos[i].class != oracle.Call || infos[i].id == nil || string(infos[i].id) == "null" || idAnswered(o, i, infos[i].id) {
			continue
		}
		if _, m, _, ok := a.callOf(mutate.Case{Frames: [][]byte{f}}); ok {
			v.in, v.inClass, v.api = f, oracle.Call, m.Name
			return
		}
	}
}

// idAnswered reports whether a reply of o (frame i's, over HTTP) carries id.
func idAnswered(o *outcome, i int, id []byte) bool {
	replies := o.replies
	if o.perFrame {
		if i >= len(o.frameReplies) {
			return false
		}
		replies = o.frameReplies[i]
	}
	var m wire.Message
	for _, r := range replies {
		if wire.Scan(r, &m); m.ID != nil && wire.CompareIDs(id, m.ID, true) != wire.IDDifferent {
			return true
		}
	}
	return false
}

// apiRule reports whether r is one of the API's oracles.
func apiRule(r check.Rule) bool {
	switch r {
	case check.ResultSchemaMismatch, check.IdempotentMismatch, check.InvalidParamsAccepted,
		check.ParamsErrorCode, check.ValidParamsRejected, check.InternalError:
		return true
	}
	return false
}

// apiKey is the dedup key of an API oracle's finding: the rule and the
// method, one finding per method (a server lenient with one param is
// lenient with the next); the code too for params_error_code, and the
// place and kind of the problem for result_schema_mismatch, where two
// broken parts of a result are two bugs.
func apiKey(v *verdict) string {
	k := v.rule.String() + "|" + v.api
	switch v.rule {
	case check.ParamsErrorCode:
		k += "|" + strconv.FormatInt(v.code, 10)
	case check.ResultSchemaMismatch:
		if i := strings.Index(v.note, "schema: "); i >= 0 {
			k += "|" + noteClass(v.note[i+len("schema: "):])
		}
	}
	return k
}

// setupAPI makes the run's API: Config.API, what the target describes of
// itself when Config.Discover is set (rpc.discover, or MCP's lists), the
// methods Config.Idempotent names. It returns the seeds to add: one valid
// call of each method.
func (r *run) setupAPI(ctx context.Context, w *worker) ([]mutate.Case, error) {
	api := &apispec.API{}
	if r.cfg.API != nil {
		if err := api.Merge(r.cfg.API); err != nil {
			return nil, err
		}
	}
	if r.cfg.Discover {
		found, err := r.discover(ctx, w)
		if err != nil {
			return nil, err
		}
		if err := api.Merge(found); err != nil {
			return nil, err
		}
	}
	if unknown := api.SetIdempotent(r.cfg.Idempotent); len(unknown) > 0 {
		return nil, fmt.Errorf("--idempotent %s: no such method in the API (%s)", strings.Join(unknown, ", "), strings.Join(api.Names(), ", "))
	}
	if api.Len() == 0 {
		if r.cfg.Discover {
			r.warn("the target described no method: the API-aware inputs are off")
		}
		return nil, nil
	}
	for _, n := range api.Notes {
		r.warn("API: %s", n)
	}
	codes := r.cfg.InvalidParamsCodes
	if len(codes) == 0 {
		codes = []int64{invalidParamsCode}
	}
	r.api = &apiRules{api: api, codes: codes}
	if r.d != nil && r.cfg.Profile == profile.MCP {
		// (The _meta the profile writes in the era the target speaks.)
		if p, err := r.d.prof.Params(profile.Era(r.d.era.Load()), apispec.MCPToolsCall, []byte(`{}`)); err == nil {
			if meta, ok := wire.Member(p, `"_meta"`); ok {
				r.api.meta = append([]byte(nil), wire.TrimSpace(meta)...)
			}
		}
	}
	rnd := rand.New(rand.NewPCG(r.cfg.Seed, 0xa915eed))
	var seeds []mutate.Case
	for _, m := range api.Methods {
		params, _, err := m.Propose(rnd, true)
		if err != nil {
			r.warn("API: %s: no valid params could be made (%v): its calls are left to the mutations", m.Name, err)
			continue
		}
		seeds = append(seeds, mutate.Case{Frames: [][]byte{r.callFrame(m, []byte("1"), params)}})
	}
	return seeds, nil
}

// discoverID is the id of the requests that read what the target says of
// its API.
const discoverID = `"rpcfuzz-discover"`

// discover asks the target for its API: MCP's tools/list (with
// prompts/list and resources/list when offered), an LSP server's
// capabilities (apilsp.go), else rpc.discover.
func (r *run) discover(ctx context.Context, w *worker) (*apispec.API, error) {
	if r.cfg.Profile == profile.LSP {
		return r.discoverLSP()
	}
	if r.cfg.Profile == profile.MCP {
		tools, err := profile.ListAll("tools/list", "tools", func(p []byte) ([]byte, error) { return r.callOnce(ctx, w, "tools/list", p) })
		if err != nil {
			return nil, fmt.Errorf("--discover: %w", err)
		}
		// Prompts and resources are optional capabilities: a server
		// without them refuses the list.
		prompts, _ := profile.ListAll("prompts/list", "prompts", func(p []byte) ([]byte, error) { return r.callOnce(ctx, w, "prompts/list", p) })
		resources, _ := profile.ListAll("resources/list", "resources", func(p []byte) ([]byte, error) { return r.callOnce(ctx, w, "resources/list", p) })
		api, err := apispec.FromMCP(tools, prompts, resources)
		if err != nil {
			return nil, fmt.Errorf("--discover: %w", err)
		}
		return api, nil
	}
	doc, err := r.callOnce(ctx, w, "rpc.discover", nil)
	if err != nil {
		return nil, fmt.Errorf("--discover: %w", err)
	}
	api, err := apispec.FromOpenRPC(doc)
	if err != nil {
		return nil, fmt.Errorf("--discover: the rpc.discover result: %w", err)
	}
	return api, nil
}

// callOnce sends one request on w's connection (params as the profile
// wants them in the era the target speaks) and returns its result.
func (r *run) callOnce(ctx context.Context, w *worker, method string, params []byte) ([]byte, error) {
	// Over HTTP the MCP era is never detected (the session, if any, is the
	// user's -H headers): params go as they are, as in every other input.
	if era := profile.Era(r.d.era.Load()); era != profile.EraAuto {
		var err error
		if params, err = r.d.prof.Params(era, method, params); err != nil {
			return nil, err
		}
	}
	frame := append([]byte(`{"jsonrpc":"2.0","id":`+discoverID+`,"method":`), wire.AppendString(nil, method)...)
	if params != nil {
		frame = append(append(frame, `,"params":`...), params...)
	}
	frame = append(frame, '}')
	res := w.exec(ctx, mutate.Case{Frames: [][]byte{frame}}, false)
	r.checks.Add(1)
	var m wire.Message
	for _, rep := range allReplies(&res.o) {
		if wire.Scan(rep, &m); string(m.ID) != discoverID {
			continue
		}
		switch m.Kind {
		case wire.KindResult:
			return append([]byte(nil), m.Result...), nil
		case wire.KindError:
			return nil, fmt.Errorf("%s: error %d: %s", method, m.Code, errorText(&m))
		}
	}
	if res.o.end != endNone {
		return nil, fmt.Errorf("%s: no reply (%s %s)", method, res.o.end, res.o.note)
	}
	return nil, fmt.Errorf("%s: no reply", method)
}

// callFrame is the request calling m with id and params (a tool's
// arguments), its params as the profile wants them in the era the target
// speaks (MCP 2026-07-28 carries _meta in every request's params).
func (r *run) callFrame(m *apispec.Method, id, params []byte) []byte {
	p := m.CallParams(params)
	if r.d != nil {
		if q, err := r.d.prof.Params(profile.Era(r.d.era.Load()), m.Call, p); err == nil {
			p = q
		}
	}
	return profile.Step{Method: m.Call, Params: p}.AppendControl(nil, id)
}

// apiInput is a fresh call of the API: the methods in turn (so that each
// gets its share), params valid or invalid by a coin, and now and then, for
// an idempotent method, the same valid call twice, else the call in a
// sequence of its session (apiSession). ok is false when no params could
// be made.
func (r *run) apiInput(w *worker) (mutate.Case, bool) {
	methods := r.api.api.Methods
	m := methods[int(r.apiTurn.Add(1)-1)%len(methods)]
	valid := m.Params == nil || w.apiRand.IntN(2) == 0
	params, _, err := m.Propose(w.apiRand, valid)
	if errors.Is(err, apispec.ErrNoSchema) {
		params, _, err = m.Propose(w.apiRand, true)
	}
	if err != nil {
		return mutate.Case{}, false
	}
	frame := r.callFrame(m, []byte("1"), params)
	if len(frame) > r.cfg.MaxFrame {
		return mutate.Case{}, false
	}
	if valid && m.Idempotent && w.apiRand.IntN(4) == 0 {
		return mutate.Case{Frames: [][]byte{frame, r.callFrame(m, []byte("2"), params)}}, true
	}
	return r.apiSession(w, m, params, frame), true
}

// callOf returns the first frame of c that calls a method of the API, the
// method and the params the frame carries.
func (a *apiRules) callOf(c mutate.Case) (frame []byte, m *apispec.Method, params []byte, ok bool) {
	if a == nil || c.Wire != nil {
		return nil, nil, nil, false
	}
	var msg wire.Message
	for _, f := range c.Frames {
		wire.Scan(f, &msg)
		if classify(&msg) != oracle.Call {
			continue
		}
		if m, params, ok := a.api.Find(&msg); ok {
			return f, m, params, true
		}
	}
	return nil, nil, nil, false
}

// minimizeCall is the schema-aware minimization of a finding whose input
// is one call of the API: the call is written again with only the
// envelope's four members (the finding must still hold), then its params
// alone are shrunk (members and elements dropped, strings shortened,
// numbers simplified, nesting halved: minimize's tree passes), each try a
// valid call of the same method with the same id. So a finding reads as
// the method and the arguments that break it. ok is false when the input
// is not such a call, or the call written again does not fail so.
func (r *run) minimizeCall(ctx context.Context, in mutate.Case, hold func(context.Context, mutate.Case) bool, budget int, deadline time.Time) (mutate.Case, minimizeResult, bool) {
	if len(in.Frames) != 1 || budget < 1 {
		return in, minimizeResult{}, false
	}
	frame, m, params, ok := r.api.callOf(in)
	if !ok {
		return in, minimizeResult{}, false
	}
	var msg wire.Message
	wire.Scan(frame, &msg)
	id := append([]byte(nil), msg.ID...)
	call := func(params []byte) mutate.Case {
		return mutate.Case{Frames: [][]byte{r.callFrame(m, id, params)}}
	}
	if !hold(ctx, call(params)) {
		return in, minimizeResult{checks: 1}, false
	}
	if params == nil {
		return call(nil), minimizeResult{checks: 1, complete: true}, true
	}
	shrunk, res := minimizeTree(ctx, mutate.Case{Frames: [][]byte{params}}, func(ctx context.Context, c mutate.Case) bool {
		return json.Valid(c.Frames[0]) && hold(ctx, call(c.Frames[0]))
	}, budget-1, deadline)
	res.checks++
	return call(shrunk.Frames[0]), res, true
}

// apiFile is a finding directory's api.json: the method its call calls,
// so that a replay holds the call to the schemas as the run did.
type apiFile struct {
	Methods            []*apispec.Method `json:"methods"`
	InvalidParamsCodes []int64           `json:"invalid_params_codes"`
	// Meta is apiRules.meta, as a string: its bytes are compared as they
	// are, and MarshalIndent would indent a JSON value.
	Meta string `json:"meta,omitempty"`
}

// describeCall fills in the method a finding's minimized input calls and
// its params, and returns the finding directory's api.json (nil: the
// input calls no method of the API).
func (r *run) describeCall(f *Finding, mini mutate.Case) []byte {
	_, m, params, ok := r.api.callOf(mini)
	if !ok {
		return nil
	}
	f.Method = m.Name
	if params != nil && json.Valid(params) {
		f.Params = append(json.RawMessage(nil), params...)
	}
	b, err := json.MarshalIndent(apiFile{Methods: []*apispec.Method{m}, InvalidParamsCodes: r.api.codes, Meta: string(r.api.meta)}, "", "  ")
	if err != nil {
		return nil // (a method read from JSON writes as JSON)
	}
	return append(b, '\n')
}

// readAPIFile reads a finding directory's api.json (nil, nil when there is
// none).
func readAPIFile(dir string) (*apiRules, error) {
	data, err := os.ReadFile(filepath.Join(dir, "api.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var af struct {
		Methods            json.RawMessage `json:"methods"`
		InvalidParamsCodes []int64         `json:"invalid_params_codes"`
		Meta               string          `json:"meta"`
	}
	if err := json.Unmarshal(data, &af); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "api.json"), err)
	}
	api, err := apispec.FromJSON(af.Methods)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "api.json"), err)
	}
	if len(af.InvalidParamsCodes) == 0 {
		af.InvalidParamsCodes = []int64{invalidParamsCode}
	}
	var meta []byte
	if af.Meta != "" {
		meta = []byte(af.Meta)
	}
	return &apiRules{api: api, codes: af.InvalidParamsCodes, meta: meta}, nil
}
