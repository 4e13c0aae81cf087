package tidemark

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// TestStateOrigin: --state wins, then the job file's state: (relative to
// the job file), then $TIDEMARK_STATE, then the default beside the job
// file or in the working directory.
func TestStateOrigin(t *testing.T) {
	spec := &job.Spec{Dir: "/jobs", File: "/jobs/j.yaml", State: "st/state.db"}
	t.Setenv("TIDEMARK_STATE", "/env/state.db")
	for _, c := range []struct {
		flag string
		spec *job.Spec
		want string
		why  string
	}{
		{"/flag.db", spec, "/flag.db", "--state"},
		{"", spec, "/jobs/st/state.db", "state: of job file"},
		{"", &job.Spec{Dir: "/jobs", File: "/jobs/j.yaml", State: "memory://x"}, "memory://x", "state: of job file"},
		{"", &job.Spec{Dir: "/jobs", File: "/jobs/j.yaml"}, "/env/state.db", "$TIDEMARK_STATE"},
	} {
		loc, why := StateOrigin(c.flag, c.spec)
		if loc != c.want || !strings.Contains(why, c.why) {
			t.Errorf("StateOrigin(%q, %+v): got %q (%s), want %q (%s)", c.flag, c.spec, loc, why, c.want, c.why)
		}
		if got := StateLocation(c.flag, c.spec); got != loc {
			t.Errorf("StateLocation: got %q, want %q", got, loc)
		}
	}
	t.Setenv("TIDEMARK_STATE", "")
	if loc, why := StateOrigin("", &job.Spec{Dir: "/jobs", File: "/jobs/j.yaml"}); loc != filepath.Join("/jobs", job.DefaultStateFile) || !strings.Contains(why, "next to job file") {
		t.Errorf("default beside the job file: got %q (%s)", loc, why)
	}
	if loc, why := StateOrigin("", nil); loc != job.DefaultStateFile || !strings.Contains(why, "working directory") {
		t.Errorf("default with no job file: got %q (%s)", loc, why)
	}
}

// TestOpenState: a location with a secret inline is a usage error that
// does not show it; a store that does not exist is a *StateError saying
// this command creates none.
func TestOpenState(t *testing.T) {
	secretLoc := "postgres://u:hunter2@db/x"
	for _, open := range []func() error{
		func() error { _, err := OpenState(t.Context(), secretLoc); return err },
		func() error { _, err := OpenExistingState(t.Context(), secretLoc, nil, true); return err },
	} {
		err := open()
		if !errors.Is(err, ErrUsage) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("secret inline: got %v, want a usage error without the secret", err)
		}
	}
	_, err := OpenExistingState(t.Context(), "nostate://x", nil, true)
	var se *StateError
	if !errors.As(err, &se) || !errors.Is(err, store.ErrNoState) || !strings.Contains(err.Error(), "never creates state") {
		t.Errorf("no store: got %v, want a *StateError wrapping store.ErrNoState", err)
	}
	_, err = OpenExistingState(t.Context(), "nosuch://x", nil, true)
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "state store nosuch://x (given with --state)") {
		t.Errorf("unknown scheme: got %v, want a *StateError naming the location and why", err)
	}
	st, err := OpenExistingState(t.Context(), "memory://"+t.Name(), nil, true)
	if err != nil {
		t.Fatalf("memory store: %v", err)
	}
	st.Close()
}

// TestRunStateError: a run whose state store cannot be opened fails with a
// *StateError before anything runs.
func TestRunStateError(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.state = "nosuch://x"
	_, err := Run(t.Context(), w.spec(), RunOptions{})
	var se *StateError
	if !errors.As(err, &se) || w.fake.Calls() != 0 {
		t.Errorf("run: got %v after %d engine calls, want a *StateError and none", err, w.fake.Calls())
	}
}

