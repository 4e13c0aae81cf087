package main

import (
	"fmt"
	"os"
	"strings"
)

// hostIDEnv names the environment variable that sets this host's identity
// in leases and run records when --host-id is not given.
const hostIDEnv = "TIDEMARK_HOST_ID"

// hostID is the host identity in force: the flag, else TIDEMARK_HOST_ID,
// else "" (the library's default, hostname:pid). An id is one line of
// printable text.
func hostID(flag string) (string, error) {
	id, from := flag, "--host-id"
	if id == "" {
		id, from = os.Getenv(hostIDEnv), hostIDEnv
	}
	id = strings.TrimSpace(id)
	if strings.ContainsFunc(id, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", usageError{fmt.Errorf("%s: a host id is one line of printable text, got %q", from, id)}
	}
	if len(id) > 200 {
		return "", usageError{fmt.Errorf("%s: a host id is at most 200 bytes, got %d", from, len(id))}
	}
	return id, nil
}
