package crawler

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/bookmark"

	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/objstore/local"
	"github.com/tidemark-etl/tidemark/store"
)

// writeTree writes files (path → content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gz(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	io.WriteString(w, s)
	w.Close()
	return b.String()
}

func zst(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, s)
	w.Close()
	return b.String()
}

// crawlerFile parses a crawler file written in dir.
func crawlerFile(t *testing.T, dir, text string) *Config {
	t.Helper()
	name := filepath.Join(dir, "crawler.yaml")
	c, err := Parse(name, []byte(text))
	if err != nil {
		t.Fatalf("parsing the crawler file: %v", err)
	}
	return c
}

func mustCrawl(t *testing.T, c *Config, st store.Store) *Report {
	t.Helper()
	r, err := Crawl(context.Background(), c, st, Options{})
	if err != nil {
		t.Fatalf("crawl: %v", err)
	}
	return r
}

// opened counts the files read through counting:// stores, by key.
var opened = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

func resetOpened() map[string]int {
	opened.Lock()
	defer opened.Unlock()
	old := opened.n
	opened.n = map[string]int{}
	return old
}

func init() {
	objstore.Register("counting", func(_ context.Context, location string, _ map[string]string) (objstore.Store, error) {
		s, err := local.New(strings.TrimPrefix(location, "counting://"))
		if err != nil {
			return nil, err
		}
		return &counting{Store: s}, nil
	})
}

// counting is a local store that counts the files opened: each key read
// (Open or a first ReadRange of the key in one crawl) once.
type counting struct {
	*local.Store
	mu   sync.Mutex
	seen map[string]bool
}

func (c *counting) note(key string) {
	c.mu.Lock()
	first := c.seen == nil || !c.seen[key]
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[key] = true
	c.mu.Unlock()
	if first {
		opened.Lock()
		opened.n[key]++
		opened.Unlock()
	}
}

func (c *counting) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	c.note(key)
	return c.Store.Open(ctx, key)
}

func (c *counting) ReadRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	c.note(key)
	return c.Store.ReadRange(ctx, key, off, n)
}

func (c *counting) List(ctx context.Context, prefix string) iter.Seq2[objstore.Object, error] {
	return c.Store.List(ctx, prefix)
}

// dayRows makes CSV content with a header and n rows.
func dayRows(n int, extra string) string {
	var b strings.Builder
	b.WriteString("order_id,customer_id,amount" + extra + "\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,c%d,%d.5", i+1, i%7, i*3)
		if extra != "" {
			b.WriteString(",x")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func mustType(t *testing.T, s string) bookmark.Type {
	t.Helper()
	typ, err := bookmark.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}
