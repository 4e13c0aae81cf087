package job

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/objstore"
)

// What the job's own checks ask of a component's block, without knowing
// its kind: each is an interface a block implements when it applies.

// Placer is a block that says where it reads or writes (every shipped
// source and sink kind). The job's checks that sinks do not overlap
// sources, the state or each other, and lineage's dataset names, read
// this and nothing else of the block: no one outside the kind takes its
// locations apart.
type Placer interface {
	// Place describes the block's place; spec is the job it belongs to
	// (its folder resolves relative paths).
	Place(spec *Spec) Place
}

// Place is where one source or sink block reads or writes.
type Place struct {
	// Folder is the folder of a file system or an object store the block
	// reads or writes, as a location (an absolute path, s3://bucket/prefix),
	// with S3 its object store settings; "" for a block that has none (a
	// SQL table). A sink's folder may not overlap a source's, the state's
	// or another sink's.
	Folder string
	S3     map[string]string
	// Shown is the place as the job file gives it, for messages, with any
	// secret masked.
	Shown string
	// Dataset is the block's OpenLineage dataset; its zero value for a
	// block that names none (a SQL source reading a query).
	Dataset Dataset
}

// Dataset is a dataset named by the OpenLineage naming conventions
// (https://openlineage.io/docs/spec/naming), with its dataSource facet.
type Dataset struct {
	Namespace, Name string
	// SourceName and URI are the dataSource facet's.
	SourceName, URI string
}

// FolderPlace is the place of a block that reads or writes the folder at
// path (a job-file path: local, file:// or s3://) with S3 settings s3:
// the folder resolved against the job file's, the path masked for
// messages, and the dataset the OpenLineage conventions give a folder
// (S3: namespace s3://BUCKET, name the key prefix; local: namespace file,
// name the absolute path).
func FolderPlace(spec *Spec, path string, s3 map[string]string) Place {
	loc := path
	if spec != nil {
		loc = spec.Resolve(path)
	}
	shown := path
	if !objstore.IsLocal(path) {
		_, shown = secret.Find(path)
	}
	return Place{Folder: loc, S3: s3, Shown: shown, Dataset: folderDataset(loc)}
}

func folderDataset(loc string) Dataset {
	f := objstore.ParseFolder(loc)
	if f.Scheme != "file" {
		ns := f.Scheme + "://" + f.Bucket
		name := strings.TrimSuffix(f.Dir, "/")
		if name == "" {
			return Dataset{Namespace: ns, Name: "/", SourceName: ns, URI: ns}
		}
		return Dataset{Namespace: ns, Name: name, SourceName: ns, URI: ns + "/" + name}
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(f.Dir)}
	return Dataset{Namespace: "file", Name: f.Dir, SourceName: "file", URI: u.String()}
}

// PasswordVarer is a block that takes its password from an environment
// variable (SQL tables); a run refuses one whose variable is not set.
type PasswordVarer interface {
	// PasswordVar is the variable's name ("": none).
	PasswordVar() string
}

// SpillFolderer is an engine block that names a folder for temporary
// files, which the run uses for its own too.
type SpillFolderer interface {
	// SpillFolder is the folder, resolved ("": the system's).
	SpillFolder() string
}
