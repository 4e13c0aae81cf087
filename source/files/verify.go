package files

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/engine"
)

// A compressed input is checked to its end while the engine reads it: the
// engine's decompressors read a truncated file as far as it goes and stop
// without a word. Each .gz member's trailer (CRC-32 and length) and each
// zstd frame (its checksum where it has one) must be whole, else the run
// fails naming the file. The check decompresses the file a second time, on
// its own goroutines, alongside the engine.

// compressionOf is how the engine decompresses a source's file: the
// source's compression option, else the key's suffix.
func compressionOf(key string, opts map[string]any) string {
	switch c, _ := opts["compression"].(string); strings.ToLower(c) {
	case "gzip":
		return "gzip"
	case "zstd":
		return "zstd"
	case "none":
		return ""
	}
	lower := strings.ToLower(key)
	switch {
	case strings.HasSuffix(lower, ".gz") || strings.HasSuffix(lower, ".gzip"):
		return "gzip"
	case strings.HasSuffix(lower, ".zst") || strings.HasSuffix(lower, ".zstd"):
		return "zstd"
	}
	return ""
}

// verifyCompressed reads the file at path through its decompressor to the
// end, and says how it does not end cleanly.
func verifyCompressed(ctx context.Context, path, kind string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	in := bufio.NewReaderSize(ctxReader{ctx, f}, 1<<20)
	switch kind {
	case "gzip":
		return verifyGzip(in)
	case "zstd":
		zr, err := zstd.NewReader(in, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return err
		}
		defer zr.Close()
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return zstdError(err)
		}
	}
	return nil
}

// verifyGzip reads every member of a gzip file (a multi-member file is
// gzip files concatenated) and what follows the last one.
func verifyGzip(in *bufio.Reader) error {
	// A file shorter than a gzip header (a small plain file named .gz)
	// is not gzip data, rather than gzip data cut short.
	if magic, _ := in.Peek(2); len(magic) == 2 && (magic[0] != 0x1f || magic[1] != 0x8b) {
		return gzipError(gzip.ErrHeader, true)
	}
	zr, err := gzip.NewReader(in)
	if err != nil {
		return gzipError(err, true)
	}
	defer zr.Close()
	for {
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return gzipError(err, false)
		}
		magic, err := in.Peek(2)
		if err == io.EOF && len(magic) == 0 {
			return nil
		}
		if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			return gzipError(gzip.ErrHeader, false)
		}
		if err := zr.Reset(in); err != nil {
			return gzipError(err, false)
		}
	}
}

func gzipError(err error, first bool) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return errors.New("the gzip data is truncated: it ends before the trailer of its last member (an incomplete copy or upload?)")
	case errors.Is(err, gzip.ErrChecksum):
		return errors.New("the gzip data is corrupt: a member's CRC-32 or length in its trailer does not match its data")
	case errors.Is(err, gzip.ErrHeader) && first:
		return errors.New("the file is not gzip data (no gzip header)")
	case errors.Is(err, gzip.ErrHeader):
		return errors.New("bytes after the last gzip member are not gzip data (a damaged or truncated file?)")
	}
	return fmt.Errorf("reading the gzip data: %w", err)
}

func zstdError(err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return errors.New("the zstd data is truncated: its last frame ends early (an incomplete copy or upload?)")
	case errors.Is(err, zstd.ErrCRCMismatch):
		return errors.New("the zstd data is corrupt: a frame's checksum does not match its data")
	}
	return fmt.Errorf("reading the zstd data: %w", err)
}

// ctxReader stops reading once ctx is done (a run interrupted).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// compressedCheck is one file to check.
type compressedCheck struct {
	src, key, path, kind string
}

// startVerify starts checking the compressed inputs of s, half the
// processors at a time (the engine has the rest), and returns a function
// that waits for the checks and returns their failures, in input order.
func startVerify(ctx context.Context, s engine.Source) func() []error {
	var checks []compressedCheck
	if !s.Stream && (s.Format == "csv" || s.Format == "json") {
		for _, f := range s.Files {
			if kind := compressionOf(f.Key, s.Options); kind != "" && f.Size != 0 && !strings.Contains(f.Location, "://") {
				checks = append(checks, compressedCheck{src: s.Ctx, key: f.Key, path: f.Location, kind: kind})
			}
		}
	}
	if len(checks) == 0 {
		return func() []error { return nil }
	}
	errs := make([]error, len(checks))
	next := make(chan int, len(checks))
	for i := range checks {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(len(checks), max(1, runtime.GOMAXPROCS(0)/2)) {
		wg.Go(func() {
			for i := range next {
				c := checks[i]
				if err := verifyCompressed(ctx, c.path, c.kind); err != nil && ctx.Err() == nil {
					errs[i] = &engine.InputError{Source: c.src, File: c.key, Msg: err.Error()}
				}
			}
		})
	}
	return func() []error {
		wg.Wait()
		var out []error
		for _, err := range errs {
			if err != nil {
				out = append(out, err)
			}
		}
		return out
	}
}
