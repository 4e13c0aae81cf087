// Package enginetest is the conformance suite every engine.Engine passes:
// formats in and out, compressed inputs, hive columns, recorded and inferred
// schemas, transforms, partitioned and split outputs, bad-record policies
// and the counts and file lists an engine reports. An engine's package runs
// it from a test:
//
//	func TestConformance(t *testing.T) {
//		enginetest.Run(t, enginetest.Config{New: func(t *testing.T) engine.Engine { ... }})
//	}
//
// Inputs are written to local files and handed over as file:// locations;
// outputs are read back through the engine itself (as a source, written as
// CSV), so the suite needs no reader of its own for Parquet.
package enginetest

import (
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
)

// Config is what the suite needs of an engine.
type Config struct {
	// New makes a fresh engine; the suite closes it.
	New func(t *testing.T) engine.Engine
	// SplitOptions returns sink options of an output format (parquet,
	// csv) that make the engine write a sink of about a megabyte as
	// several files (DuckDB: file_size_bytes). Nil skips the split-output
	// test.
	SplitOptions func(format string) map[string]any
}

// Run runs the whole suite against c.New's engines.
func Run(t *testing.T, c Config) {
	s := &suite{c: c}
	t.Run("Formats", s.testFormats)
	t.Run("Compressed", s.testCompressed)
	t.Run("Hive", s.testHive)
	t.Run("Schema", s.testSchema)
	t.Run("NothingDropped", s.testNothingDropped)
	t.Run("Transforms", s.testTransforms)
	t.Run("Partitioned", s.testPartitioned)
	t.Run("Split", s.testSplit)
	t.Run("BadRecords", s.testBadRecords)
	t.Run("BadValueInAnyColumn", s.testBadValueInAnyColumn)
	t.Run("DoubleOutOfRange", s.testDoubleOutOfRange)
	t.Run("JSONNonFinite", s.testJSONNonFinite)
	t.Run("CSVNonFinite", s.testCSVNonFinite)
	t.Run("HugeIntegers", s.testHugeIntegers)
	t.Run("Locations", s.testLocations)
	t.Run("TextOutput", s.testTextOutput)
	t.Run("NotCut", s.testNotCut)
	t.Run("NotCutSkipped", s.testNotCutSkipped)
	t.Run("JSONNumbersAsWritten", s.testJSONNumbersAsWritten)
	t.Run("JSONNumbersQuarantined", s.testJSONNumbersQuarantined)
	t.Run("ColumnsDiffer", s.testColumnsDiffer)
	t.Run("PartitionTexts", s.testPartitionTexts)
	t.Run("HugeIntToParquet", s.testHugeIntToParquet)
	t.Run("EvolveCSV", s.evolving(s.testEvolveCSV))
	t.Run("EvolveJSON", s.evolving(s.testEvolveJSON))
	t.Run("EvolveParquet", s.evolving(s.testEvolveParquet))
}

type suite struct{ c Config }

func (s *suite) engine(t *testing.T) engine.Engine {
	t.Helper()
	e := s.c.New(t)
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("closing engine: %v", err)
		}
	})
	if !e.Capabilities().Reads("file") || !e.Capabilities().Writes("file") {
		t.Skip("the suite hands over local files; this engine does not read or write them itself")
	}
	return e
}
