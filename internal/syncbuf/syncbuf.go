// Package syncbuf is a bytes.Buffer that one goroutine may read while
// another writes it: a child process's output, a logger's lines.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it. With Limit set, it keeps about
// the first Limit bytes and drops later writes (enough to diagnose), so a
// chatty process cannot grow it without bound. The zero value is ready to
// use.
type Buffer struct {
	Limit int

	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Limit > 0 && s.b.Len() > s.Limit {
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
