package mutate

import "testing"

func TestBytesChooser(t *testing.T) {
	tests := []struct {
		name  string
		data  []byte
		n     []int
		want  []int
		after int // bytes consumed
	}{
		{"n=1 consumes nothing", []byte{7}, []int{1, 1}, []int{0, 0}, 0},
		{"one byte up to 256", []byte{7, 255}, []int{256, 10}, []int{7, 5}, 2},
		{"two bytes above 256", []byte{1, 2}, []int{257}, []int{(1<<8 | 2) % 257}, 2},
		{"exhausted gives 0", []byte{9}, []int{100, 100, 1 << 20}, []int{9, 0, 0}, 1},
		{"partial read pads with zeros", []byte{1}, []int{1 << 16}, []int{1 << 8}, 1},
		{"nothing at all", nil, []int{5, 1 << 30}, []int{0, 0}, 0},
		{"n below 1", []byte{3}, []int{0, -4}, []int{0, 0}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewBytes(tc.data).(*byteChooser)
			for i, n := range tc.n {
				if got := c.Intn(n); got != tc.want[i] {
					t.Fatalf("Intn(%d) = %d, want %d", n, got, tc.want[i])
				}
			}
			if c.pos != tc.after {
				t.Fatalf("consumed %d bytes, want %d", c.pos, tc.after)
			}
		})
	}
}

func TestChoosersInRange(t *testing.T) {
	data := make([]byte, 4096)
	for i := range data {
		data[i] = byte(i*131 + 7)
	}
	for name, c := range map[string]Chooser{"rand": NewRand(3), "bytes": NewBytes(data)} {
		for i := range 2000 {
			n := 1 + i*i%100003
			if x := c.Intn(n); x < 0 || x >= n {
				t.Fatalf("%s: Intn(%d) = %d", name, n, x)
			}
		}
	}
	a, b := NewRand(99), NewRand(99)
	for range 100 {
		if a.Intn(1000) != b.Intn(1000) {
			t.Fatal("NewRand not deterministic")
		}
	}
}
