package sink_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// testKind is a sink kind of this test only, whose outputs have a manifest
// kind of their own.
const (
	testKind   = "registrytest"
	testOutput = manifest.Kind("registrytest_load")
)

// errLocated is what the test kind's Locate returns, so the test sees
// which kind OpenLocation reached.
var errLocated = errors.New("located by the test kind")

type testConfig struct {
	Target string `yaml:"target" doc:"where the test kind writes"`
}

func (*testConfig) ApplyDefaults(*job.Spec) {}
func (*testConfig) Validate(*job.Check)     {}

func init() {
	sink.Register(sink.Kind{Name: testKind, Marker: "target", Noun: "test sinks (target:)",
		Config: func() job.Config { return new(testConfig) },
		Open: func(context.Context, *job.Spec, job.Sink) (sink.Sink, error) {
			return nil, errors.New("not opened in this test")
		},
		Locate: func(context.Context, store.Output) (sink.Location, error) {
			return nil, errLocated
		},
		Outputs: []manifest.Kind{testOutput}})
}

// TestOutputKindFromDescriptors: an output record is published by the
// sink kind that registered its manifest kind, with no list kept by hand.
func TestOutputKindFromDescriptors(t *testing.T) {
	o := store.Output{RunID: "r1", Kind: testOutput, Final: "x"}
	if got := sink.OutputKind(o); got != testKind {
		t.Fatalf("OutputKind = %q, want %q", got, testKind)
	}
	if _, err := sink.OpenLocation(context.Background(), o); !errors.Is(err, errLocated) {
		t.Fatalf("OpenLocation: %v, want the test kind's location", err)
	}
	// A kind no sink publishes is an error naming it, not a file sink's.
	o.Kind = "nobody_publishes_this"
	_, err := sink.OpenLocation(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), `"nobody_publishes_this"`) {
		t.Fatalf("OpenLocation of an unknown kind: %v, want an error naming it", err)
	}
	// A record written before records had kinds is a file sink's.
	if got := sink.OutputKind(store.Output{}); got != sink.KindFiles {
		t.Fatalf("OutputKind of a record without a kind = %q, want %q", got, sink.KindFiles)
	}
}

// TestSinkKindKnownToJobFile: registering a sink kind once makes its block
// a job file's, chosen by its marker.
func TestSinkKindKnownToJobFile(t *testing.T) {
	var found bool
	for _, k := range job.SinkKinds() {
		if k.Name == testKind && k.Marker == "target" {
			found = true
		}
	}
	if !found {
		t.Fatalf("job.SinkKinds() = %v, want %s registered by sink.Register", job.SinkKinds(), testKind)
	}
}
