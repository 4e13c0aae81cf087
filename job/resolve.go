package job

import (
	"path/filepath"
	"strings"
)

// Resolve turns a job-file path into a location: URLs stay as they are,
// local paths (file:// ones too) are made absolute against the job file's
// folder.
func (s *Spec) Resolve(p string) string {
	if strings.Contains(p, "://") {
		if strings.HasPrefix(p, "file://") {
			return s.Resolve(strings.TrimPrefix(p, "file://"))
		}
		return p
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.Dir, p)
	}
	return filepath.Clean(p)
}
