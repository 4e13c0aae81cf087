package job

// What the job's own checks ask of a component's block, without knowing
// its kind: each is an interface a block implements when it applies.

// Placed is a block that reads or writes a folder of a file system or an
// object store (file sources and sinks); the checks that sinks do not
// overlap sources, the state or each other use it.
type Placed interface {
	// Place is the block's path as the job file gives it, and its S3
	// settings.
	Place() (path string, s3 map[string]string)
}

// PasswordVarer is a block that takes its password from an environment
// variable (SQL tables); a run refuses one whose variable is not set.
type PasswordVarer interface {
	// PasswordVar is the variable's name ("": none).
	PasswordVar() string
}

// SpillFolderer is an engine block that names a folder for temporary
// files, which the run uses for its own too.
type SpillFolderer interface {
	// SpillFolder is the folder, resolved ("": the system's).
	SpillFolder() string
}

// Tabled is a block that reads or writes one table of a SQL database
// (SQL table sources and sinks); lineage names its dataset from it.
type Tabled interface {
	// TablePlace is the block's connection URL (no password) and table
	// (schema.table or table; "" for a source that reads a query).
	TablePlace() (connection, table string)
}
