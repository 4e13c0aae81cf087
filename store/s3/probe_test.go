package s3

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tidemark-etl/tidemark/store"
)

// dropHeader removes a header from every request before it is signed: a
// service that ignores it, in front of the real one.
func dropHeader(name string) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Build.Add(middleware.BuildMiddlewareFunc("testDropHeader",
			func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok {
					req.Header.Del(name)
				}
				return next.HandleBuild(ctx, in)
			}), middleware.After)
	}
}

// TestProbeRefuses: a service that ignores If-None-Match or If-Match is
// refused at open, with a message naming the store; one that honours
// both opens.
func TestProbeRefuses(t *testing.T) {
	srv := startServer(t)
	for _, h := range []string{"If-None-Match", "If-Match"} {
		t.Run(h, func(t *testing.T) {
			o := Options{S3: srv.clientConfig(""), apiOptions: []func(*middleware.Stack) error{dropHeader(h)}}
			_, err := Open(t.Context(), srv.location("probe-"+h+"/"), o)
			if err == nil {
				t.Fatalf("Open on a service that ignores %s succeeded, want a refusal", h)
			}
			msg := err.Error()
			for _, want := range []string{srv.location("probe-" + h + "/"), h, "conditional writes"} {
				if !strings.Contains(msg, want) {
					t.Errorf("refusal %q does not name %q", msg, want)
				}
			}
			if strings.Contains(msg, srv.SecretKey) {
				t.Errorf("refusal %q holds the secret key", msg)
			}
		})
	}
	s := srv.open(t, "probe-ok/", Options{})
	if id, _ := s.Identity(t.Context()); id.Location != srv.location("probe-ok/") || id.ID == "" {
		t.Errorf("Identity() = %+v, want an id and location %s", id, srv.location("probe-ok/"))
	}
}

// TestOpenExisting: opening existing state refuses a prefix without a
// store (store.ErrNoState) and creates nothing; read-only opens write
// nothing, not even the probe; store.Open by URL reaches the backend.
func TestOpenExisting(t *testing.T) {
	srv := startServer(t)
	srv.SetEnv(t)
	ctx := t.Context()
	_, err := store.OpenExisting(ctx, srv.location("none/"), true)
	if !errors.Is(err, store.ErrNoState) {
		t.Fatalf("OpenExisting of an empty prefix: %v, want ErrNoState", err)
	}
	_, err = store.OpenExisting(ctx, srv.location("none/"), false)
	if !errors.Is(err, store.ErrNoState) {
		t.Fatalf("OpenExisting (writable) of an empty prefix: %v, want ErrNoState", err)
	}
	w, err := store.Open(ctx, srv.location("made/"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := w.AcquireLease(ctx, "j", store.Holder{ID: "a"}, 3600e9)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	f := &faultHTTP{}
	ro, err := Open(ctx, srv.location("made/"), Options{ReadOnly: true, WrapHTTP: f.wrap})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Run(ctx, "j", "r1"); err != nil {
		t.Errorf("reading a run read-only: %v", err)
	}
	if _, err := ro.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r2"}); err == nil {
		t.Error("BeginRun on a read-only store succeeded")
	}
	if n := f.count("PUT") + f.count("DELETE"); n != 0 {
		t.Errorf("a read-only store sent %d writes, want 0", n)
	}
	idW, _ := w.Identity(ctx)
	idR, _ := ro.Identity(ctx)
	if idW != idR {
		t.Errorf("identity read-only %+v, want %+v", idR, idW)
	}
}

// TestOpenRequests: opening an existing store reads its identity once and
// probes with two writes of the bytes read, nothing more (every command
// opens the store: a request here is one on every run).
func TestOpenRequests(t *testing.T) {
	srv := startServer(t)
	srv.open(t, "requests/", Options{})
	f := &faultHTTP{}
	srv.open(t, "requests/", Options{WrapHTTP: f.wrap})
	if got := [3]int{f.count("GET"), f.count("HEAD"), f.count("PUT")}; got != [3]int{1, 0, 2} {
		t.Errorf("opening an existing store sent %d GET, %d HEAD, %d PUT; want 1 GET (the identity) and 2 PUT (the probe)",
			got[0], got[1], got[2])
	}
}
