package iceberg_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/icebergrest"
	"github.com/tidemark-etl/tidemark/sink/sinktest"
)

// TestSuiteREST runs the sink suite on tables kept in Iceberg's reference
// REST catalog, on every state store: the table's catalog is the REST
// server, so S3 and memory state serve as well as SQLite and PostgreSQL.
func TestSuiteREST(t *testing.T) {
	cat := icebergrest.Start(t)
	n := 0
	sinktest.Run(t, sinktest.Kind{Engine: openDuckDB, New: func(t *testing.T) sinktest.Place {
		n++
		p := folder(filepath.Join(t.TempDir(), "tbl"), fmt.Sprintf("rest_db.t%d", n))
		block := p.Block
		p.Block = func(ctx, mode string) string {
			return strings.Replace(block(ctx, mode), "}\n", fmt.Sprintf(", catalog: {rest: %q}}\n", cat.URI), 1)
		}
		return p
	}}, sinktest.Stores(t, nil))
}
