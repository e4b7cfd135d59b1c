package mutate

import "github.com/rpcload/rpcload/internal/jsontree"

// Dictionary and splice ops: tokens a JSON-RPC server reacts to, and pieces
// of other inputs.

// dictionary is JSON-RPC vocabulary: member names and whole members, the
// spec's error codes, reserved and life-cycle method names, structural
// bytes, and values that are edge cases anywhere.
var dictionary = lits(`"jsonrpc"`, `"2.0"`, `"id"`, `"method"`, `"params"`, `"result"`, `"error"`,
	`"code"`, `"message"`, `"data"`, `"jsonrpc":"2.0"`, `"id":1`, `"id":null`, `"method":"x"`,
	`"params":[]`, `"params":{}`, `"result":null`, `"error":{"code":-32600,"message":"x"}`,
	"{", "}", "[", "]", ":", ",", `"`, `\`, "null", "true", "false", "0", "-0", "1e400",
	"-32700", "-32600", "-32601", "-32602", "-32603", "-32800", "-32002",
	`"rpc.discover"`, `"initialize"`, `"initialized"`, `"shutdown"`, `"exit"`, `"$/cancelRequest"`,
	`"notifications/cancelled"`, `"notifications/initialized"`, `"tools/call"`, `"_meta"`,
	`"requestId"`, `"__proto__"`, `"\u0000"`, `"\ud800"`, `""`, "{}", "[]", "[[[[", "]]]]", `{"":`)

func dictToken(c Chooser, env *Env) []byte {
	if n := len(env.Methods); n > 0 && c.Intn(4) == 0 {
		return quoted(env.Methods[c.Intn(n)])
	}
	return dictionary[c.Intn(len(dictionary))]
}

// dictInsert inserts a token at a structural point, or now and then at any
// byte.
func dictInsert(c Chooser, f []byte, env *Env) ([]byte, bool) {
	tok := dictToken(c, env)
	at, ok := structuralPoint(c, f)
	if !ok || c.Intn(5) == 0 {
		at = c.Intn(len(f) + 1)
	}
	return insert(f, at, tok), true
}

// dictReplace replaces a member name, string or scalar with a token.
func dictReplace(c Chooser, f []byte, env *Env) ([]byte, bool) {
	tok := dictToken(c, env)
	t, ok := pickToken(c, f, func(t token) bool { return t.kind == tokString || t.kind == tokScalar })
	if !ok {
		return nil, false
	}
	if string(f[t.start:t.end]) == string(tok) {
		tok = dictionary[0] // "jsonrpc"
		if string(f[t.start:t.end]) == string(tok) {
			tok = dictionary[1]
		}
	}
	return splice(f, t.start, t.end, tok), true
}

// spliceSubtree replaces a value of the frame with a value (a subtree) of a
// corpus entry.
func spliceSubtree(c Chooser, f []byte, env *Env) ([]byte, bool) {
	if len(env.Corpus) == 0 {
		return nil, false
	}
	donor, ok := parseTree(env.Corpus[c.Intn(len(env.Corpus))])
	if !ok {
		return nil, false
	}
	root, ok := parseTree(f)
	if !ok {
		return nil, false
	}
	all := func(*jsontree.Node) bool { return true }
	piece := pickNode(c, donor, all)
	target := pickNode(c, root, all)
	*target = *piece
	return jsontree.Append(make([]byte, 0, len(f)), root), true
}

// spliceBytes inserts a byte range of a corpus entry into the frame, or
// overwrites a range of the frame with it.
func spliceBytes(c Chooser, f []byte, env *Env) ([]byte, bool) {
	if len(env.Corpus) == 0 {
		return nil, false
	}
	donor := env.Corpus[c.Intn(len(env.Corpus))]
	if len(donor) == 0 {
		return nil, false
	}
	a := c.Intn(len(donor))
	b := a + 1 + c.Intn(len(donor)-a)
	at := c.Intn(len(f) + 1)
	end := at
	if c.Intn(2) == 0 {
		end = at + c.Intn(len(f)-at+1)
	}
	return splice(f, at, end, donor[a:b]), true
}
