package tidemark

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/job"
	sinkfiles "github.com/tidemark-etl/tidemark/sink/files"
	srcfiles "github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/source/sqltable"
	"github.com/tidemark-etl/tidemark/store"
)

// sessionCopy is one session that copies in/ to out/ as a program would:
// it reads the input it is handed and writes it into the sink's staging
// location; it returns the session's Commit error.
func (w *world) sessionCopy(t *testing.T) error {
	t.Helper()
	ctx := context.Background()
	s, err := BeginSession(ctx, SessionOptions{Job: jobName, Dir: w.dir, State: w.state, Reads: []string{"file"}})
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.Source(ctx, job.Source{Ctx: "in", Config: &srcfiles.Config{Path: w.in, Format: "csv"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sink(ctx, job.Sink{Ctx: "out", Config: &sinkfiles.Config{Path: w.out, Format: "csv"}})
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, f := range in.Files {
		b, err := os.ReadFile(f.Location)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	if err := os.MkdirAll(out.Location, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out.Location, "part-0.csv"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = s.Commit(ctx, nil)
	return err
}

// TestSessionCommitOutcomeUnknown: a session whose commit's answer is
// lost and whose run cannot be read back keeps its staged output, as Run
// does: the commit had applied, and the next run publishes it (a session
// deleted it before recording the failure, and the committed output was
// lost).
func TestSessionCommitOutcomeUnknown(t *testing.T) {
	w, st := faultyWorld(t)
	w.write("a.csv", "1", "2")
	st.set(blindAfterError)
	err := w.sessionCopy(t)
	st.set(commitFine)
	var unknown *CommitUnknownError
	if !errors.As(err, &unknown) {
		t.Fatalf("commit error: got %v, want a CommitUnknownError", err)
	}
	if len(w.staged()) == 0 {
		t.Fatalf("the staged output of a commit of unknown outcome was deleted")
	}
	res := w.run(RunOptions{})
	w.wantLines("1", "2")
	if n := res.Sources["in"].Files; n != 0 {
		t.Errorf("the run after: read %d files, want 0 (the unknown commit had applied)", n)
	}
}

// TestSessionChecksPasswordEnv: a source a session is asked for whose
// password_env names a variable that is not set is a usage error naming
// it, before the source is opened, as a job file's is before its run is
// recorded (a session did not check it).
func TestSessionChecksPasswordEnv(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	s, err := BeginSession(ctx, SessionOptions{Job: jobName, Dir: w.dir, State: w.state})
	if err != nil {
		t.Fatal(err)
	}
	src := job.Source{Ctx: "orders", Config: &sqltable.JobConfig{Connection: "sqlite:" + filepath.Join(w.dir, "db.sqlite"),
		Table: "orders", PasswordEnv: "TIDEMARK_TEST_UNSET_PASSWORD"}}
	_, err = s.Source(ctx, src, false)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "password_env") || !strings.Contains(err.Error(), "TIDEMARK_TEST_UNSET_PASSWORD") {
		t.Errorf("source: got %v, want a usage error naming password_env TIDEMARK_TEST_UNSET_PASSWORD", err)
	}
	// The program ends on it: as a job file's, the refused run is no run
	// (issue #19 item 3: the session had recorded it at its start).
	_ = s.Abort(ctx, "the program ended on the refusal")
	if res := s.Result(); res != nil {
		t.Errorf("the refused session's result: got %+v, want none (no run)", res)
	}
	st, err := OpenState(ctx, w.state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if runs, err := st.Runs(ctx, jobName, store.RunQuery{}); err != nil || len(runs) != 0 {
		t.Errorf("runs after the refusal: got %d (%v), want none", len(runs), err)
	}
}

// TestSessionRecordsAFailureThatIsNoRefusal: a session whose source fails
// otherwise than refused (a folder that is not there) and that ends on it
// is a failed run in the history, as Run records a run whose source could
// not be opened.
func TestSessionRecordsAFailureThatIsNoRefusal(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	s, err := BeginSession(ctx, SessionOptions{Job: jobName, Dir: w.dir, State: w.state, Reads: []string{"file"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Source(ctx, job.Source{Ctx: "in", Config: &srcfiles.Config{Path: filepath.Join(w.dir, "typo"), Format: "csv"}}, false); err == nil {
		t.Fatal("a source folder that is not there: got no error")
	}
	_ = s.Abort(ctx, "the program ended on the error")
	if res := s.Result(); res == nil || res.Status != store.StatusFailed {
		t.Errorf("the session's result: got %+v, want a failed run", res)
	}
	st, err := OpenState(ctx, w.state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if runs, err := st.Runs(ctx, jobName, store.RunQuery{}); err != nil || len(runs) != 1 || runs[0].Status != store.StatusFailed {
		t.Errorf("runs after the failure: got %+v (%v), want one failed run", runs, err)
	}
}
