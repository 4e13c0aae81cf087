package engine

// Caps is what an engine reads and writes itself. The runner downloads,
// pipes or extracts only what the engine cannot read itself.
type Caps struct {
	// Read and Write are the location schemes the engine reads and writes
	// through its own I/O ("file": local paths).
	Read, Write []string
	// Pipes: the engine reads a named pipe filled while it runs (Source.Stream).
	Pipes bool
}

// CapsOf returns e's capabilities.
func CapsOf(e Engine) Caps {
	c := Caps{Read: []string{"file"}, Write: []string{"file"}}
	if s, ok := e.(Streamer); ok && s.Streams() {
		c.Pipes = true
	}
	return c
}
