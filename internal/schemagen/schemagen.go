// Package schemagen generates JSON values from a JSON Schema: values the
// schema accepts, plausible ones for load (scenario discovery, Valid) or
// ones at the edges where handlers break (API-aware fuzzing, ValidEdges),
// and values it rejects by breaking one constraint, for fuzzing (Invalid).
//
// It reads draft 2020-12 and the common draft-07 subset: type (one or a
// list), enum, const, properties, required, additionalProperties,
// patternProperties, min/maxProperties, dependentRequired, items,
// prefixItems (and draft-07 tuple items with additionalItems), min/maxItems,
// uniqueItems, contains, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, multipleOf, min/maxLength, pattern, format (date-time,
// date, time, uuid, email, uri, uri-reference, hostname, ipv4, ipv6), allOf,
// anyOf, oneOf, not, if/then/else (checked, not steered), $ref to a location
// in the same document (#/$defs/..., #/definitions/..., #), default and
// examples (used now and then).
//
// Every value is held against a checker of the same keywords before it is
// returned, so a value Valid returns is valid and a value Invalid returns is
// invalid for those keywords (unevaluatedProperties, unevaluatedItems,
// dependentSchemas and dynamic references are not checked; formats are
// annotations, as 2020-12 says, so no value is invalid by format alone).
// Patterns are generated from their regular expression (Go's syntax, the
// usual subset of ECMA-262); one that cannot be generated falls back to the
// schema's examples or default, which ValidNotes reports.
//
// ValidEdges generates like Valid, but at every choice point it takes, half
// the time, an edge of what the schema allows instead of a plausible value:
// for integers the bounds (the first integer inside an exclusive one), 0, 1,
// -1 and, on a side without a bound, 2^31-1, -2^31, 2^53, 2^53+1, 2^63-1,
// -2^63 and 2^64; for numbers also 0.5, -0.5, 0.0000001 and
// 1000000000000000.5 (multipleOf respected; every number, the schema's enum,
// const and examples included, written without an exponent, never -0); for
// strings "", minLength, a long one (maxLength, or 1,000 to 4,096
// characters), unicode (non-ASCII letters, an emoji outside the BMP, a
// combining mark, right-to-left text, control characters), whitespace only,
// or a keyword or number ("null", "0", "-1"); edges of a format, or a short
// or long match of a pattern; for arrays empty, minItems, maxItems, and
// without maxItems 1,001 or 5,000 items (a few generated items repeated);
// for objects only the required members or every property, and now and then
// an extra member with an edge name ("", "__proto__", a long or a non-ASCII
// name) when additionalProperties allows; for enums the first or the last
// member. Each value is still held against the checker, so a value
// ValidEdges returns is valid, and the whole is at most 1 MiB.
//
// Generation is deterministic for a given random source and bounded: nesting
// (optional members and items stop a few levels down, so a recursive $ref
// ends), items and string lengths, and total work are limited, and a schema
// beyond them is an error, never a hang.
package schemagen

import (
	"math/rand/v2"
)

// Valid returns a JSON value the schema accepts.
func Valid(schema []byte, r *rand.Rand) ([]byte, error) {
	v, _, err := ValidNotes(schema, r)
	return v, err
}

// ValidNotes is Valid that also says where the generator fell back: a
// pattern it could not generate from (and the example or default it used
// instead), or a keyword it does not check.
func ValidNotes(schema []byte, r *rand.Rand) (value []byte, notes []string, err error) {
	return validNotes(schema, r, false)
}

// ValidEdges returns a JSON value the schema accepts, biased to the edges of
// what it allows (see the package documentation): bounds, extreme numbers,
// empty and long strings and arrays, unicode, only-required or all members.
func ValidEdges(schema []byte, r *rand.Rand) ([]byte, error) {
	v, _, err := ValidEdgesNotes(schema, r)
	return v, err
}

// ValidEdgesNotes is ValidEdges with the notes of ValidNotes.
func ValidEdgesNotes(schema []byte, r *rand.Rand) (value []byte, notes []string, err error) {
	return validNotes(schema, r, true)
}

func validNotes(schema []byte, r *rand.Rand, edges bool) (value []byte, notes []string, err error) {
	g, err := newGen(schema, r)
	if err != nil {
		return nil, nil, err
	}
	if edges {
		g.edges = true
		g.c.memo = map[memoKey]bool{}
	}
	v, err := g.valid(g.d.root, 0)
	g.skippedNotes()
	if err != nil {
		return nil, g.notes, err
	}
	out := appendJSON(nil, v)
	if edges && len(out) > sizeBudget { // values the schema repeats (const, enum) are not in g.size
		return nil, g.notes, errBudget
	}
	return out, g.notes, nil
}

// Invalid returns a JSON value the schema rejects.
func Invalid(schema []byte, r *rand.Rand) ([]byte, error) {
	v, _, err := InvalidWith(schema, r)
	return v, err
}

// InvalidWith returns a JSON value the schema rejects and the constraint it
// breaks: the keyword, followed by " at " and a JSON pointer into the value
// when the broken constraint belongs to a member, e.g. "type",
// "required at /user", "minimum at /items/0/qty". Values of valid
// schemas around the broken one are valid, so the break is the one named
// (the value may break others at the same place, e.g. a string truncated
// below minLength may no longer match its pattern). "false" means the
// schema, or a part of it, accepts nothing; "anyOf", "oneOf", "not", "if",
// "allOf", "$ref" or "schema" mean a probe value of some JSON type was
// rejected as a whole. It returns ErrNoInvalid when the schema accepts
// everything.
func InvalidWith(schema []byte, r *rand.Rand) (value []byte, broke string, err error) {
	g, err := newGen(schema, r)
	if err != nil {
		return nil, "", err
	}
	v, b, err := g.invalid(g.d.root, 0, "")
	if err != nil {
		return nil, "", err
	}
	return appendJSON(nil, v), b.String(), nil
}

func (g *gen) skippedNotes() {
	for _, k := range unsupported {
		if g.c.skipped[k] {
			g.note("%s is not checked: the value may not satisfy it", k)
		}
	}
}
