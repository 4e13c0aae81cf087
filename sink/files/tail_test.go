package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
)

// TestGrowingFile reads a file while another goroutine writes it in
// uneven pieces with pauses, as the engine writes its output: the reader
// gets every byte once, in order, and ends only after the writer is done;
// a rewrite of bytes already read is caught by matches.
func TestGrowingFile(t *testing.T) {
	dir := t.TempDir()
	want := make([]byte, 3<<20)
	for i := range want {
		want[i] = byte(rand.IntN(256))
	}
	g := &growingFile{ctx: context.Background(), dir: dir, prefix: "data_0.", ended: make(chan struct{}), h: xxh3.New()}
	go func() {
		time.Sleep(50 * time.Millisecond) // the file appears late
		f, err := os.Create(filepath.Join(dir, "data_0.parquet"))
		if err != nil {
			panic(err)
		}
		for rest := want; len(rest) > 0; {
			n := min(len(rest), 1+rand.IntN(400<<10))
			if _, err := f.Write(rest[:n]); err != nil {
				panic(err)
			}
			rest = rest[n:]
			time.Sleep(time.Duration(rand.IntN(15)) * time.Millisecond)
		}
		f.Close()
		close(g.ended)
	}()
	got, err := io.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || g.name != "data_0.parquet" {
		t.Fatalf("read %d bytes of %s, want the %d written", len(got), g.name, len(want))
	}
	g.verify()
	if !g.matches() {
		t.Fatal("matches: false for the file as read")
	}
	f, err := os.OpenFile(filepath.Join(dir, "data_0.parquet"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{want[10] ^ 0xff}, 10); err != nil {
		t.Fatal(err)
	}
	f.Close()
	g.verify()
	if g.matches() {
		t.Fatal("matches: true after a byte already sent was rewritten")
	}
}

// TestGrowingFileEngineFailed: when the engine fails the reader fails
// (the upload is then aborted), and without a data_0 file it fails too.
func TestGrowingFileEngineFailed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data_0.csv"), []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &growingFile{ctx: context.Background(), dir: dir, prefix: "data_0.", ended: make(chan struct{}), h: xxh3.New()}
	boom := errors.New("boom")
	g.failed = boom
	close(g.ended)
	if _, err := io.ReadAll(g); !errors.Is(err, boom) {
		t.Fatalf("ReadAll after a failed engine: %v, want boom", err)
	}
	empty := &growingFile{ctx: context.Background(), dir: t.TempDir(), prefix: "data_0.", ended: make(chan struct{}), h: xxh3.New()}
	close(empty.ended)
	if _, err := io.ReadAll(empty); err == nil {
		t.Fatal("ReadAll without a data_0 file: no error")
	}
}
