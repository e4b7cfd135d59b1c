package schemagen

import "strconv"

func (g *gen) array(w *object, depth int) (any, error) {
	lo, _ := count(w, "minItems")
	hi, hasHi := count(w, "maxItems")
	if lo > maxCount {
		return nil, errBudget
	}
	prefix, rest := itemSchemas(w)
	if !w.has("items") && !w.has("prefixItems") {
		rest = true
	}
	// a natural length: the tuple, or a few items
	n := int64(len(prefix))
	if rest != false && rest != nil {
		n += int64(g.r.IntN(max(extraItems-depth, 1) + 1))
	}
	if depth > softDepth {
		n = 0
	}
	n = max(n, lo)
	if hasHi {
		n = min(n, hi)
	}
	unique, _ := w.get("uniqueItems")
	n, long := g.edgeCount(w, n, len(prefix), rest, depth)
	if rest == false && n > int64(len(prefix)) {
		return nil, errUnsat
	}
	made := n // long: a few items, repeated below
	if long {
		made = int64(len(prefix) + reuseItems)
	}
	seen := map[string]bool{}
	out := make([]any, 0, made)
	for i := int64(0); i < made; i++ {
		var s any = true
		if i < int64(len(prefix)) {
			s = prefix[i]
		} else if rest != nil {
			s = rest
		}
		var v any
		var err error
		for try := 0; try < 4; try++ {
			v, err = g.valid(s, depth+1)
			if err != nil {
				return nil, err
			}
			if unique != true || !seen[canon(v)] {
				break
			}
		}
		if unique == true {
			seen[canon(v)] = true
		}
		out = append(out, v)
	}
	if long {
		out = g.repeatItems(out, len(prefix), n, lo, depth)
	}
	if cs, ok := w.get("contains"); ok && isSchema(cs) {
		hit := false
		for _, e := range out {
			hit = hit || g.c.valid(cs, e)
		}
		if !hit {
			v, err := g.valid(cs, depth+1)
			if err != nil {
				return nil, err
			}
			if len(out) > len(prefix) {
				out[len(out)-1] = v
			} else {
				out = append(out, v)
			}
		}
	}
	return out, nil
}

func (g *gen) object(w *object, depth int) (any, error) {
	props, _ := obj(w, "properties")
	if props == nil {
		props = newObject()
	}
	reqList, _ := arr(w, "required")
	required := map[string]bool{}
	for _, r := range reqList {
		if s, ok := r.(string); ok {
			required[s] = true
		}
	}
	minP, _ := count(w, "minProperties")
	maxP, hasMax := count(w, "maxProperties")
	if minP > maxCount {
		return nil, errBudget
	}
	// choose the members: required ones, then optional ones half the time
	var keys []string
	chosen := map[string]bool{}
	add := func(k string) {
		if !chosen[k] {
			chosen[k] = true
			keys = append(keys, k)
		}
	}
	var optional []string
	for _, k := range props.keys {
		switch {
		case required[k]:
			add(k)
		case props.vals[k] == false:
		default:
			optional = append(optional, k)
		}
	}
	for _, r := range reqList {
		if s, ok := r.(string); ok {
			add(s)
		}
	}
	members := g.memberEdge(depth)
	for _, k := range optional {
		// optional members thin out with depth, so recursive schemas stay small
		room := !hasMax || int64(len(keys)) < maxP
		switch {
		case members == allMembers && room,
			members == plausibleMembers && depth <= softDepth && g.r.IntN(2+depth) == 0 && room:
			add(k)
		}
	}
	for _, k := range optional {
		if int64(len(keys)) >= minP {
			break
		}
		add(k)
	}
	if dr, ok := obj(w, "dependentRequired"); ok {
		for _, k := range append([]string(nil), keys...) {
			list, _ := dr.vals[k].([]any)
			for _, d := range list {
				if s, ok := d.(string); ok {
					add(s)
				}
			}
		}
	}
	ap, hasAP := w.get("additionalProperties")
	for i := 1; int64(len(keys)) < minP && ap != false; i++ {
		add(g.word(3, 6) + strconv.Itoa(i))
	}
	if k, ok := g.edgeMember(w, ap, chosen, hasMax && int64(len(keys)) >= maxP, depth); ok {
		add(k)
	}
	// members in schema order, the rest after
	out := newObject()
	for _, k := range keys {
		list, named := g.c.propSchemas(w, k)
		var s any = true
		switch {
		case len(list) == 1:
			s = list[0]
		case len(list) > 1:
			o := newObject()
			o.set("allOf", list)
			s = o
		case !named && hasAP:
			s = ap
		}
		v, err := g.valid(s, depth+1)
		if err != nil {
			return nil, err
		}
		out.set(k, v)
	}
	return out, nil
}
