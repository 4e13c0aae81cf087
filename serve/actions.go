package serve

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tidemark-etl/tidemark"
)

// csrfCookie is the cookie GET /api/v1/session sets; an action must echo
// its value in csrfHeader (a page of another origin can read neither).
const (
	csrfCookie = "tidemark_csrf"
	csrfHeader = "X-Tidemark-CSRF"
	// actorHeader optionally names who asks, for the audit line.
	actorHeader = "X-Tidemark-Actor"
)

// session is GET /api/v1/session: whether actions are on; it sets the
// CSRF cookie if the client has none.
func (s *server) session(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(csrfCookie); err != nil || len(c.Value) < 32 {
		b := make([]byte, 32)
		_, _ = rand.Read(b) // crypto/rand.Read never fails
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: hex.EncodeToString(b), Path: "/",
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	}
	writeJSON(w, http.StatusOK, map[string]bool{"actions": s.opts.Token != "", "reads_need_token": s.opts.ReadToken})
}

// authorize checks an action request: 404 when actions are off, 403
// without the bearer token, the CSRF header matching the cookie, or from
// another origin.
func (s *server) authorize(r *http.Request) error {
	if s.opts.Token == "" {
		return withStatus(http.StatusNotFound, errors.New("actions are off: tidemark serve was started without --token-env"))
	}
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(auth), []byte(s.opts.Token)) != 1 {
		return withStatus(http.StatusForbidden, errors.New("an action needs the header Authorization: Bearer <token>"))
	}
	c, err := r.Cookie(csrfCookie)
	h := r.Header.Get(csrfHeader)
	if err != nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(h), []byte(c.Value)) != 1 {
		return withStatus(http.StatusForbidden, fmt.Errorf("an action needs the header %s set to the cookie %s (GET /api/v1/session sets it)", csrfHeader, csrfCookie))
	}
	return s.checkOrigin(r)
}

// resetRequest is POST /api/v1/jobs/{job}/reset's body.
type resetRequest struct {
	ToRun  string `json:"to_run"`
	Purge  bool   `json:"purge"`
	DryRun bool   `json:"dry_run"`
}

// resetPreview is a dry run's answer: what the reset would undo and delete.
type resetPreview struct {
	Undo   []string `json:"undo"`
	Delete []string `json:"delete"`
}

// maxBody bounds an action's request body.
const maxBody = 1 << 16

// reset is POST /api/v1/jobs/{job}/reset: with dry_run what `bookmark
// reset` would undo and delete, else the reset itself (bookmark reset
// --json's answer). Each real reset is logged with who asked: the audit
// record, beside the reset's own effects in the store (a new bookmark
// version, the runs marked undone and purged).
func (s *server) reset(w http.ResponseWriter, r *http.Request) {
	if err := s.authorize(r); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	ctx, name := r.Context(), r.PathValue("job")
	var req resetRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.fail(w, r, http.StatusBadRequest, fmt.Errorf("reading the request body: want {\"to_run\",\"purge\",\"dry_run\"}: %v", err))
		return
	}
	if _, _, err := s.knownJob(ctx, name); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	opts := tidemark.ResetOptions{ToRun: req.ToRun, Purge: req.Purge, DryRun: req.DryRun, Logger: s.log}
	if req.DryRun {
		res, err := tidemark.Reset(ctx, s.opts.Store, name, opts)
		if err != nil {
			s.fail(w, r, 0, err)
			return
		}
		writeJSON(w, http.StatusOK, resetPreview{Undo: res.Undone, Delete: res.Deleted})
		return
	}
	opts.By = actorOf(r)
	who := []any{"remote", r.RemoteAddr, "actor", r.Header.Get(actorHeader), "user_agent", r.UserAgent()}
	st, err := s.opts.OpenWritable(ctx)
	if err != nil {
		s.fail(w, r, 0, fmt.Errorf("opening the state store for writing: %w", err))
		return
	}
	defer st.Close()
	res, err := tidemark.Reset(ctx, st, name, opts)
	if err != nil {
		s.log.Warn("audit: reset failed", append([]any{"job", name, "to_run", req.ToRun, "purge", req.Purge, "err", s.clean(err.Error())}, who...)...)
		s.fail(w, r, 0, err)
		return
	}
	s.log.Info("audit: reset", append([]any{"job", name, "to_run", req.ToRun, "purge", req.Purge, "version", res.Version,
		"undone", len(res.Undone), "deleted", len(res.Deleted)}, who...)...)
	s.plans.forget(name)
	writeJSON(w, http.StatusOK, res)
}
