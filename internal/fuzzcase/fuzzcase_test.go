package fuzzcase

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcload/rpcload/internal/mutate"
)

func frames(fs ...string) [][]byte {
	out := make([][]byte, len(fs))
	for i, f := range fs {
		out[i] = []byte(f)
	}
	return out
}

// sameCase compares cases the way a transport sees them: the bytes of each
// frame, and whether Wire is present at all (nil and empty differ).
func sameCase(a, b mutate.Case) bool {
	if len(a.Frames) != len(b.Frames) || (a.Wire == nil) != (b.Wire == nil) || !bytes.Equal(a.Wire, b.Wire) {
		return false
	}
	for i := range a.Frames {
		if !bytes.Equal(a.Frames[i], b.Frames[i]) {
			return false
		}
	}
	return true
}

func TestEncode(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		name string
		in   mutate.Case
		want []byte
	}{
		{"one frame", mutate.Case{Frames: frames(`{}`)}, []byte("\xff\x01\x02{}")},
		{"two frames", mutate.Case{Frames: frames(`[]`, `1`)}, []byte("\xff\x02\x02[]\x011")},
		{"empty frame", mutate.Case{Frames: frames(``)}, []byte("\xff\x01\x00")},
		{"two-byte length", mutate.Case{Frames: frames(long)}, append([]byte("\xff\x01\xc8\x01"), long...)},
		{"wire", mutate.Case{Frames: frames(`{}`), Wire: []byte("{\n}")}, []byte("\xff\x01\x02{}\xff\x03{\n}")},
		{"empty wire", mutate.Case{Frames: frames(`{}`), Wire: []byte{}}, []byte("\xff\x01\x02{}\xff\x00")},
		{"wire only", mutate.Case{Wire: []byte("x")}, []byte("\xff\x00\xff\x01x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Encode(tt.in)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("Encode = %q, want %q", got, tt.want)
			}
			back, ok := Decode(got)
			if !ok || !sameCase(back, tt.in) {
				t.Fatalf("Decode(Encode) = %q, %v; want %q", back, ok, tt.in)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"json", `{"jsonrpc":"2.0"}`},
		{"marker alone", "\xff"},
		{"no frames and no wire", "\xff\x00"},
		{"count past the end", "\xff\x05\x00"},
		{"frame past the end", "\xff\x01\x05ab"},
		{"length cut", "\xff\x01\x80"},
		{"count not shortest", "\xff\x81\x00\x00"},
		{"length not shortest", "\xff\x01\x80\x00"},
		{"trailing byte", "\xff\x01\x01ab"},
		{"wire not after marker", "\xff\x01\x01a\x01b"},
		{"wire past the end", "\xff\x01\x01a\xff\x02b"},
		{"bytes after wire", "\xff\x01\x01a\xff\x01bc"},
		{"count overflows", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, ok := Decode([]byte(tt.data)); ok {
				t.Fatalf("Decode(%q) = %q, true; want false", tt.data, c)
			}
		})
	}
}

// TestDecodeCapsFrames checks that appending to a decoded frame cannot write
// over the next one in the shared input.
func TestDecodeCapsFrames(t *testing.T) {
	data := Encode(mutate.Case{Frames: frames("ab", "cd")})
	c, ok := Decode(data)
	if !ok {
		t.Fatal("Decode failed")
	}
	_ = append(c.Frames[0], 'X')
	if string(c.Frames[1]) != "cd" {
		t.Fatalf("second frame = %q after appending to the first, want cd", c.Frames[1])
	}
}

func randomCase(r *rand.Rand) mutate.Case {
	var c mutate.Case
	for range r.IntN(5) {
		f := make([]byte, r.IntN(300))
		for i := range f {
			f[i] = byte(r.Uint32())
		}
		c.Frames = append(c.Frames, f)
	}
	if len(c.Frames) == 0 || r.IntN(3) == 0 {
		c.Wire = make([]byte, r.IntN(200))
		for i := range c.Wire {
			c.Wire[i] = byte(r.Uint32())
		}
	}
	return c
}

func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 1))
	for i := range 2000 {
		c := randomCase(r)
		data := Encode(c)
		back, ok := Decode(data)
		if !ok || !sameCase(back, c) {
			t.Fatalf("case %d: Decode(Encode(%q)) = %q, %v", i, c, back, ok)
		}
		file := MarshalGoCorpus(data)
		got, err := UnmarshalGoCorpus(file)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("case %d: UnmarshalGoCorpus(MarshalGoCorpus(%q)) = %q, %v", i, data, got, err)
		}
	}
}

