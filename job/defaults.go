package job

import "time"

// The defaults, in one place. The README's reference is written from these.
const (
	DefaultEngine         = "duckdb"
	DefaultBookmark       = "enable"
	DefaultFormatIn       = "csv"
	DefaultFormatOut      = "parquet"
	DefaultTracking       = "exact"
	DefaultMaxBand        = 15 * time.Minute
	DefaultMaxFilesInBand = 1000
	DefaultOnModified     = "reprocess"
	DefaultOnBadRecord    = "fail"
	DefaultSinkMode       = "append"
	DefaultStateFile      = ".tidemark/state.db"
	DefaultListing        = "full"
	DefaultIOConcurrency  = 8
	DefaultDiskBudget     = 10 << 30
)

// Allowed values of the enumerated keys.
var (
	InputFormats  = []string{"csv", "json", "parquet"}
	OutputFormats = []string{"parquet", "csv", "json"}
	Trackings     = []string{"exact", "timestamp"}
	OnModifieds   = []string{"reprocess", "ignore", "fail"}
	OnBadRecords  = []string{"fail", "skip", "quarantine"}
	SinkModes     = []string{"append", "overwrite", "overwrite_partitions"}
	// TableSinkModes are the modes of SQL table sinks.
	TableSinkModes = []string{"append", "merge", "overwrite"}
	Engines        = []string{"duckdb", "spark"}
	Listings       = []string{"full", "ordered"}
)

// ApplyDefaults fills unset fields; Parse calls it before Validate.
func (s *Spec) ApplyDefaults() {
	if s.Engine.Name == "" {
		s.Engine.Name = DefaultEngine
	}
	if s.Bookmark == "" {
		s.Bookmark = DefaultBookmark
	}
	if s.OnBadRecord == "" {
		s.OnBadRecord = DefaultOnBadRecord
	}
	if s.IO.Concurrency == 0 {
		s.IO.Concurrency = DefaultIOConcurrency
	}
	if s.IO.DiskBudget.Bytes == 0 {
		s.IO.DiskBudget.Bytes = DefaultDiskBudget
	}
	for i := range s.Sources {
		src := &s.Sources[i]
		if src.Format == "" {
			src.Format = DefaultFormatIn
		}
		if src.Tracking == "" {
			src.Tracking = DefaultTracking
		}
		if src.MaxBand.Duration == 0 {
			src.MaxBand.Duration = DefaultMaxBand
		}
		if src.MaxFilesInBand == 0 {
			src.MaxFilesInBand = DefaultMaxFilesInBand
		}
		if src.OnModified == "" {
			src.OnModified = DefaultOnModified
		}
		if src.OnBadRecord == "" {
			src.OnBadRecord = s.OnBadRecord
		}
		if src.Listing == "" {
			src.Listing = DefaultListing
		}
		if src.HivePartitioning == nil {
			t := true
			src.HivePartitioning = &t
		}
	}
	for i := range s.Sinks {
		k := &s.Sinks[i]
		if k.Format == "" {
			k.Format = DefaultFormatOut
		}
		if k.Mode == "" {
			k.Mode = DefaultSinkMode
		}
		if k.From == "" {
			if n := len(s.Transforms); n > 0 {
				k.From, _ = s.Transforms[n-1].Key.(string)
			} else if len(s.Sources) == 1 {
				k.From = s.Sources[0].Ctx
			}
		}
	}
}
