package tidemark

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// StateLocation picks the state store: the --state flag, the job file's
// state:, $TIDEMARK_STATE, then .tidemark/state.db next to the job file
// (or in the working directory when there is no job file).
func StateLocation(flag string, spec *job.Spec) string {
	if flag != "" {
		return flag
	}
	if spec != nil && spec.State != "" {
		if strings.Contains(spec.State, "://") || filepath.IsAbs(spec.State) {
			return spec.State
		}
		return filepath.Join(spec.Dir, spec.State)
	}
	if env := os.Getenv("TIDEMARK_STATE"); env != "" {
		return env
	}
	if spec != nil {
		return filepath.Join(spec.Dir, job.DefaultStateFile)
	}
	return job.DefaultStateFile
}

// OpenState opens the state store at location.
func OpenState(ctx context.Context, location string) (store.Store, error) {
	return store.Open(ctx, location)
}
