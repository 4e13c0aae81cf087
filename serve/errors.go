package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/store"
)

// apiError is every error answer's body.
type apiError struct {
	Error string `json:"error"`
}

// errStatus is an error that says which HTTP status it answers with.
type errStatus struct {
	code int
	err  error
}

func (e *errStatus) Error() string { return e.err.Error() }
func (e *errStatus) Unwrap() error { return e.err }

// withStatus makes err answer with code.
func withStatus(code int, err error) error { return &errStatus{code: code, err: err} }

// statusOf is the HTTP status an error answers with: 404 for an unknown
// job or run, 400 for a bad request, 409 for a job being run, 503 for
// anything the state store said (unreachable, locked, corrupt), never 500.
func statusOf(err error) int {
	var es *errStatus
	switch {
	case errors.As(err, &es):
		return es.code
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, tidemark.ErrUsage):
		return http.StatusBadRequest
	case errors.Is(err, store.ErrLeaseHeld), errors.Is(err, store.ErrVersionConflict):
		return http.StatusConflict
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusServiceUnavailable
}

// writeJSON answers v as JSON with code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v) // the client went away: nothing to tell it
}

// fail answers err as {"error"} with code (statusOf(err) if 0), its text
// cleaned of secrets; a 503 says the state store is the cause.
func (s *server) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	if code == 0 {
		code = statusOf(err)
	}
	msg := s.clean(err.Error())
	if code == http.StatusServiceUnavailable && !strings.Contains(msg, "state store") {
		msg = "state store unavailable: " + msg
	}
	if code >= 500 {
		s.log.Warn("serve: request failed", "method", r.Method, "path", r.URL.Path, "status", code, "err", msg)
	}
	writeJSON(w, code, apiError{Error: msg})
}

// clean removes secrets from a message: the state location as given
// (which may hold a password in its user info or query) is replaced by
// its redacted form, then every password-shaped part is masked.
func (s *server) clean(msg string) string {
	if loc := s.opts.StateLocation; loc != "" {
		msg = strings.ReplaceAll(msg, loc, store.Redact(loc))
	}
	if t := s.opts.Token; t != "" {
		msg = strings.ReplaceAll(msg, t, "***")
	}
	return secret.Redact(msg)
}

// fmtAny formats a recovered panic value.
func fmtAny(v any) string { return fmt.Sprint(v) }
