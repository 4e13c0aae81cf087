package bookmark

import "slices"

// Schema evolution modes of a file source (Auto Loader's).
const (
	// EvolveFail fails a run that meets a column the schema lacks.
	EvolveFail = "fail"
	// EvolveAddNewColumns adds new columns (and widens types) as a new
	// schema version and goes on.
	EvolveAddNewColumns = "add_new_columns"
	// EvolveRescue keeps the schema and puts what does not fit it in the
	// rescued-data column.
	EvolveRescue = "rescue"
	// EvolveNone keeps the schema and ignores new columns.
	EvolveNone = "none"
)

// SchemaEvolutions are the modes, the default first.
var SchemaEvolutions = []string{EvolveFail, EvolveAddNewColumns, EvolveRescue, EvolveNone}

// SchemaVersion is one version of a source's schema: the first one
// recorded, then one per run that changed it.
type SchemaVersion struct {
	Version int      `json:"version"`
	RunID   string   `json:"run_id,omitempty"` // the run that recorded it ("" before versions were kept)
	Columns []Column `json:"columns"`
	// Added and Widened name the columns this version added and the
	// columns whose type it widened.
	Added   []string `json:"added,omitempty"`
	Widened []string `json:"widened,omitempty"`
}

// Widens reports whether every value of type from is a value of type to
// without loss, by the widening rules of schema evolution: integers widen
// to wider integers (TINYINT → SMALLINT → INTEGER → BIGINT → HUGEINT) and,
// with FLOAT and DECIMAL, to DOUBLE; anything widens to VARCHAR. A type
// widens to itself.
func Widens(from, to Type) bool {
	if from.Equal(to) || to.Kind == Varchar {
		return true
	}
	rank := func(k Kind) int {
		return slices.Index([]Kind{TinyInt, SmallInt, Integer, BigInt, HugeInt}, k)
	}
	switch {
	case rank(from.Kind) >= 0 && rank(to.Kind) >= 0:
		return rank(from.Kind) <= rank(to.Kind)
	case to.Kind == Double:
		return from.Integral() || from.Kind == Float || from.Kind == Decimal
	}
	return false
}

// Wider is the types a column of type t widens to when its values do not
// fit it, narrowest first: BIGINT, DOUBLE, VARCHAR for integers; DOUBLE,
// VARCHAR for FLOAT and DECIMAL; VARCHAR for anything else but VARCHAR,
// and nothing for VARCHAR and nested types.
func Wider(t Type) []Type {
	switch {
	case t.Kind == Varchar || t.Nested():
		return nil
	case t.Integral() && t.Kind != BigInt && t.Kind != HugeInt && t.Kind != UBigInt && t.Kind != UHugeInt:
		return []Type{Scalar(BigInt), Scalar(Double), Scalar(Varchar)}
	case t.Integral() || t.Kind == Float || t.Kind == Decimal:
		return []Type{Scalar(Double), Scalar(Varchar)}
	}
	return []Type{Scalar(Varchar)}
}

// EvolveSchema returns the versions of a source's schema after a run
// that read it with schema now: versions as they were when now is the
// current schema, else with a new version that names the columns now
// added and those whose type changed. Versions a state written before they
// were kept lacks begin with its recorded schema as version 1.
func EvolveSchema(versions []SchemaVersion, prev, now []Column, runID string) []SchemaVersion {
	if len(now) == 0 {
		return versions
	}
	if len(versions) == 0 && len(prev) > 0 {
		versions = []SchemaVersion{{Version: 1, Columns: prev}}
	}
	if n := len(versions); n > 0 && slices.Equal(versions[n-1].Columns, now) {
		return versions
	}
	v := SchemaVersion{Version: len(versions) + 1, RunID: runID, Columns: slices.Clone(now)}
	if len(versions) > 0 {
		was := map[string]string{}
		for _, c := range versions[len(versions)-1].Columns {
			was[c.Name] = c.Type
		}
		for _, c := range now {
			t, ok := was[c.Name]
			switch {
			case !ok:
				v.Added = append(v.Added, c.Name)
			case t != c.Type:
				v.Widened = append(v.Widened, c.Name)
			}
		}
	}
	return append(slices.Clone(versions), v)
}
