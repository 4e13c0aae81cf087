// Package web holds the dashboard of `tidemark serve`: plain HTML, CSS and
// JavaScript embedded in the binary, with uPlot vendored for the charts.
// The pages read everything through the JSON API under /api/v1/ and build
// their DOM with textContent only, so no data is ever parsed as HTML.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Assets returns the dashboard's files rooted at static/ (index.html at
// the top), for http.FileServerFS. It never fails: the files are embedded.
func Assets() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // "static" is a valid path embedded above
	}
	return sub
}
