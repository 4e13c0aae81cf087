package glue

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark"
	_ "github.com/tidemark-etl/tidemark/all" // the shipped kinds a session opens
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/store"
)

// Server serves the bookmark API for the runs of one program. It holds
// the open runs (tidemark.Session) in memory: a run left open when the
// server closes is aborted, so nothing of it is published.
type Server struct {
	// State is the state store's location; Dir the folder relative paths
	// are taken from.
	State, Dir string
	// Token is what every request must carry as a bearer token.
	Token string
	// HostID names this host in leases and run records ("": hostname:pid).
	HostID string
	// LeaseTTL is the runs' lease TTL (0: tidemark's default).
	LeaseTTL time.Duration
	Log      *slog.Logger

	mu       sync.Mutex
	runs     map[string]*run    // by run id
	open     map[string]*run    // by job: the job's run not ended yet
	finished map[string]*result // by run id: the outcome of ended runs
	closed   bool
}

// run is one open run and the answers already given for it.
type run struct {
	s       *tidemark.Session
	begin   BeginResponse
	sources map[string]answer[SourceResponse] // by the ctx asked for
	sinks   map[string]answer[SinkResponse]
	n       int // sources and sinks asked for, for the names made up
}

// answer is the first answer to a source or sink call, and the request
// it answered (without its run id) to know the same call again by.
type answer[T any] struct {
	req   []byte
	shown string
	out   T
}

// result is an ended run's outcome, kept for a repeated commit or abort.
type result struct {
	res *tidemark.Result
	err error
}

// Handler is the API's HTTP handler.
func (sv *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/begin", sv.handle(sv.begin))
	mux.HandleFunc("POST /v1/source", sv.handle(sv.source))
	mux.HandleFunc("POST /v1/sink", sv.handle(sv.sink))
	mux.HandleFunc("POST /v1/commit", sv.handle(sv.commit))
	mux.HandleFunc("POST /v1/abort", sv.handle(sv.abort))
	return sv.auth(mux)
}

// auth refuses a request without the server's bearer token.
func (sv *Server) auth(next http.Handler) http.Handler {
	want := []byte("Bearer " + sv.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got := []byte(req.Header.Get("Authorization"))
		if sv.Token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			writeJSON(w, http.StatusUnauthorized, ErrorResponse{Error: "missing or wrong bearer token", ExitCode: tidemark.ExitUsage})
			return
		}
		next.ServeHTTP(w, req)
	})
}

// handle decodes a verb's JSON body, calls it, and writes its answer or
// its error.
func (sv *Server) handle(verb func(ctx context.Context, body json.RawMessage) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		var body json.RawMessage
		dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<20))
		if err := dec.Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, ErrorResponse{Error: "reading the request: " + err.Error(), ExitCode: tidemark.ExitUsage})
			return
		}
		out, err := verb(req.Context(), body)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// decode reads a verb's request strictly: an unknown field is an error.
func decode(body json.RawMessage, v any) error {
	dec := json.NewDecoder(bytesReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: reading the request: %v", tidemark.ErrUsage, err)
	}
	return nil
}

func (sv *Server) begin(ctx context.Context, body json.RawMessage) (any, error) {
	var req BeginRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if req.Job == "" {
		return nil, fmt.Errorf("%w: begin needs a job name", tidemark.ErrUsage)
	}
	mode := bookmark.ModeEnable
	if req.Mode != "" {
		m, err := bookmark.ParseMode(req.Mode)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", tidemark.ErrUsage, err)
		}
		mode = m
	}
	reads := req.Reads
	if len(reads) == 0 {
		reads = []string{"file"}
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closed {
		return nil, errors.New("the server is closing")
	}
	if r, ok := sv.open[req.Job]; ok {
		return r.begin, nil
	}
	s, err := tidemark.BeginSession(ctx, tidemark.SessionOptions{Job: req.Job, Dir: sv.Dir, Mode: mode, From: req.From, To: req.To,
		State: sv.State, Reads: reads, HostID: sv.HostID, LeaseTTL: sv.LeaseTTL, Logger: sv.logger()})
	if err != nil {
		return nil, err
	}
	r := &run{s: s, sources: map[string]answer[SourceResponse]{}, sinks: map[string]answer[SinkResponse]{},
		begin: BeginResponse{RunID: s.RunID(), Job: s.Job(), Mode: string(s.Mode()), Version: s.Version()}}
	if sv.runs == nil {
		sv.runs, sv.open, sv.finished = map[string]*run{}, map[string]*run{}, map[string]*result{}
	}
	sv.runs[r.begin.RunID] = r
	sv.open[req.Job] = r
	return r.begin, nil
}

