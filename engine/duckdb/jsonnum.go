package duckdb

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/engine"
)

// JSON numbers kept as written. DuckDB's JSON reader parses every number
// with a fraction or an exponent into a DOUBLE before anything sees it: in
// a DECIMAL(38,10) column -99999999.9999999999 became -100000000.0000000000
// with exit 0, and in a VARCHAR column 1.50 became "1.5" and 1e3 "1000.0".
// So before a JSON source with VARCHAR or DECIMAL columns is read, its files
// are scanned for such a number as the value of one of those keys; a file
// that has one is read from a copy in which those numbers are JSON strings
// of their text (the same lines, the same line numbers), which the column
// then reads as written: a VARCHAR keeps the text, a DECIMAL converts it
// exactly or not at all (strict.go). Integers are read exactly as they
// are. A compressed file that has one is refused, naming file, line and
// column. The scan looks at each line once with two byte searches per
// key; a line with a backslash (a key may be escaped) or a candidate value
// is tokenized.

// exactKeys are the JSON keys of r's file columns whose number values
// must be kept as written: VARCHAR and DECIMAL columns.
func (r *reader) exactKeys() map[string]bool {
	if r.src.Format != "json" || r.src.Stream || r.src.Exact || r.rescuing() {
		return nil
	}
	var keys map[string]bool
	for _, c := range r.data {
		t := strings.ToUpper(strings.TrimSpace(c.Type))
		if t == "VARCHAR" || reDecimal.MatchString(t) {
			if keys == nil {
				keys = map[string]bool{}
			}
			keys[c.Name] = true
		}
	}
	return keys
}

// exactNumbers makes r read each file that has a number to keep as
// written from a copy with those numbers quoted (see above). It is called
// before schema evolution reads the files (whose widening pass would take
// -99999999.9999999999 for a DOUBLE) and again after, for the columns it
// added; a key's numbers are quoted once.
func (r *reader) exactNumbers(l *linker) error {
	keys := r.exactKeys()
	fresh := false
	for k := range keys {
		fresh = fresh || !r.exactDone[k]
	}
	if !fresh || len(r.in.paths) == 0 || l == nil {
		return nil
	}
	pass := len(r.exactDone)
	if r.exactDone == nil {
		r.exactDone = map[string]bool{}
	}
	for k := range keys {
		r.exactDone[k] = true
	}
	// A key is searched for as written between quotes; one that a file
	// can only hold escaped (a quote, a backslash, a control character)
	// makes every line one to tokenize (a nil pattern).
	pats := make([][]byte, 0, len(keys))
	for k := range keys {
		if strings.ContainsFunc(k, func(c rune) bool { return c == '"' || c == '\\' || c < 0x20 }) {
			pats = append(pats, nil)
			continue
		}
		pats = append(pats, []byte(`"`+k+`"`))
	}
	type found struct {
		line int64
		col  string
		err  error
	}
	res := make([]found, len(r.in.paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, p := range r.in.paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res[i].line, res[i].col, res[i].err = firstInexact(p, keys, pats)
		}()
	}
	wg.Wait()
	for i, p := range r.in.paths {
		f := res[i]
		if f.err != nil {
			return &engine.InputError{Source: r.src.Ctx, File: r.in.keys[i], Msg: "checking JSON numbers: " + f.err.Error()}
		}
		if f.line == 0 {
			continue
		}
		if compressionSuffix(p) != "" {
			return &engine.InputError{Source: r.src.Ctx, File: r.in.keys[i], Line: f.line, Column: f.col,
				Msg: "a JSON number in a VARCHAR or DECIMAL column would be read as a DOUBLE, changing its digits; " +
					"write it as a JSON string, or decompress the file"}
		}
		q, err := quotedCopy(l, fmt.Sprintf("%d/exact%d", r.n, pass), i, p, r.in.keys[i], keys)
		if err != nil {
			return fmt.Errorf("source %s: %s: %w", r.src.Ctx, r.in.keys[i], err)
		}
		delete(r.in.byKey, p)
		r.in.paths[i] = q
		r.in.byKey[q] = r.in.keys[i]
		if r.in.quoted == nil {
			r.in.quoted = map[string]string{}
		}
		orig := p
		if o, ok := r.in.quoted[p]; ok { // a copy of a copy: the file is the first's
			orig = o
			delete(r.in.quoted, p)
		}
		r.in.quoted[q] = orig
	}
	return nil // the chunks' paths are slices of r.in.paths
}

// openLines opens the file p for reading its lines, decompressed as
// DuckDB would by its name.
func openLines(p string) (io.Reader, func(), error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	switch compressionSuffix(p) {
	case ".gz", ".gzip":
		z, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return z, func() { z.Close(); f.Close() }, nil
	case ".zst", ".zstd":
		z, err := zstd.NewReader(f)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return z, func() { z.Close(); f.Close() }, nil
	}
	return f, func() { f.Close() }, nil
}

// firstInexact returns the first line of the file (and its column) that
// has a number to keep as written, 0 when none does. A file whose blocks
// of whole lines may have none (mayHave) is passed over without looking
// at its lines one by one: 138 MB of JSON Lines took 0.42 s line by line.
func firstInexact(p string, keys map[string]bool, pats [][]byte) (int64, string, error) {
	if may, err := fileMayHave(p, pats); err != nil || !may {
		return 0, "", err
	}
	in, closeFn, err := openLines(p)
	if err != nil {
		return 0, "", err
	}
	defer closeFn()
	br := bufio.NewReaderSize(in, 1<<20)
	var n int64
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read it whole.
			rest, err2 := br.ReadBytes('\n')
			line = append(append([]byte(nil), line...), rest...)
			err = err2
		}
		if len(line) > 0 {
			n++
			if mayHave(line, pats) {
				if col := inexactKey(line, keys, nil); col != "" {
					return n, col, nil
				}
			}
		}
		if err == io.EOF {
			return 0, "", nil
		}
		if err != nil {
			return 0, "", err
		}
	}
}

