package rpcfuzz

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/rpcload/rpcload/internal/check"
	"github.com/rpcload/rpcload/internal/fuzzcase"
)

// Sizes of what a failure message shows.
const (
	shownBytes   = 1 << 10   // of a message or a reply
	shownLiteral = 256 << 10 // of the literal corpus file; past it, only its size
)

// message is the failure (or warning) text for res: the rule and its spec
// reference, where the input came from, what was sent and answered, the
// target's stack for a panic, and for a choice stream the literal form as
// a corpus file to save.
func (res *result) message(data []byte, testName string) string {
	v := res.verdicts[res.main]
	var b strings.Builder
	fmt.Fprintf(&b, "rpcfuzz: %s (%s): %s\n", res.rule, check.SpecRef(res.rule), v.note)
	frames := res.in.Case.Frames
	where := "the whole stream"
	if v.frame >= 0 {
		where = fmt.Sprintf("message %d of %d", v.frame+1, len(frames))
	}
	if res.in.Literal {
		fmt.Fprintf(&b, "input: literal form, %s\n", where)
	} else {
		after := "no op"
		if names := res.in.OpNames(); len(names) > 0 {
			after = strings.Join(names, ", ")
		}
		fmt.Fprintf(&b, "input: seed %q after %s, %s\n", res.in.Seed, after, where)
	}
	switch {
	case v.frame >= 0 && v.frame < len(frames):
		fmt.Fprintf(&b, "sent (%d bytes): %s\n", len(frames[v.frame]), quoteTrunc(frames[v.frame], shownBytes))
	case res.o.wire:
		fmt.Fprintf(&b, "sent as raw stream bytes (%d bytes): %s\n", len(res.o.wireBytes), quoteTrunc(res.o.wireBytes, shownBytes))
	}
	if v.reply != nil {
		fmt.Fprintf(&b, "reply (%d bytes): %s\n", len(v.reply), quoteTrunc(v.reply, shownBytes))
	} else if v.rules.Has(check.Crash) || v.rules.Has(check.Hang) {
		b.WriteString("reply: none\n")
	}
	if others := res.otherRules(); others != "" {
		fmt.Fprintf(&b, "also broken: %s\n", others)
	}
	if len(res.o.stack) > 0 && v.rules.Has(check.Crash) {
		b.WriteString("target stack:\n")
		b.Write(res.o.stack)
		if res.o.stack[len(res.o.stack)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	if !res.in.Literal {
		res.literalAdvice(&b, testName)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// otherRules lists every rule broken besides the finding's own, each
// once, with where.
func (res *result) otherRules() string {
	var parts []string
	seen := map[string]bool{}
	for _, v := range res.verdicts {
		for r := range v.rules.All() {
			where := "stream"
			if v.frame >= 0 {
				where = "message " + strconv.Itoa(v.frame+1)
			}
			s := r.String() + " (" + where + ")"
			if r == res.rule && v.frame == res.verdicts[res.main].frame || seen[s] {
				continue
			}
			seen[s] = true
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// literalAdvice writes the literal form of a choice-stream input as the
// corpus file to save, and the name to save it under.
func (res *result) literalAdvice(b *strings.Builder, testName string) {
	lit := fuzzcase.Encode(res.in.Case)
	file := fuzzcase.MarshalGoCorpus(lit)
	sum := sha256.Sum256(lit)
	name := "rpcfuzz-" + hex.EncodeToString(sum[:8])
	dir := "testdata/fuzz/" + fuzzTestName(testName) + "/"
	b.WriteString("\nThe input Go saves is a choice stream, which replays this input only with this version of rpcfuzz's corpus and mutator.\n")
	fmt.Fprintf(b, "rpcfuzz minimize %sFILE, on the file Go saves, shrinks its messages to the smallest literal case that fails and writes a regression test for it;\n", dir)
	path := dir + name
	if len(file) > shownLiteral {
		fmt.Fprintf(b, "its literal form, to save as %s, is %d bytes: too long to show here; build it with rpcfuzz.Literal from the messages.\n", path, len(file))
		return
	}
	fmt.Fprintf(b, "or, to keep this input unshrunk as a regression test for good, save its literal form as %s:\n", path)
	b.Write(file)
}

// fuzzTestName is the fuzz test's name from a T's name ("FuzzRPC/seed#3",
// "FuzzRPC/5d1e..."), or a placeholder when it is not a fuzz test's.
func fuzzTestName(name string) string {
	name, _, _ = strings.Cut(name, "/")
	if !strings.HasPrefix(name, "Fuzz") {
		return "FuzzXxx"
	}
	return name
}
