package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzScan(f *testing.F) {
	for _, tc := range scanCases {
		f.Add([]byte(tc.frame))
	}
	for _, s := range []string{
		nest(DefaultMaxDepth, "[", "]", ""),
		nest(DefaultMaxDepth+1, "[", "]", ""),
		`{"jsonrpc":"2.0","id":1,"result":` + nest(DefaultMaxDepth-1, `{"a":`, "}", "[]") + "}",
		`[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":"2","error":{"code":-32601,"message":"x"}},3]`,
		`{"jsonrpc":"2.0","id":-12.5e+3,"method":"a\u0000b","params":[true,false,null]}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":null,"x":1,"\u0078":2}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		Scan(data, &m)
		valid := json.Valid(data)
		if m.Problems.Has(ProblemInvalidJSON) == valid {
			t.Fatalf("invalid_json = %v but json.Valid = %v (problems %q)", !valid, valid, m.Problems)
		}
		if !valid {
			if !reflect.DeepEqual(m, Message{Kind: KindInvalid, Problems: ProblemInvalidJSON}) {
				t.Fatalf("invalid frame left state: %+v", m)
			}
			return
		}
		if m.Problems.Has(ProblemInvalidUTF8) == utf8.Valid(data) {
			t.Fatalf("invalid_utf8 = %v but utf8.Valid = %v", !utf8.Valid(data), utf8.Valid(data))
		}
		trimmed := bytes.TrimLeft(data, " \t\r\n")
		if (m.Kind == KindBatch) != (trimmed[0] == '[') {
			t.Fatalf("kind %v for a frame starting with %q", m.Kind, trimmed[0])
		}
		switch trimmed[0] {
		case '[':
			checkBatch(t, data, &m)
		case '{':
			checkEnvelope(t, data, &m)
		default:
			if m.Kind != KindInvalid || m.Problems&^ProblemInvalidUTF8 != ProblemNotObject {
				t.Fatalf("scalar gave %v %q", m.Kind, m.Problems)
			}
		}
	})
}

func checkBatch(t *testing.T, data []byte, m *Message) {
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		t.Fatal(err)
	}
	notObject := false
	off, n := 0, 0
	for ; ; n++ {
		elem, next, ok := NextElement(data, off)
		if !ok {
			break
		}
		if n >= len(elems) || !bytes.Equal(elem, elems[n]) {
			t.Fatalf("element %d = %q, encoding/json says %q", n, elem, elems)
		}
		notObject = notObject || elem[0] != '{'
		off = next
	}
	if n != len(elems) || m.BatchLen != n {
		t.Fatalf("BatchLen %d, NextElement %d, encoding/json %d", m.BatchLen, n, len(elems))
	}
	if m.Problems.Has(ProblemNotObject) != notObject || m.Problems&^(ProblemNotObject|ProblemInvalidUTF8) != 0 {
		t.Fatalf("batch problems %q", m.Problems)
	}
}

// members lists the decoded member names of the object raw in order, as
// encoding/json decodes them, plus the raw values of the map it would build.
func members(t *testing.T, raw []byte) (names []string, obj map[string]json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v %v", tok, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		names = append(names, tok.(string))
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return names, obj
}

// hasDup reports whether names repeat, and whether Scan is bound to notice:
// repeats of recognised names always, others within the extra-name window.
func hasDup(names []string, known string) (dup, detectable bool) {
	seen := map[string]bool{}
	var extra []string
	for _, n := range names {
		isKnown := strings.Contains(known, ","+n+",")
		if seen[n] {
			dup = true
			if isKnown || indexOf(extra, n) < maxExtraNames {
				detectable = true
			}
		} else if !isKnown {
			extra = append(extra, n)
		}
		seen[n] = true
	}
	return dup, detectable
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return len(list)
}

func decodeAny(t *testing.T, raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", raw, err)
	}
	return v
}

func compact(t *testing.T, raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compact %q: %v", raw, err)
	}
	return b.String()
}

// checkEnvelope recomputes the classification with encoding/json as an
// independent oracle whenever the envelope has no duplicate members.
func checkEnvelope(t *testing.T, data []byte, m *Message) {
	names, obj := members(t, data)
	dup, detectable := hasDup(names, ",jsonrpc,id,method,params,result,error,")
	if detectable && !m.Problems.Has(ProblemDuplicateKey) {
		t.Fatalf("duplicate member %q not reported", names)
	}
	if dup {
		return // the map lost occurrences; the fields are covered by unit tests
	}
	var want Problem
	raw := func(name string, got []byte) (json.RawMessage, bool) {
		v, ok := obj[name]
		if ok != (got != nil) && !(name == "method" && ok) {
			t.Fatalf("%s present=%v, Scan has %q", name, ok, got)
		}
		if ok && got != nil && compact(t, got) != compact(t, v) {
			t.Fatalf("%s = %q, encoding/json has %q", name, got, v)
		}
		return v, ok
	}
	if v, ok := obj["jsonrpc"]; !ok || decodeAny(t, v) != "2.0" {
		want |= ProblemBadVersion
	}
	id, hasID := raw("id", m.ID)
	if hasID {
		dv := decodeAny(t, id)
		if !reflect.DeepEqual(decodeAny(t, m.ID), dv) {
			t.Fatalf("id %q decodes differently from %q", m.ID, id)
		}
		kind := IDOther
		switch v := dv.(type) {
		case nil:
			kind = IDNull
		case string:
			kind = IDString
		case json.Number:
			kind = IDNumber
			if strings.ContainsAny(string(v), ".eE") {
				want |= ProblemFractionalID
			}
		default:
			want |= ProblemBadID
		}
		if m.IDKind != kind {
			t.Fatalf("IDKind %d, want %d", m.IDKind, kind)
		}
	} else if m.IDKind != IDAbsent {
		t.Fatalf("IDKind %d without id", m.IDKind)
	}
	method, hasMethod := raw("method", m.Method)
	if hasMethod {
		if s, ok := decodeAny(t, method).(string); !ok {
			want |= ProblemBadMethod
		} else if u, ok := Unquote(nil, m.Method); !ok || string(u) != s {
			t.Fatalf("Unquote(%q) = %q, %v; encoding/json says %q", m.Method, u, ok, s)
		}
	}
	params, hasParams := raw("params", m.Params)
	if hasParams && params[0] != '[' && params[0] != '{' {
		want |= ProblemBadParams
	}
	_, hasResult := raw("result", m.Result)
	errRaw, hasError := raw("error", m.Error)
	if hasError {
		want |= checkErrorObject(t, errRaw, m)
	}
	for _, n := range names {
		if !strings.Contains(",jsonrpc,id,method,params,result,error,", ","+n+",") {
			want |= ProblemExtraMember
		}
	}
	kind := KindInvalid
	switch {
	case hasMethod:
		kind = KindNotification
		if hasID {
			kind = KindRequest
		}
		if hasResult || hasError {
			want |= ProblemMixedMembers
		}
	case hasResult || hasError:
		kind = KindError
		if hasResult {
			kind = KindResult
		}
		if !hasID {
			want |= ProblemMissingID
		}
		if hasParams {
			want |= ProblemMixedMembers
		}
	default:
		want |= ProblemNoResultOrError
	}
	if hasResult && hasError {
		want |= ProblemBothResultAndError
	}
	if got := m.Problems &^ ProblemInvalidUTF8; m.Kind != kind || got != want {
		t.Fatalf("Scan = %v %q, oracle %v %q", m.Kind, got, kind, want)
	}
}

func checkErrorObject(t *testing.T, raw []byte, m *Message) (want Problem) {
	if raw[0] != '{' {
		if m.HasCode || m.ErrMsg != nil || m.ErrData != nil {
			t.Fatalf("error fields from a non-object: %+v", m)
		}
		return ProblemBadErrorObject
	}
	names, obj := members(t, raw)
	dup, detectable := hasDup(names, ",code,message,data,")
	if detectable {
		want |= ProblemDuplicateKey
	}
	if dup && !detectable && m.Problems.Has(ProblemDuplicateKey) {
		want |= ProblemDuplicateKey // found anyway; the window is a lower bound
	}
	for _, n := range names {
		if n != "code" && n != "message" && n != "data" {
			want |= ProblemBadErrorObject
		}
	}
	if dup {
		return want | m.Problems&ProblemBadErrorObject
	}
	var code, msg any
	if raw, ok := obj["code"]; ok {
		code = decodeAny(t, raw)
	}
	switch n, isNum := code.(json.Number); {
	case !isNum || strings.ContainsAny(string(n), ".eE"):
		want |= ProblemBadErrorObject
	default:
		v, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			v = 0
		}
		if m.HasCode != (err == nil) || m.Code != v {
			t.Fatalf("code %s gave %d, %v", n, m.Code, m.HasCode)
		}
	}
	if raw, ok := obj["message"]; ok {
		msg = decodeAny(t, raw)
	}
	if _, isStr := msg.(string); !isStr {
		want |= ProblemBadErrorObject
		if m.ErrMsg != nil {
			t.Fatalf("ErrMsg %q for a non-string", m.ErrMsg)
		}
	} else if compact(t, m.ErrMsg) != compact(t, obj["message"]) {
		t.Fatalf("ErrMsg %q, want %q", m.ErrMsg, obj["message"])
	}
	if data, ok := obj["data"]; ok != (m.ErrData != nil) || ok && compact(t, data) != compact(t, m.ErrData) {
		t.Fatalf("ErrData %q, want %q", m.ErrData, data)
	}
	return want
}

func FuzzCounterID(f *testing.F) {
	f.Add(uint64(0), false, []byte("0"))
	f.Add(uint64(1<<64-1), true, []byte(`"18446744073709551615"`))
	f.Add(uint64(42), true, []byte("18446744073709551616"))
	f.Add(uint64(7), false, []byte(`"07"`))
	f.Add(uint64(7), false, []byte(`-0`))
	f.Fuzz(func(t *testing.T, n uint64, quoted bool, raw []byte) {
		fm := IDInt
		if quoted {
			fm = IDQuoted
		}
		enc := AppendID(nil, n, fm)
		if got, gf, ok := ParseCounterID(enc); !ok || got != n || gf != fm {
			t.Fatalf("ParseCounterID(%s) = %d, %d, %v; want %d, %d", enc, got, gf, ok, n, fm)
		}
		var m Message
		Scan(append(append([]byte(`{"jsonrpc":"2.0","id":`), enc...), `,"result":0}`...), &m)
		if m.Problems != 0 || !bytes.Equal(m.ID, enc) {
			t.Fatalf("Scan of id %s: %q %q", enc, m.ID, m.Problems)
		}
		if p, pf, ok := ParseCounterID(raw); ok {
			if back := AppendID(nil, p, pf); !bytes.Equal(back, raw) {
				t.Fatalf("ParseCounterID(%q) = %d, %d but AppendID gives %q", raw, p, pf, back)
			}
		}
	})
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := AppendString(nil, s)
		if !json.Valid(enc) {
			t.Fatalf("AppendString(%q) = %q is not JSON", s, enc)
		}
		want := replaced(s)
		if utf8.ValidString(s) && want != s {
			t.Fatalf("replaced changed valid text")
		}
		var got string
		if err := json.Unmarshal(enc, &got); err != nil || got != want {
			t.Fatalf("decode(%q) = %q, %v; want %q", enc, got, err, want)
		}
		if std := stdString(t, s); string(enc) != std {
			t.Fatalf("AppendString(%q) = %s, encoding/json says %s", s, enc, std)
		}
		if u, ok := Unquote(nil, enc); !ok || string(u) != want {
			t.Fatalf("Unquote(%q) = %q, %v", enc, u, ok)
		}
		var m Message
		Scan(AppendNotification(nil, enc, nil), &m)
		if m.Kind != KindNotification || m.Problems != 0 || !bytes.Equal(m.Method, enc) {
			t.Fatalf("Scan of method %s: %v %q %q", enc, m.Kind, m.Problems, m.Method)
		}
	})
}
