package lineage

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/job"
)

// tabled is a SQL table block (job.Tabled), placed is a file block
// (job.Placed): what naming asks of a source or sink block.
type (
	tabled = job.Tabled
	placed = job.Placed
)

// dataset is one source's or sink's dataset and its dataSource facet.
type dataset struct {
	ctx, from       string // from: a sink's from: (sources: "")
	namespace, name string
	sourceName, uri string
}

// datasetOf names a source's or sink's dataset by the OpenLineage naming
// conventions (https://openlineage.io/docs/spec/naming): S3 namespace
// s3://BUCKET and name the key prefix; local files namespace file and the
// absolute path; PostgreSQL postgres://HOST:PORT and DB.SCHEMA.TABLE;
// MySQL mysql://HOST:PORT and DB.TABLE. ok is false for a block that
// names no dataset (a SQL source reading a query).
func datasetOf(dir string, c job.Config) (dataset, bool) {
	switch b := c.(type) {
	case tabled:
		conn, table := b.TablePlace()
		return tableDataset(dir, conn, table)
	case placed:
		p, _ := b.Place()
		return fileDataset(dir, p), true
	}
	return dataset{}, false
}

func fileDataset(dir, p string) dataset {
	if rest, ok := strings.CutPrefix(p, "s3://"); ok {
		bucket, key, _ := strings.Cut(rest, "/")
		key = strings.Trim(key, "/")
		if key == "" {
			key = "/"
		}
		ns := "s3://" + bucket
		uri := ns
		if key != "/" {
			uri += "/" + key
		}
		return dataset{namespace: ns, name: key, sourceName: ns, uri: uri}
	}
	p = strings.TrimPrefix(p, "file://")
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
	return dataset{namespace: "file", name: p, sourceName: "file", uri: u.String()}
}

func tableDataset(dir, conn, table string) (dataset, bool) {
	if table == "" {
		return dataset{}, false
	}
	if rest, ok := strings.CutPrefix(conn, "sqlite:"); ok {
		p := strings.TrimPrefix(rest, "//")
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		u := url.URL{Scheme: "sqlite", Path: filepath.ToSlash(filepath.Clean(p))}
		ns := u.String()
		return dataset{namespace: ns, name: table, sourceName: ns, uri: ns}, true
	}
	u, err := url.Parse(conn)
	if err != nil {
		return dataset{}, false
	}
	scheme := u.Scheme
	port := u.Port()
	switch scheme {
	case "postgresql", "postgres":
		scheme = "postgres"
		if port == "" {
			port = "5432"
		}
	case "mysql", "mariadb":
		scheme = "mysql"
		if port == "" {
			port = "3306"
		}
	}
	ns := scheme + "://" + u.Hostname() + ":" + port
	db := strings.TrimPrefix(u.Path, "/")
	name := db + "." + table
	if scheme == "postgres" && !strings.Contains(table, ".") {
		name = db + ".public." + table
	}
	if scheme == "mysql" && strings.Contains(table, ".") {
		name = table // db.table already: in MySQL a schema is a database
	}
	return dataset{namespace: ns, name: name, sourceName: ns, uri: ns + "/" + db}, true
}

// datasets names every source and sink of spec.
func datasets(spec *job.Spec) (inputs, outputs []dataset) {
	for _, s := range spec.Sources {
		if d, ok := datasetOf(spec.Dir, s.Config); ok {
			d.ctx = s.Ctx
			inputs = append(inputs, d)
		}
	}
	for _, k := range spec.Sinks {
		if d, ok := datasetOf(spec.Dir, k.Config); ok {
			d.ctx, d.from = k.Ctx, k.From
			if d.from == "" && len(spec.Transforms) == 0 && len(spec.Sources) == 1 {
				d.from = spec.Sources[0].Ctx
			}
			outputs = append(outputs, d)
		}
	}
	return inputs, outputs
}
