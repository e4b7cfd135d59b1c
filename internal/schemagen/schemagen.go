// Package schemagen generates JSON values from a JSON Schema: values the
// schema accepts, for load (scenario discovery), and values it rejects by
// breaking one constraint, for fuzzing.
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
	g, err := newGen(schema, r)
	if err != nil {
		return nil, nil, err
	}
	v, err := g.valid(g.d.root, 0)
	g.skippedNotes()
	if err != nil {
		return nil, g.notes, err
	}
	return appendJSON(nil, v), g.notes, nil
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
