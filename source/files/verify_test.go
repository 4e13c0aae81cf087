package files

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func TestCompressionOf(t *testing.T) {
	for _, c := range []struct {
		key  string
		opts map[string]any
		want string
	}{
		{"a.csv", nil, ""},
		{"a.csv.gz", nil, "gzip"},
		{"a.CSV.GZIP", nil, "gzip"},
		{"a.json.zst", nil, "zstd"},
		{"a.zstd", nil, "zstd"},
		{"a.csv.gz", map[string]any{"compression": "none"}, ""},
		{"a.csv", map[string]any{"compression": "gzip"}, "gzip"},
		{"a.dat", map[string]any{"compression": "zstd"}, "zstd"},
		{"a.csv.gz", map[string]any{"compression": "auto"}, "gzip"},
	} {
		if got := compressionOf(c.key, c.opts); got != c.want {
			t.Errorf("compressionOf(%q, %v) = %q, want %q", c.key, c.opts, got, c.want)
		}
	}
}

func gz(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zst(t *testing.T, data []byte, opts ...zstd.EOption) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b, opts...)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestVerifyCompressed: whole files pass (multi-member gzip, several zstd
// frames); every way of not ending cleanly is told, with what it is.
func TestVerifyCompressed(t *testing.T) {
	var plain bytes.Buffer
	for i := range 50_000 {
		fmt.Fprintf(&plain, "%d,%d\n", i, i*7919%1_000_003)
	}
	data := plain.Bytes()
	g := gz(t, data)
	z := zst(t, data)
	zNoSum := zst(t, data, zstd.WithEncoderCRC(false))
	flip := func(b []byte, at int) []byte {
		c := bytes.Clone(b)
		c[at] ^= 0xff
		return c
	}
	for _, c := range []struct {
		name, kind string
		file       []byte
		want       string // "" passes
	}{
		{"gzip whole", "gzip", g, ""},
		{"gzip two members", "gzip", append(gz(t, data[:1000]), gz(t, data[1000:])...), ""},
		{"gzip trailer cut", "gzip", g[:len(g)-4], "truncated"},
		{"gzip trailer gone", "gzip", g[:len(g)-8], "truncated"},
		{"gzip cut in the data", "gzip", g[:len(g)/2], "truncated"},
		{"gzip second member cut", "gzip", append(gz(t, data[:1000]), gz(t, data[1000:])[:100]...), "truncated"},
		{"gzip header only", "gzip", g[:10], "truncated"},
		{"gzip CRC wrong", "gzip", flip(g, len(g)-6), "corrupt"},
		{"gzip length wrong", "gzip", flip(g, len(g)-2), "corrupt"},
		{"gzip garbage after the last member", "gzip", append(bytes.Clone(g), "garbage"...), "not gzip data"},
		{"not gzip", "gzip", data[:100], "not gzip"},
		{"zstd whole", "zstd", z, ""},
		{"zstd two frames", "zstd", append(zst(t, data[:1000]), zst(t, data[1000:])...), ""},
		{"zstd no checksum, whole", "zstd", zNoSum, ""},
		{"zstd checksum cut", "zstd", z[:len(z)-2], "truncated"},
		{"zstd cut in the data", "zstd", z[:len(z)/2], "truncated"},
		{"zstd no checksum, cut", "zstd", zNoSum[:len(zNoSum)-10], "truncated"},
		{"zstd checksum wrong", "zstd", flip(z, len(z)-1), "corrupt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(p, c.file, 0o644); err != nil {
				t.Fatal(err)
			}
			err := verifyCompressed(context.Background(), p, c.kind)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("verifyCompressed: %v, want nil", err)
			case c.want != "" && err == nil:
				t.Errorf("verifyCompressed: nil, want an error saying %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Errorf("verifyCompressed: %v, want it to say %q", err, c.want)
			}
		})
	}
}

// TestSettledAt: a file's timestamps can hide a write of the same size
// until the clock tick of its last change (its ctime, else its mtime) has
// passed; whole-second timestamps mean a coarse clock.
func TestSettledAt(t *testing.T) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		s    stamp
		want time.Time
	}{
		{"fine ctime", stamp{mtime: base.Add(123456789).UnixNano(), ctime: base.Add(223456789).UnixNano()}, base.Add(223456789).Add(fineTick)},
		{"mtime set to a whole second, fine ctime", stamp{mtime: base.Add(-time.Hour).UnixNano(), ctime: base.Add(5).UnixNano()}, base.Add(5).Add(fineTick)},
		{"coarse disk", stamp{mtime: base.UnixNano(), ctime: base.UnixNano()}, base.Add(coarseTick)},
		{"no ctime, fine mtime", stamp{mtime: base.Add(7).UnixNano()}, base.Add(7).Add(fineTick)},
		{"no ctime, coarse mtime", stamp{mtime: base.UnixNano()}, base.Add(coarseTick)},
	} {
		if got := c.s.settledAt(); !got.Equal(c.want) {
			t.Errorf("%s: settledAt = %v, want %v", c.name, got, c.want)
		}
	}
}
