package sqlite

import (
	"encoding/json"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// encodeSummary serialises a run's per-source and per-sink counts and its
// job file (runs has no job_file column here).
func encodeSummary(r store.Run) (string, error) {
	b, err := json.Marshal(sqlstore.Summary{Sources: r.Sources, Sinks: r.Sinks, JobFile: r.JobFile})
	return string(b), err
}
