package engine

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Scheme returns the URL scheme of a location: "file" for a local path or
// a file:// URL, else the scheme before "://" (s3, gs, ...).
func Scheme(loc string) string {
	if i := strings.Index(loc, "://"); i > 0 && !strings.ContainsAny(loc[:i], `/\`) {
		return strings.ToLower(loc[:i])
	}
	return "file"
}

// LocalPath returns the local path of a "file" location: the path itself,
// or a file:// URL's path (percent-decoded). It fails on other schemes and
// on file:// URLs naming a host.
func LocalPath(loc string) (string, error) {
	if s := Scheme(loc); s != "file" {
		return "", fmt.Errorf("location %s: want a local path, got a %s:// URL", loc, s)
	}
	if !strings.HasPrefix(strings.ToLower(loc), "file://") {
		return loc, nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "", fmt.Errorf("location %s: %w", loc, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("location %s: a file:// URL on host %s is not local", loc, u.Host)
	}
	return filepath.FromSlash(u.Path), nil
}
