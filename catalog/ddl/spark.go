package ddl

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/internal/sqltype"
)

// spark is a database, an external table USING the table's format over
// its location (s3:// as s3a://, Hadoop's S3 file system), and one ADD
// PARTITION per registered partition.
func spark(t catalog.Table, parts []catalog.Partition) ([]string, error) {
	cols, err := columnTypes(t, sqltype.Spark.Type)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n", sparkName(t))
	for i, c := range cols {
		sep := ","
		if i == len(cols)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  %s %s%s\n", backtick(c.Name), c.Type, sep)
	}
	b.WriteString(")\nUSING " + t.Format)
	switch t.Format {
	case "csv":
		fmt.Fprintf(&b, "\nOPTIONS (header %s, sep %s", sqlString(fmt.Sprint(header(t))), sqlString(delimiter(t)))
		if header(t) {
			// Spark's default ignores the header and reads by position: a
			// file whose header orders the columns otherwise would have its
			// values under the wrong names. Checked, it fails instead.
			b.WriteString(", enforceSchema 'false'")
		}
		b.WriteString(")")
	case "json", "parquet":
	default:
		return nil, fmt.Errorf("table %s.%s: format %q has no Spark data source", t.Database, t.Name, t.Format)
	}
	if len(t.PartitionKeys) > 0 {
		keys := make([]string, len(t.PartitionKeys))
		for i, k := range t.PartitionKeys {
			keys[i] = backtick(k.Name)
		}
		fmt.Fprintf(&b, "\nPARTITIONED BY (%s)", strings.Join(keys, ", "))
	}
	fmt.Fprintf(&b, "\nLOCATION %s", sqlString(sparkLocation(t.Location)))
	out := []string{"CREATE DATABASE IF NOT EXISTS " + backtick(t.Database), b.String()}
	for _, p := range parts {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ADD IF NOT EXISTS PARTITION (%s) LOCATION %s",
			sparkName(t), partitionSpec(t, p, backtick, " = "), sqlString(sparkLocation(p.Location))))
	}
	return out, nil
}

func sparkName(t catalog.Table) string { return backtick(t.Database) + "." + backtick(t.Name) }

func backtick(s string) string { return sqltype.Spark.Quote(s) }

// sparkLocation is a location as Spark's Hadoop file systems name it.
func sparkLocation(loc string) string {
	if rest, ok := strings.CutPrefix(loc, "s3://"); ok {
		return "s3a://" + rest
	}
	return loc
}
