package bookmark

import (
	"fmt"
	"strings"
)

// Mode is a run's bookmark mode, as in Glue's --job-bookmark-option.
type Mode string

// The three bookmark modes.
const (
	// ModeEnable reads what is new since the bookmark and advances it.
	ModeEnable Mode = "enable"
	// ModeDisable reads everything and leaves the bookmark alone.
	ModeDisable Mode = "disable"
	// ModePause reads what enable would (or, with from/to, exactly what a
	// range of runs read) and leaves the bookmark alone.
	ModePause Mode = "pause"
)

// ParseMode accepts Glue's spellings (job-bookmark-enable) and short ones
// (enable). The empty string means enable.
func ParseMode(s string) (Mode, error) {
	switch strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "job-bookmark-") {
	case "", "enable":
		return ModeEnable, nil
	case "disable":
		return ModeDisable, nil
	case "pause":
		return ModePause, nil
	}
	return "", fmt.Errorf("unknown bookmark mode %q (want enable, disable or pause, or Glue's job-bookmark-enable|disable|pause)", s)
}

// Advances reports whether a run in this mode moves the bookmark.
func (m Mode) Advances() bool { return m == ModeEnable }

// Tracking says how a file source remembers what it has read.
type Tracking string

// The tracking modes.
const (
	// TrackExact records the identity of every processed file; it never misses
	// a file, whatever its mtime.
	TrackExact Tracking = "exact"
	// TrackTimestamp is Glue's model: a last-modified high-water mark plus the
	// band of recently seen files. It can miss files that appear with an mtime
	// older than the high-water mark minus the band.
	TrackTimestamp Tracking = "timestamp"
)

// OnModified says what a run does with a file whose identity changed since it
// was processed.
type OnModified string

// The on_modified policies.
const (
	// Reprocess reads the new version of the file again.
	Reprocess OnModified = "reprocess"
	// Ignore keeps the old record and does not read the file again.
	Ignore OnModified = "ignore"
	// Fail fails the run, naming the file.
	Fail OnModified = "fail"
)