func TestMarshalGoCorpus(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{"empty", "", `[]byte("")`},
		{"json", `{"id":1}`, `[]byte("{\"id\":1}")`},
		{"controls", "\x00\t\n\r\x1b\x7f", `[]byte("\x00\t\n\r\x1b\x7f")`},
		{"backslash", `\u00e9`, `[]byte("\\u00e9")`},
		{"printable utf-8 kept", "é€😀", `[]byte("é€😀")`},
		{"invalid utf-8 as \\x", "\xff\xc3\xed\xa0\x80", `[]byte("\xff\xc3\xed\xa0\x80")`},
		{"non-printable runes as \\u", "\u2028\ufeff\u00a0", `[]byte("\u2028\ufeff\u00a0")`},
		{"astral non-printable as \\U", "\U000e0001", `[]byte("\U000e0001")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := "go test fuzz v1\n" + tt.want + "\n"
			if got := MarshalGoCorpus([]byte(tt.data)); string(got) != want {
				t.Fatalf("MarshalGoCorpus(%q) = %q, want %q", tt.data, got, want)
			}
		})
	}
}

// TestGoWrittenFiles reads corpus files written by `go test -fuzz` itself
// (testdata/gocorpus, kept verbatim) and writes them back byte for byte.
func TestGoWrittenFiles(t *testing.T) {
	want := map[string]string{
		"minimized":   "0000\x1c\xf1\"",
		"utf8-mixed":  "{\"a\":\"é\t\u2028\"}.\xfa\n",
		"multi-frame": "\xff\x02\x0e{\"jsonrpc\":\"2\"}\x02[]",
	}
	for name, data := range want {
		t.Run(name, func(t *testing.T) {
			file, err := os.ReadFile(filepath.Join("testdata", "gocorpus", name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := UnmarshalGoCorpus(file)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != data {
				t.Fatalf("UnmarshalGoCorpus = %q, want %q", got, data)
			}
			if back := MarshalGoCorpus(got); !bytes.Equal(back, file) {
				t.Fatalf("MarshalGoCorpus = %q, want the file Go wrote %q", back, file)
			}
		})
	}
}

func TestUnmarshalGoCorpus(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    string
		wantErr string // a piece of the error; "" = no error
	}{
		{"canonical", "go test fuzz v1\n[]byte(\"a\\x00\")\n", "a\x00", ""},
		{"no final newline", "go test fuzz v1\n[]byte(\"a\")", "a", ""},
		{"crlf", "go test fuzz v1\r\n[]byte(\"a\")\r\n", "a", ""},
		{"blank lines and spaces", "go test fuzz v1\n\n  []byte( \"a\" )  \n\n", "a", ""},
		{"raw string", "go test fuzz v1\n[]byte(`a\\n`)\n", `a\n`, ""},
		{"concatenation", "go test fuzz v1\n[]byte(\"a\" + \"b\")\n", "", "line 2"},
		{"empty", "", "", "empty"},
		{"wrong version", "go test fuzz v2\n[]byte(\"a\")\n", "", "line 1"},
		{"no value", "go test fuzz v1\n", "", "no value"},
		{"two values", "go test fuzz v1\n[]byte(\"a\")\n[]byte(\"b\")\n", "", "line 3: a second value"},
		{"string value", "go test fuzz v1\nstring(\"a\")\n", "", "not a []byte value"},
		{"int value", "go test fuzz v1\nint(1)\n", "", "not a []byte value"},
		{"array type", "go test fuzz v1\n[4]byte(\"a\")\n", "", "not a []byte value"},
		{"uint8 slice", "go test fuzz v1\n[]uint8(\"a\")\n", "", "not a []byte value"},
		{"not a call", "go test fuzz v1\n\"a\"\n", "", "not a conversion"},
		{"number literal", "go test fuzz v1\n[]byte(1)\n", "", "string literal"},
		{"bad escape", "go test fuzz v1\n[]byte(\"\\q\")\n", "", "line 2"},
		{"unterminated", "go test fuzz v1\n[]byte(\"a)\n", "", "not a Go expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := UnmarshalGoCorpus([]byte(tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("UnmarshalGoCorpus(%q) = %q, %v; want an error containing %q", tt.file, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("UnmarshalGoCorpus(%q) = %q, %v; want %q", tt.file, got, err, tt.want)
			}
		})
	}
}

// FuzzDecode checks that the literal form is canonical: whatever Decode
// accepts, Encode writes back unchanged.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(mutate.Case{Frames: frames(`{"jsonrpc":"2.0","id":1,"method":"a"}`)}))
	f.Add(Encode(mutate.Case{Frames: frames(`[]`, ``), Wire: []byte("[]\n\n")}))
	f.Add([]byte("\xff\x81\x00"))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ok := Decode(data)
		if !ok {
			return
		}
		if len(c.Frames) == 0 && c.Wire == nil {
			t.Fatalf("Decode(%q) accepted an empty case", data)
		}
		if back := Encode(c); !bytes.Equal(back, data) {
			t.Fatalf("Encode(Decode(%q)) = %q", data, back)
		}
	})
}

// FuzzUnmarshalGoCorpus checks both directions of the Go corpus format: a
// file that reads back writes a file that reads back the same bytes, and any
// bytes written read back unchanged.
func FuzzUnmarshalGoCorpus(f *testing.F) {
	f.Add([]byte("go test fuzz v1\n[]byte(\"a\\x00\")\n"))
	f.Add([]byte("go test fuzz v1\r\n[]byte(`\\`)\n"))
	f.Add([]byte("go test fuzz v1\n[]byte(\"\\u2028\\U0001F600\\377\")\n"))
	f.Fuzz(func(t *testing.T, file []byte) {
		if data, err := UnmarshalGoCorpus(file); err == nil {
			again, err := UnmarshalGoCorpus(MarshalGoCorpus(data))
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("file %q: data %q wrote a file that reads back %q, %v", file, data, again, err)
			}
		}
		// The fuzzer's bytes double as raw data for the writer.
		back, err := UnmarshalGoCorpus(MarshalGoCorpus(file))
		if err != nil || !bytes.Equal(back, file) {
			t.Fatalf("UnmarshalGoCorpus(MarshalGoCorpus(%q)) = %q, %v", file, back, err)
		}
	})
}
