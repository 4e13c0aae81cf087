package objstore

import (
	"path/filepath"
	"strings"
)

// Folder is a location of a file system or an object store taken apart:
// the one place tidemark reads file://, plain-path and s3:// locations
// for what they name (the runner's overlap checks, lineage's dataset
// names, the crawler's keys).
type Folder struct {
	// Scheme is "file" for a local path, else the URL's scheme ("s3").
	Scheme string
	// Bucket is an object store location's bucket ("" for a local path).
	Bucket string
	// Dir is, for a local path, the folder's absolute, cleaned path; for
	// an object store, the key prefix without a leading '/': "" for the
	// bucket's root, else ending in '/' (S3 keys are literal: "a/../b" is a
	// key of its own, so a prefix is kept as written).
	Dir string
}

// IsLocal reports whether location is on a local disk: a plain path or a
// file:// URL.
func IsLocal(location string) bool { return Scheme(location) == "file" }

// ParseFolder takes location apart. A relative local path is made
// absolute against the working folder (resolve a job file's paths first).
// A query string (the options a manifest keeps) and user information in
// the host part are dropped: they name no place.
func ParseFolder(location string) Folder {
	scheme := Scheme(location)
	if scheme == "file" {
		p := strings.TrimPrefix(location, "file://")
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return Folder{Scheme: "file", Dir: filepath.Clean(p)}
	}
	rest, _, _ := strings.Cut(strings.TrimPrefix(location, scheme+"://"), "?")
	if i := strings.LastIndex(rest, "@"); i >= 0 && i < strings.Index(rest+"/", "/") {
		rest = rest[i+1:]
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	prefix = strings.TrimLeft(prefix, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return Folder{Scheme: scheme, Bucket: bucket, Dir: prefix}
}

// Join is the location of key (a '/'-separated path) below the folder
// location root: joined with the OS's separator on a local disk, appended
// to the prefix (with a '/' between) in an object store.
func Join(root, key string) string {
	if IsLocal(root) {
		return filepath.Join(strings.TrimPrefix(root, "file://"), filepath.FromSlash(key))
	}
	if key == "" {
		return root
	}
	return strings.TrimSuffix(root, "/") + "/" + key
}
