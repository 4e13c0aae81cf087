// Package web holds the dashboard of `tidemark serve`, embedded in the
// binary. This is a placeholder page; the dashboard replaces it.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Assets returns the dashboard's files, index.html at the root.
func Assets() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded folder is there: a build error otherwise
	}
	return sub
}