func (sv *Server) source(ctx context.Context, body json.RawMessage) (any, error) {
	var req SourceRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	r, err := sv.run(req.RunID)
	if err != nil {
		return nil, err
	}
	key := req.Ctx
	if key == "" {
		key = string(body) // a source without a bookmark is known by what it reads
	}
	same := req
	same.RunID = ""
	reused := func(first string) error {
		return fmt.Errorf("%w: transformation_ctx %q is already this run's read of %s: a second read under one ctx "+
			"with other paths, format or options would be given the first read's files; give each read its own transformation_ctx",
			tidemark.ErrUsage, req.Ctx, first)
	}
	return once(sv, r, r.sources, key, same, readShown(req), reused, func(n int) (SourceResponse, error) {
		src, noBookmark, err := sourceOf(req, n)
		if err != nil {
			return SourceResponse{}, err
		}
		in, err := r.s.Source(ctx, src, noBookmark)
		if err != nil {
			return SourceResponse{}, err
		}
		return sourceResponse(req, src, in), nil
	})
}

func (sv *Server) sink(ctx context.Context, body json.RawMessage) (any, error) {
	var req SinkRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	r, err := sv.run(req.RunID)
	if err != nil {
		return nil, err
	}
	key := req.Ctx
	if key == "" {
		key = req.Path
	}
	same := req
	same.RunID = ""
	reused := func(first string) error {
		if req.Ctx == "" {
			return fmt.Errorf("%w: two writes to %s without a transformation_ctx differ (the first was %s): "+
				"the second would land in the first's folder as the first's format; give each write its own transformation_ctx",
				tidemark.ErrUsage, secret.Redact(req.Path), first)
		}
		return fmt.Errorf("%w: transformation_ctx %q is already this run's write to %s: a second write under one ctx "+
			"to another path, format or partitioning would land in the first's folder; give each write its own transformation_ctx",
			tidemark.ErrUsage, req.Ctx, first)
	}
	return once(sv, r, r.sinks, key, same, writeShown(req), reused, func(n int) (SinkResponse, error) {
		k, err := sinkOf(req, n)
		if err != nil {
			return SinkResponse{}, err
		}
		t, err := r.s.Sink(ctx, k)
		if err != nil {
			return SinkResponse{}, err
		}
		return SinkResponse{Ctx: k.Ctx, Location: t.Location, Format: t.Format}, nil
	})
}

// once answers a repeated source or sink call of run r with its first
// answer (the verbs are idempotent), and otherwise makes the answer with
// the part's number in the run (for the names made up) and keeps it. A
// call under a key already answered for another request (req, the request
// without its run id, shown as shown) is refused with reused(the first's
// shown): its key, the ctx, is one source's bookmark or one sink's folder.
func once[T any](sv *Server, r *run, answers map[string]answer[T], key string, req any, shown string,
	reused func(first string) error, build func(n int) (T, error)) (any, error) {
	fp, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	sv.mu.Lock()
	if a, ok := answers[key]; ok {
		sv.mu.Unlock()
		if !bytes.Equal(a.req, fp) {
			return nil, reused(a.shown)
		}
		return a.out, nil
	}
	r.n++
	n := r.n
	sv.mu.Unlock()
	out, err := build(n)
	if err != nil {
		return nil, err
	}
	sv.mu.Lock()
	answers[key] = answer[T]{req: fp, shown: shown, out: out}
	sv.mu.Unlock()
	return out, nil
}

// readShown describes a read for an error message.
func readShown(req SourceRequest) string {
	if c := req.Catalog; c != nil {
		return fmt.Sprintf("the catalog table %s.%s", c.Database, c.Table)
	}
	var paths []string
	for _, p := range req.Paths {
		paths = append(paths, secret.Redact(p))
	}
	return fmt.Sprintf("%s (format %s)", strings.Join(paths, ", "), req.Format)
}

// writeShown describes a write for an error message.
func writeShown(req SinkRequest) string {
	return fmt.Sprintf("%s (format %s)", secret.Redact(req.Path), req.Format)
}

func (sv *Server) commit(ctx context.Context, body json.RawMessage) (any, error) {
	var req CommitRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if done, ok := sv.ended(req.RunID); ok {
		return done.res, done.err
	}
	r, err := sv.run(req.RunID)
	if err != nil {
		return nil, err
	}
	reports := map[string]tidemark.SourceReport{}
	for c, rep := range req.Sources {
		reports[c] = tidemark.SourceReport{Rows: rep.Rows, Schema: rep.Schema}
	}
	res, err := r.s.Commit(ctx, reports)
	sv.finish(r, res, err)
	return res, err
}

