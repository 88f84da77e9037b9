package cli

import "testing"

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"65536", 65536}, {"512KiB", 512 << 10}, {"64MiB", 64 << 20}, {"64mb", 64 << 20},
		{"1G", 1 << 30}, {"4GiB", 4 << 30}, {"100B", 100}, {" 2 MiB ", 2 << 20},
		{"0", -1}, {"-1", -1}, {"5GiB", -1}, {"1.5MiB", -1}, {"MiB", -1}, {"12XB", -1},
	} {
		var b ByteSize
		err := b.Set(tc.in)
		switch {
		case tc.want < 0 && err == nil:
			t.Errorf("Set(%q) = %d, want an error", tc.in, b)
		case tc.want >= 0 && (err != nil || int(b) != tc.want):
			t.Errorf("Set(%q) = %d, %v, want %d", tc.in, b, err, tc.want)
		}
	}
	b := ByteSize(256 << 20)
	if b.String() != "256MiB" {
		t.Errorf("String() = %q", b.String())
	}
}
