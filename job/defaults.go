package job

// The envelope's defaults; each kind's own are set by its ApplyDefaults.
// The job-file reference (docs/reference/job-file.md) is generated from both.
const (
	DefaultEngine        = "duckdb"
	DefaultBookmark      = "enable"
	DefaultOnBadRecord   = "fail"
	DefaultStateFile     = ".tidemark/state.db"
	DefaultIOConcurrency = 8
	DefaultDiskBudget    = 10 << 30
	// DefaultBatchFiles is a one-source job's batch_files: DuckDB reads
	// 10,000 tiny files in a few seconds and ~100 MB, while one read of
	// 100,000 takes over 1 GB (docs/benchmarks.md, "First run over a
	// backlog").
	DefaultBatchFiles = 10_000
)

// OnBadRecords are the allowed values of on_bad_record.
var OnBadRecords = []string{"fail", "skip", "quarantine"}

// ApplyDefaults fills unset fields; Parse calls it before Validate. A
// source or sink built in code with a Config and no Kind gets the kind of
// its Config; one with neither, the default kind and its empty block.
func (s *Spec) ApplyDefaults() {
	if s.Engine.Name == "" {
		s.Engine.Name = DefaultEngine
	}
	if s.Engine.Config == nil && s.Engine.raw == nil {
		if k, ok := engineKinds.byName(s.Engine.Name); ok {
			s.Engine.Config = k.New()
		}
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
	if s.BatchFiles == nil && len(s.Sources) <= 1 {
		n := DefaultBatchFiles
		s.BatchFiles = &n
	}
	if s.Engine.Config != nil {
		s.Engine.Config.ApplyDefaults(s)
	}
	s.crawlerDefaults()
	for i := range s.Sources {
		src := &s.Sources[i]
		src.Kind = kindOf(sourceKinds, src.Kind, src.Config)
		if src.Config == nil {
			if kind, ok := sourceKinds.byName(src.Kind); ok {
				src.Config = kind.New()
			}
		}
		if src.Config != nil {
			src.Config.ApplyDefaults(s)
		}
	}
	for i := range s.Sinks {
		k := &s.Sinks[i]
		k.Kind = kindOf(sinkKinds, k.Kind, k.Config)
		if k.Config == nil {
			if kind, ok := sinkKinds.byName(k.Kind); ok {
				k.Config = kind.New()
			}
		}
		if k.Config != nil {
			k.Config.ApplyDefaults(s)
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

// kindOf is the kind of a block built in code: its Config's, else the
// default kind.
func kindOf(r *registry, kind string, cfg Config) string {
	if kind != "" {
		return kind
	}
	if k, ok := r.forConfig(cfg); ok {
		return k.Name
	}
	return r.defaultName()
}
