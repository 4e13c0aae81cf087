package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// TestRunOutputOnEveryExit: run --json's object for each kind of outcome.
func TestRunOutputOnEveryExit(t *testing.T) {
	spec := &job.Spec{Job: "sales", Bookmark: "enable"}
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	held := &store.LeaseHeldError{Job: "sales", Holder: store.Holder{ID: "r1", Host: "h", PID: 42, Started: started}}
	for _, tc := range []struct {
		name string
		spec *job.Spec
		res  *tidemark.Result
		err  error
		code int
		kind string
	}{
		{"succeeded", spec, &tidemark.Result{Job: "sales", Status: "succeeded"}, nil, 0, ""},
		{"job file", nil, nil, &job.Error{File: "j.yaml", Line: 3, Msg: "bad"}, 2, kindJobFile},
		{"usage", spec, nil, fmt.Errorf("%w: --job-bookmark-from x: no such run", tidemark.ErrUsage), 2, kindUsage},
		{"unknown job", spec, nil, &unknownJobError{job: "x"}, 2, kindUnknownJob},
		{"no state", spec, nil, &tidemark.StateError{Err: fmt.Errorf("%w: x", store.ErrNoState)}, 2, kindNoState},
		{"lease", spec, nil, fmt.Errorf("taking lease: %w", held), 3, kindLeaseHeld},
		{"state", spec, nil, &tidemark.StateError{Err: errors.New("read-only")}, 1, kindState},
		{"input", spec, &tidemark.Result{Job: "sales", RunID: "r2", Status: "failed"}, &engine.InputError{Source: "s", File: "f.csv", Msg: "bad"}, 1, kindInput},
		{"interrupted", spec, &tidemark.Result{Job: "sales", RunID: "r3"}, fmt.Errorf("reading: %w", context.Canceled), 1, kindInterrupted},
		{"failed", spec, &tidemark.Result{Job: "sales", RunID: "r4"}, errors.New("disk full"), 1, kindFailed},
	} {
		out := runOutputOf(tc.spec, &runOptions{}, tc.res, tc.err)
		if out.ExitCode != tc.code || out.ErrorKind != tc.kind {
			t.Errorf("%s: exit_code %d, error_kind %q; want %d, %q", tc.name, out.ExitCode, out.ErrorKind, tc.code, tc.kind)
		}
		if tc.err != nil && (out.Status != "failed" || out.Error != tc.err.Error()) {
			t.Errorf("%s: status %q, error %q; want failed, %q", tc.name, out.Status, out.Error, tc.err)
		}
		if tc.spec != nil && out.Job != "sales" {
			t.Errorf("%s: job %q, want sales", tc.name, out.Job)
		}
		if tc.res == nil && (out.Sources == nil || out.Sinks == nil) {
			t.Errorf("%s: sources or sinks missing", tc.name)
		}
		if (out.Holder != nil) != (tc.kind == kindLeaseHeld) {
			t.Errorf("%s: holder %+v", tc.name, out.Holder)
		}
	}
	out := runOutputOf(spec, &runOptions{}, nil, held)
	if h := out.Holder; h == nil || h.PID != 42 || h.Host != "h" || h.RunID != "r1" || !h.Started.Equal(started) {
		t.Errorf("holder = %+v, want r1 on h, pid 42, started %v", out.Holder, started)
	}
}
