package source_test

import (
	"context"
	"errors"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
)

// testConfig is the block of a source kind of this test only.
type testConfig struct {
	Topic string `yaml:"topic" doc:"what the test kind reads"`
}

func (*testConfig) ApplyDefaults(*job.Spec) {}
func (*testConfig) Validate(*job.Check)     {}

var errOpened = errors.New("opened by the test kind")

func init() {
	source.Register(source.Kind{Name: "registrytest", Marker: "topic", Noun: "test sources (topic:)",
		Config: func() job.Config { return new(testConfig) },
		Open: func(context.Context, *job.Spec, job.Source) (source.Source, error) {
			return nil, errOpened
		}})
}

// TestSourceKindRegisteredOnce: one source.Register makes the kind's block
// a job file's (chosen by its marker) and opens it.
func TestSourceKindRegisteredOnce(t *testing.T) {
	var src job.Source
	if err := yaml.Unmarshal([]byte("ctx: in\ntopic: orders\n"), &src); err != nil {
		t.Fatalf("decoding a block of the test kind: %v", err)
	}
	cfg, ok := src.Config.(*testConfig)
	if !ok || src.Kind != "registrytest" || cfg.Topic != "orders" {
		t.Fatalf("source decoded as kind %q, block %#v; want registrytest with topic orders", src.Kind, src.Config)
	}
	if _, err := source.Open(context.Background(), &job.Spec{}, src); !errors.Is(err, errOpened) {
		t.Fatalf("Open: %v, want the test kind's opener", err)
	}
}
