package tidemark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/secret"
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

// OpenState opens the state store at location. A location with a
// password or token inline (from --state or TIDEMARK_STATE; the job
// file's state: is refused by its validation) is a usage error, and the
// message shows it masked. A plain path is checked too: a key=value
// connection string or a DSN would be taken as a SQLite file's path and
// its password made a file name.
func OpenState(ctx context.Context, location string) (store.Store, error) {
	if found, masked := secret.Find(location); len(found) > 0 {
		return nil, fmt.Errorf("%w: state %q holds a secret inline (%s); %s", ErrUsage, masked, secret.Describe(found), job.StateHint(location))
	}
	return store.Open(ctx, location)
}
