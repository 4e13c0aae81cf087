package objcore_test

import (
	"testing"

	"github.com/tidemark-etl/tidemark/store/objcore"
	"github.com/tidemark-etl/tidemark/store/objcore/backendtest"
)

func TestMemBackend(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) objcore.Backend { return objcore.NewMemBackend("memory://"+t.Name(), nil) })
}