// TestNoState: the empty store Plan uses before the first run reads as
// empty and refuses every write.
func TestNoState(t *testing.T) {
	ctx := t.Context()
	var s noState
	h, err := s.Head(ctx, "j")
	if err != nil || h.Job != "j" || h.Version != 0 {
		t.Errorf("Head: got %+v (%v)", h, err)
	}
	if m, err := s.SourceStates(ctx, "j"); err != nil || len(m) != 0 {
		t.Errorf("SourceStates: got %v (%v)", m, err)
	}
	if _, err := s.Run(ctx, "j", "r"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Run: got %v, want store.ErrNotFound", err)
	}
	for f := range s.Files(ctx, "j", "c") {
		t.Errorf("Files: got %v", f)
	}
	for f := range s.RunInputs(ctx, "j", nil) {
		t.Errorf("RunInputs: got %v", f)
	}
	for f := range s.RunRanges(ctx, "j", nil) {
		t.Errorf("RunRanges: got %v", f)
	}
	for f := range s.PublishedOutputs(ctx, "j", "k") {
		t.Errorf("PublishedOutputs: got %v", f)
	}
	reads := []error{
		func() error { _, err := s.Runs(ctx, "j", store.RunQuery{}); return err }(),
		func() error { _, err := s.Outputs(ctx, "j", "r"); return err }(),
		func() error { _, err := s.Actions(ctx, "j", "r"); return err }(),
		func() error { _, err := s.Unpublished(ctx, "j"); return err }(),
		func() error { _, err := s.Stats(ctx); return err }(),
		func() error { _, err := s.Identity(ctx); return err }(),
		s.ReleaseLease(ctx, store.Lease{}),
		s.Close(),
	}
	for i, err := range reads {
		if err != nil {
			t.Errorf("read %d: got %v, want none", i, err)
		}
	}
	writes := []error{
		func() error { _, err := s.AcquireLease(ctx, "j", store.Holder{}, time.Second); return err }(),
		func() error { _, err := s.RenewLease(ctx, store.Lease{}, time.Second); return err }(),
		s.BreakLease(ctx, "j", 1),
		func() error { _, err := s.BeginRun(ctx, 1, store.Run{}); return err }(),
		s.FailRun(ctx, "j", 1, "r", time.Now(), store.Run{}, "x"),
		func() error { _, err := s.Commit(ctx, store.Commit{}); return err }(),
		s.MarkPublished(ctx, "j", 1, "r"),
		func() error { _, err := s.Reset(ctx, "j", 1, "", ""); return err }(),
		s.MarkPurged(ctx, "j", 1, "r"),
	}
	for i, err := range writes {
		if !errors.Is(err, errNoStateWrite) {
			t.Errorf("write %d: got %v, want errNoStateWrite", i, err)
		}
	}
}

// TestMergeBadRecord: the strictest policy of the sources wins.
func TestMergeBadRecord(t *testing.T) {
	for _, c := range []struct{ cur, src, want string }{
		{"", engine.BadSkip, engine.BadSkip},
		{engine.BadSkip, engine.BadSkip, engine.BadSkip},
		{engine.BadSkip, engine.BadFail, engine.BadFail},
		{engine.BadFail, engine.BadQuarantine, engine.BadFail},
		{engine.BadSkip, engine.BadQuarantine, engine.BadQuarantine},
	} {
		if got := mergeBadRecord(c.cur, c.src); got != c.want {
			t.Errorf("mergeBadRecord(%q, %q): got %q, want %q", c.cur, c.src, got, c.want)
		}
	}
}

// pwConfig is a block whose password is in an environment variable.
type pwConfig struct{ env string }

func (pwConfig) ApplyDefaults(*job.Spec) {}
func (pwConfig) Validate(*job.Check)     {}
func (c pwConfig) PasswordVar() string   { return c.env }

// TestCheckPasswordEnv: a password_env naming an unset variable is a
// usage error naming the block and the variable.
func TestCheckPasswordEnv(t *testing.T) {
	const unset = "TIDEMARK_TEST_SURELY_UNSET"
	os.Unsetenv(unset)
	t.Setenv("TIDEMARK_TEST_SET", "x")
	for _, c := range []struct {
		spec *job.Spec
		want string
	}{
		{&job.Spec{Sources: []job.Source{{Ctx: "s", Config: pwConfig{unset}}}}, "source s: password_env: environment variable " + unset},
		{&job.Spec{Sinks: []job.Sink{{Ctx: "k", Config: pwConfig{unset}}}}, "sink k: password_env"},
		{&job.Spec{Sources: []job.Source{{Ctx: "s", Config: pwConfig{"TIDEMARK_TEST_SET"}}}, Sinks: []job.Sink{{Ctx: "k", Config: pwConfig{}}}}, ""},
	} {
		err := checkPasswordEnv(c.spec)
		if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("checkPasswordEnv: got %v, want %q", err, c.want)
		}
	}
}

// TestResultOf: a stored run's summary, with its duration, redacted error
// and empty maps rather than nil.
func TestResultOf(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := ResultOf(store.Run{Job: "j", RunID: "r", Status: store.StatusFailed, Mode: bookmark.ModeEnable, StartedAt: start,
		FinishedAt: start.Add(1500 * time.Millisecond), Error: "state postgres://u:hunter2@db/x failed"})
	if r.DurationMS != 1500 || r.Sources == nil || r.Sinks == nil || r.FinishedAt == nil || strings.Contains(r.Error, "hunter2") {
		t.Errorf("ResultOf: got %+v", r)
	}
	if r := ResultOf(store.Run{StartedAt: start}); r.FinishedAt != nil || r.DurationMS != 0 {
		t.Errorf("ResultOf of a running run: got %+v", r)
	}
}
