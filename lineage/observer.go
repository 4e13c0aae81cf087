package lineage

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// Sender takes events (a *Client).
type Sender interface{ Send(RunEvent) }

// Observer turns a job's run into OpenLineage events; tidemark.Run tells
// it a run's start and end.
type Observer struct {
	send            Sender
	namespace       string
	producer        string
	now             func() time.Time
	inputs, outputs []dataset
}

// Observed is what an Observer is told of a run: at its start with no counts,
// at its end as it finished.
type Observed struct {
	Job, RunID string
	Attempt    int
	Mode       bookmark.Mode
	// Sinks are the run's counts per sink ctx (at the end).
	Sinks map[string]store.Count
	// Version is the bookmark version the run committed; BaseVersion the
	// one it began from.
	Version, BaseVersion int64
	// Err is the run's error, and Error its redacted message (at the end;
	// nil: succeeded).
	Err   error
	Error string
	// Schemas are the schemas the run read each source ctx with (at the
	// end; a ctx the run did not read is absent).
	Schemas map[string][]bookmark.Column
}

// ObserverOptions tune an Observer; the zero value is usable.
type ObserverOptions struct {
	// Namespace is the job namespace (default DefaultNamespace).
	Namespace string
	// Producer is the events' producer URI (default DefaultProducer).
	Producer string
	// Now is the events' clock (default time.Now).
	Now func() time.Time
}

// NewObserver returns an Observer for runs of spec that sends to s.
func NewObserver(spec *job.Spec, s Sender, o ObserverOptions) *Observer {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Producer == "" {
		o.Producer = DefaultProducer
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	in, out := datasets(spec)
	return &Observer{send: s, namespace: o.Namespace, producer: o.Producer, now: o.Now, inputs: in, outputs: out}
}

// RunID is the OpenLineage run id of a tidemark run: a name-based (v5)
// UUID of the job and run id, the same for every event of the run.
func RunID(job, runID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("tidemark:"+job+"/"+runID)).String()
}

// RunStarted sends START.
func (o *Observer) RunStarted(_ context.Context, ev Observed) {
	o.send.Send(o.event(EventStart, ev))
}

// RunFinished sends COMPLETE, or FAIL with the error message.
func (o *Observer) RunFinished(_ context.Context, ev Observed) {
	t := EventComplete
	if ev.Err != nil {
		t = EventFail
	}
	o.send.Send(o.event(t, ev))
}

// event builds one event.
func (o *Observer) event(kind string, ev Observed) RunEvent {
	base := func(schemaURL string) BaseFacet { return BaseFacet{Producer: o.producer, SchemaURL: schemaURL} }
	res := ev
	version := res.Version
	if kind == EventStart || version == 0 {
		version = ev.BaseVersion
	}
	runFacets := map[string]any{"tidemark_bookmark": BookmarkFacet{BaseFacet: base(BookmarkFacetURL), RunID: res.RunID,
		Mode: string(res.Mode), Attempt: max(res.Attempt, 1), BaseVersion: ev.BaseVersion, Version: version}}
	if kind == EventFail {
		runFacets["errorMessage"] = ErrorMessageFacet{BaseFacet: base(errorMessageFacetURL), Message: res.Error,
			ProgrammingLanguage: "Go"}
	}
	e := RunEvent{EventType: kind, EventTime: o.now().UTC().Format(time.RFC3339Nano), Producer: o.producer,
		SchemaURL: SchemaURL, Run: Run{RunID: RunID(res.Job, res.RunID), Facets: runFacets},
		Job: Job{Namespace: o.namespace, Name: res.Job}, Inputs: []Dataset{}, Outputs: []Dataset{}}
	facets := func(d dataset, schema []SchemaField) map[string]any {
		f := map[string]any{"dataSource": DataSourceFacet{BaseFacet: base(dataSourceFacetURL), Name: d.sourceName, URI: d.uri}}
		if schema != nil {
			f["schema"] = SchemaFacet{BaseFacet: base(schemaFacetURL), Fields: schema}
		}
		return f
	}
	schemaOf := func(ctx string) []SchemaField {
		cols, ok := ev.Schemas[ctx]
		if !ok {
			return nil
		}
		fields := make([]SchemaField, 0, len(cols))
		for _, c := range cols {
			fields = append(fields, SchemaField{Name: c.Name, Type: c.Type})
		}
		return fields
	}
	for _, d := range o.inputs {
		e.Inputs = append(e.Inputs, Dataset{Namespace: d.namespace, Name: d.name, Facets: facets(d, schemaOf(d.ctx))})
	}
	for _, d := range o.outputs {
		out := Dataset{Namespace: d.namespace, Name: d.name, Facets: facets(d, schemaOf(d.from))}
		if c, ok := res.Sinks[d.ctx]; ok && kind == EventComplete {
			out.OutputFacets = map[string]any{"outputStatistics": OutputStatisticsFacet{BaseFacet: base(outputStatsFacetURL),
				RowCount: c.Rows, Size: c.Bytes, FileCount: c.Files}}
		}
		e.Outputs = append(e.Outputs, out)
	}
	return e
}