// fileMayHave reports whether a line of the file may have a number to keep
// as written (mayHave), reading it in blocks of whole lines.
func fileMayHave(p string, pats [][]byte) (bool, error) {
	in, closeFn, err := openLines(p)
	if err != nil {
		return false, err
	}
	defer closeFn()
	buf := make([]byte, 4<<20)
	carry := 0
	for {
		n, err := io.ReadFull(in, buf[carry:])
		end := carry + n
		done := err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !done {
			return false, err
		}
		cut := end
		if !done {
			cut = bytes.LastIndexByte(buf[:end], '\n') + 1
			if cut == 0 { // one line fills the buffer: a bigger one
				buf = append(buf[:end], make([]byte, len(buf))...)
				carry = end
				continue
			}
		}
		if mayHave(buf[:cut], pats) {
			return true, nil
		}
		if done {
			return false, nil
		}
		carry = copy(buf, buf[cut:end])
	}
}

// mayHave reports whether lines may have a number to keep as written: one
// of the keys followed by a colon and a number, or a backslash anywhere.
func mayHave(lines []byte, pats [][]byte) bool {
	if bytes.IndexByte(lines, '\\') >= 0 {
		return true
	}
	for _, pat := range pats {
		if pat == nil {
			return true
		}
		for rest := lines; ; {
			i := bytes.Index(rest, pat)
			if i < 0 {
				break
			}
			rest = rest[i+len(pat):]
			v := bytes.TrimLeft(rest, " \t\r")
			if len(v) > 0 && v[0] == ':' {
				v = bytes.TrimLeft(v[1:], " \t\r")
				if len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
					return true
				}
			}
		}
	}
	return false
}

// inexactKey tokenizes line, a JSON object, and returns the first of keys
// whose value is a number DuckDB would not keep as written (a fraction, an
// exponent, or -0), "" when none is or the line is not an object. With
// spans non-nil it appends the [start, end) of every such number instead.
func inexactKey(line []byte, keys map[string]bool, spans *[][2]int) string {
	s := &scanner{b: line}
	s.ws()
	if !s.eat('{') {
		return ""
	}
	for {
		s.ws()
		if s.eat('}') {
			return ""
		}
		start := s.i
		if !s.str() {
			return ""
		}
		var k string
		if json.Unmarshal(line[start:s.i], &k) != nil {
			return ""
		}
		s.ws()
		if !s.eat(':') {
			return ""
		}
		s.ws()
		vs := s.i
		if !s.value() {
			return ""
		}
		if v := line[vs:s.i]; keys[k] && len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) &&
			(bytes.ContainsAny(v, ".eE") || bytes.HasPrefix(v, []byte("-0"))) {
			if spans == nil {
				return k
			}
			*spans = append(*spans, [2]int{vs, s.i})
		}
		s.ws()
		if !s.eat(',') {
			return ""
		}
	}
}

// scanner walks JSON text without decoding it.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str passes a string, quotes included.
func (s *scanner) str() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
		case '"':
			s.i++
			return true
		default:
			s.i++
		}
	}
	return false
}

// value passes one value: a string, an object or array (nested), or a
// literal or number (up to the next delimiter).
func (s *scanner) value() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		return s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.str() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	}
	start := s.i
	for s.i < len(s.b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(s.b[s.i])) {
		s.i++
	}
	return s.i > start
}

// quotedCopy writes, under sub of the link tree, a copy of the plain file p
// (read path of input i) in which every number of keys that DuckDB would
// not keep as written is a JSON string of its text, line for line, and
// returns its path.
func quotedCopy(l *linker, sub string, i int, p, key string, keys map[string]bool) (string, error) {
	root, err := l.root()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, filepath.FromSlash(sub))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	q := filepath.Join(dir, fmt.Sprintf("%d_%s", i, sanitize(path.Base(key))))
	in, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.Create(q)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	br := bufio.NewReaderSize(in, 1<<20)
	var spans [][2]int
	for {
		line, rerr := br.ReadBytes('\n')
		spans = spans[:0]
		inexactKey(line, keys, &spans)
		last := 0
		for _, sp := range spans {
			w.Write(line[last:sp[0]])
			w.WriteByte('"')
			w.Write(line[sp[0]:sp[1]])
			w.WriteByte('"')
			last = sp[1]
		}
		w.Write(line[last:])
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Close()
			return "", rerr
		}
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return "", err
	}
	return q, out.Close()
}

// originalLines replaces the text of found lines of a quoted copy (read
// path q) with the lines of the file it was copied from, which rejects
// show as written.
func (in *inputs) originalLines(q string, found []foundLine) error {
	p, ok := in.quoted[q]
	if !ok || len(found) == 0 {
		return nil
	}
	at := make(map[int64]int, len(found))
	for i, f := range found {
		at[f.line] = i
	}
	rd, closeFn, err := openLines(p)
	if err != nil {
		return err
	}
	defer closeFn()
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := int64(1); sc.Scan(); n++ {
		if i, ok := at[n]; ok {
			found[i].raw = strings.TrimSuffix(sc.Text(), "\r")
		}
	}
	return sc.Err()
}