func (sv *Server) abort(ctx context.Context, body json.RawMessage) (any, error) {
	var req AbortRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if done, ok := sv.ended(req.RunID); ok {
		return done.res, nil
	}
	r, err := sv.run(req.RunID)
	if err != nil {
		return nil, err
	}
	_ = r.s.Abort(ctx, abortReason(req.Reason))
	res := r.s.Result()
	sv.finish(r, res, nil)
	return res, nil
}

// abortReason is the failed run's message.
func abortReason(reason string) string {
	if reason == "" {
		return "the script ended the run without committing (abort); nothing of it was published"
	}
	return "the script ended the run without committing: " + secret.Redact(reason) + "; nothing of it was published"
}

// Close aborts the runs still open (their program ended without a
// commit); nothing of them is published.
func (sv *Server) Close(ctx context.Context, reason string) {
	sv.mu.Lock()
	sv.closed = true
	var open []*run
	for _, r := range sv.open {
		open = append(open, r)
	}
	sv.mu.Unlock()
	for _, r := range open {
		_ = r.s.Abort(ctx, reason)
		sv.finish(r, r.s.Result(), errors.New(reason))
	}
}

// Open reports whether a run is still open (begun, neither committed nor
// aborted).
func (sv *Server) Open() bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return len(sv.open) > 0
}

// Results returns the outcomes of the runs that ended, by run id.
func (sv *Server) Results() map[string]error {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	out := map[string]error{}
	for id, r := range sv.finished {
		out[id] = r.err
	}
	return out
}

// committed returns the ids of the runs that committed and published,
// sorted.
func (sv *Server) committed() []string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	var ids []string
	for id, r := range sv.finished {
		if r.err == nil && r.res != nil && r.res.Status == store.StatusSucceeded {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Ended returns the outcomes of the runs that ended, in the order begun
// (run ids sort by their start).
func (sv *Server) Ended() []*tidemark.Result {
	var out []*tidemark.Result
	for _, o := range sv.Outcomes() {
		out = append(out, o.Result)
	}
	return out
}

// Outcome is how one run ended: its summary and its error (nil:
// succeeded).
type Outcome struct {
	Result *tidemark.Result
	Err    error
}

// Outcomes returns the outcomes of the runs that ended (a refused run,
// which is no run, has none), in the order begun (run ids sort by their
// start).
func (sv *Server) Outcomes() []Outcome {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	ids := make([]string, 0, len(sv.finished))
	for id, r := range sv.finished {
		if r.res != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	out := make([]Outcome, 0, len(ids))
	for _, id := range ids {
		out = append(out, Outcome{Result: sv.finished[id].res, Err: sv.finished[id].err})
	}
	return out
}

// began reports whether any run was begun on this server.
func (sv *Server) began() bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return len(sv.runs) > 0 || len(sv.finished) > 0
}

func (sv *Server) run(id string) (*run, error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	r, ok := sv.runs[id]
	if _, ended := sv.finished[id]; !ok && ended {
		return nil, fmt.Errorf("%w: run %q already ended (job.commit() or an abort): nothing read or written after it "+
			"belongs to a run; call job.init() again to begin another", tidemark.ErrUsage, id)
	}
	if !ok {
		return nil, fmt.Errorf("%w: no open run %q on this server (begin one first)", tidemark.ErrUsage, id)
	}
	return r, nil
}

func (sv *Server) ended(id string) (*result, bool) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	r, ok := sv.finished[id]
	return r, ok
}

func (sv *Server) finish(r *run, res *tidemark.Result, err error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if _, ok := sv.finished[r.begin.RunID]; ok {
		return
	}
	sv.finished[r.begin.RunID] = &result{res: res, err: err}
	delete(sv.runs, r.begin.RunID)
	if sv.open[r.begin.Job] == r {
		delete(sv.open, r.begin.Job)
	}
}

func (sv *Server) logger() *slog.Logger {
	if sv.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return sv.Log
}

// writeError writes err as an ErrorResponse with its exit code.
func writeError(w http.ResponseWriter, err error) {
	code := tidemark.ExitCode(err)
	out := ErrorResponse{Error: secret.Redact(err.Error()), ExitCode: code}
	status := http.StatusInternalServerError
	switch code {
	case tidemark.ExitUsage:
		status = http.StatusBadRequest
	case tidemark.ExitLeaseHeld:
		status = http.StatusConflict
		var held *store.LeaseHeldError
		if errors.As(err, &held) {
			out.Holder = &Holder{RunID: held.Holder.ID, Host: held.Holder.Host, PID: held.Holder.PID,
				Started: held.Holder.Started.UTC().Format(time.RFC3339), Expires: held.Expires.UTC().Format(time.RFC3339)}
		}
	}
	writeJSON(w, status, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
