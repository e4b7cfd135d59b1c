package scenario

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem in a scenario file, at a position inside it.
type Error struct {
	File string // the file name given to Parse (or the path given to Load)
	Line int    // 1-based line
	Col  int    // 1-based column
	Msg  string // what is wrong and what was expected
}

// Error formats e as file:line:col: message.
func (e Error) Error() string {
	return e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + ": " + e.Msg
}

// Errors is every problem Parse found in a file, sorted by position. Its
// Error method prints one problem per line.
type Errors []Error

// Error prints each problem on its own line as file:line:col: message.
func (l Errors) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// sort orders l by position; problems at the same position keep the order
// in which they were found.
func (l Errors) sort() {
	slices.SortStableFunc(l, func(a, b Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}

// yamlLine finds the line number in a yaml.v3 syntax error ("yaml: line 3:
// did not find expected key").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError records an error of the YAML parser. The parser reports a
// line (sometimes one past the last) and no column; the column is 1.
func (p *parser) syntaxError(err error) {
	msg, line := err.Error(), 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	line, _ = p.clamp(line, 1)
	p.errs = append(p.errs, Error{File: p.file, Line: line, Col: 1, Msg: "YAML syntax: " + msg})
}
