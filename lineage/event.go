// Package lineage sends OpenLineage run events for tidemark runs: START
// when a run begins, COMPLETE or FAIL when it ends, with the job, the run,
// its input and output datasets named by the OpenLineage naming
// conventions, and facets (schema, dataSource, outputStatistics, the
// bookmark version). tidemark.Run tells an Observer of a run; Client posts the
// events from a bounded queue, so a slow or absent endpoint never fails or
// slows a run noticeably.
package lineage

// The OpenLineage spec and facet versions the events follow (the schemas
// are checked in under testdata/, and the tests validate against them).
const (
	SchemaURL            = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
	schemaFacetURL       = "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
	dataSourceFacetURL   = "https://openlineage.io/spec/facets/1-0-1/DatasourceDatasetFacet.json#/$defs/DatasourceDatasetFacet"
	outputStatsFacetURL  = "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet"
	errorMessageFacetURL = "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet"
	// BookmarkFacetURL is the schema of tidemark's own run facet,
	// lineage/facets/BookmarkRunFacet.json in the repository.
	BookmarkFacetURL = "https://raw.githubusercontent.com/tidemark-etl/tidemark/main/lineage/facets/BookmarkRunFacet.json#/$defs/BookmarkRunFacet"
	// DefaultProducer names tidemark as the events' producer.
	DefaultProducer = "https://github.com/tidemark-etl/tidemark"
	// DefaultNamespace is the jobs' namespace unless OPENLINEAGE_NAMESPACE
	// says otherwise.
	DefaultNamespace = "tidemark"
)

// Event types.
const (
	EventStart    = "START"
	EventComplete = "COMPLETE"
	EventFail     = "FAIL"
)

// RunEvent is an OpenLineage RunEvent.
type RunEvent struct {
	EventType string    `json:"eventType"`
	EventTime string    `json:"eventTime"` // RFC 3339
	Producer  string    `json:"producer"`
	SchemaURL string    `json:"schemaURL"`
	Run       Run       `json:"run"`
	Job       Job       `json:"job"`
	Inputs    []Dataset `json:"inputs"`
	Outputs   []Dataset `json:"outputs"`
}

// Run is the event's run: a UUID derived from tidemark's run id.
type Run struct {
	RunID  string         `json:"runId"`
	Facets map[string]any `json:"facets,omitempty"`
}

// Job is the event's job.
type Job struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Dataset is an input or output dataset.
type Dataset struct {
	Namespace    string         `json:"namespace"`
	Name         string         `json:"name"`
	Facets       map[string]any `json:"facets,omitempty"`
	OutputFacets map[string]any `json:"outputFacets,omitempty"`
}

// BaseFacet is what every facet has.
type BaseFacet struct {
	Producer  string `json:"_producer"`
	SchemaURL string `json:"_schemaURL"`
}

// SchemaFacet is the schema dataset facet.
type SchemaFacet struct {
	BaseFacet
	Fields []SchemaField `json:"fields"`
}

// SchemaField is one column.
type SchemaField struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
}

// DataSourceFacet is the dataSource dataset facet.
type DataSourceFacet struct {
	BaseFacet
	Name string `json:"name"`
	URI  string `json:"uri"`
}

// OutputStatisticsFacet is the outputStatistics output dataset facet.
type OutputStatisticsFacet struct {
	BaseFacet
	RowCount  int64 `json:"rowCount"`
	Size      int64 `json:"size"`
	FileCount int64 `json:"fileCount"`
}

// ErrorMessageFacet is the errorMessage run facet of a FAIL event.
type ErrorMessageFacet struct {
	BaseFacet
	Message             string `json:"message"`
	ProgrammingLanguage string `json:"programmingLanguage"`
}

// BookmarkFacet is tidemark's run facet "tidemark_bookmark": the bookmark
// version the run began from and the one it committed (COMPLETE of an
// enable run) or read.
type BookmarkFacet struct {
	BaseFacet
	RunID       string `json:"runId"` // tidemark's run id
	Mode        string `json:"mode"`
	Attempt     int    `json:"attempt"`
	BaseVersion int64  `json:"baseVersion"`
	Version     int64  `json:"version"`
}
