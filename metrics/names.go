package metrics

import "github.com/prometheus/client_golang/prometheus"

// The metrics; each has the label job, and source or sink ones the label
// ctx.
var (
	descStoreUp = prometheus.NewDesc("tidemark_store_up",
		"1 if the last scrape read the state store without error, else 0.", nil, nil)
	descLastSuccess = prometheus.NewDesc("tidemark_job_last_success_timestamp_seconds",
		"When the job's last succeeded run finished (Unix seconds).", []string{"job"}, nil)
	descLastStatus = prometheus.NewDesc("tidemark_job_last_run_status",
		"Status of the job's last finished run: 1 succeeded, 0 failed.", []string{"job"}, nil)
	descDuration = prometheus.NewDesc("tidemark_job_run_duration_seconds",
		"Duration of the job's last finished run.", []string{"job"}, nil)
	descBookmarkVersion = prometheus.NewDesc("tidemark_job_bookmark_version",
		"The job's current bookmark version.", []string{"job"}, nil)
	descLeaseHeld = prometheus.NewDesc("tidemark_job_lease_held",
		"1 while a run holds the job's lease (holder: its run id), else 0.", []string{"job", "holder"}, nil)

	descSourceRows = prometheus.NewDesc("tidemark_source_rows",
		"Rows the job's last finished run read from the source.", []string{"job", "ctx"}, nil)
	descSourceBytes = prometheus.NewDesc("tidemark_source_bytes",
		"Bytes the job's last finished run read from the source.", []string{"job", "ctx"}, nil)
	descSourceFiles = prometheus.NewDesc("tidemark_source_files",
		"Files (parts, for a SQL table) the job's last finished run read from the source.", []string{"job", "ctx"}, nil)
	descSourceRejected = prometheus.NewDesc("tidemark_source_rejected",
		"Bad rows the job's last finished run set aside or skipped.", []string{"job", "ctx"}, nil)
	descSourceRegressions = prometheus.NewDesc("tidemark_source_regressions",
		"Rows behind the mark the job's last finished run found in a SQL table source.", []string{"job", "ctx"}, nil)
	descSlotRetained = prometheus.NewDesc("tidemark_source_slot_retained_wal_bytes",
		"WAL the source's replication slot kept on the server (changes: log), as the job's last committed run saw it.", []string{"job", "ctx"}, nil)
	descSlotLag = prometheus.NewDesc("tidemark_source_slot_lag_bytes",
		"WAL the server had written past the position the job's last committed run read up to (changes: log), as that run saw it.", []string{"job", "ctx"}, nil)

	descSinkRows = prometheus.NewDesc("tidemark_sink_rows",
		"Rows the job's last finished run wrote to the sink.", []string{"job", "ctx"}, nil)
	descSinkBytes = prometheus.NewDesc("tidemark_sink_bytes",
		"Bytes the job's last finished run wrote to the sink.", []string{"job", "ctx"}, nil)
	descSinkFiles = prometheus.NewDesc("tidemark_sink_files",
		"Files the job's last finished run wrote to the sink.", []string{"job", "ctx"}, nil)

	descBacklogFiles = prometheus.NewDesc("tidemark_source_backlog_files",
		"Files the job's next run would read from the source now.", []string{"job", "ctx"}, nil)
	descBacklogBytes = prometheus.NewDesc("tidemark_source_backlog_bytes",
		"Bytes the job's next run would read from the source now.", []string{"job", "ctx"}, nil)
	descBacklogRows = prometheus.NewDesc("tidemark_source_backlog_rows",
		"Rows the job's next run would read from a SQL table source now.", []string{"job", "ctx"}, nil)
	descBacklogOldest = prometheus.NewDesc("tidemark_source_backlog_oldest_seconds",
		"Age of the oldest file the job's next run would read from the source.", []string{"job", "ctx"}, nil)
)

var allDescs = []*prometheus.Desc{descStoreUp, descLastSuccess, descLastStatus, descDuration, descBookmarkVersion,
	descLeaseHeld, descSourceRows, descSourceBytes, descSourceFiles, descSourceRejected, descSourceRegressions,
	descSlotRetained, descSlotLag,
	descSinkRows, descSinkBytes, descSinkFiles, descBacklogFiles, descBacklogBytes, descBacklogRows, descBacklogOldest}
