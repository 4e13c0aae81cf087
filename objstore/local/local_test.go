package local_test

import (
	"testing"

	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/objstore/local"
	"github.com/tidemark-etl/tidemark/objstore/objstoretest"
)

func TestContract(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestContractWithoutHardLinks: on a file system without hard links
// (FAT, many FUSE and SMB mounts) the store still keeps its contract,
// Create's exactly-one-wins included.
func TestContractWithoutHardLinks(t *testing.T) {
	defer local.WithoutHardLinks()()
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
