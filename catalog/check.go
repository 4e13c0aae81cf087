package catalog

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Check checks what every store refuses in c before it reads anything:
// a database, table or partition without a name, a table change whose
// table names no database, a partition without values or a location. What
// needs the catalog's contents (a stale Base, a missing table, the number
// of partition values) is checked by the store.
func (c Changes) Check() error {
	for _, d := range c.Databases {
		if err := checkName("database", d.Name); err != nil {
			return err
		}
	}
	for _, t := range c.Tables {
		if err := checkTableName(t.Table.Database, t.Table.Name); err != nil {
			return err
		}
		if t.Base < 0 {
			return fmt.Errorf("table %s.%s: base version %d is negative", t.Table.Database, t.Table.Name, t.Base)
		}
		if !t.Drop && t.Table.Location == "" {
			return fmt.Errorf("table %s.%s: no location", t.Table.Database, t.Table.Name)
		}
	}
	for _, p := range c.Partitions {
		if err := checkTableName(p.Database, p.Table); err != nil {
			return err
		}
		if len(p.Values) == 0 {
			return fmt.Errorf("partition of table %s.%s: no values", p.Database, p.Table)
		}
		if p.Location == "" {
			return fmt.Errorf("partition %v of table %s.%s: no location", p.Values, p.Database, p.Table)
		}
	}
	for _, p := range c.DropPartitions {
		if err := checkTableName(p.Database, p.Table); err != nil {
			return err
		}
	}
	return nil
}

// checkTableName checks a table's database and name.
func checkTableName(database, name string) error {
	if err := checkName("database", database); err != nil {
		return err
	}
	if err := checkName("table", name); err != nil {
		return fmt.Errorf("in database %s: %w", database, err)
	}
	return nil
}

// checkName refuses an empty name, and one with a dot or white space,
// which DB.TABLE could not name.
func checkName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("a %s needs a name", what)
	case strings.ContainsAny(name, ". \t\r\n"):
		return fmt.Errorf("%s name %q holds a dot or white space", what, name)
	}
	return nil
}

// CheckPartition checks that p fits t, the current version of its table:
// one value per partition key.
func CheckPartition(t Table, values []string) error {
	if len(values) != len(t.PartitionKeys) {
		return fmt.Errorf("partition %v of table %s.%s: %d values, the table has %d partition keys %v",
			values, t.Database, t.Name, len(values), len(t.PartitionKeys), ColumnNames(t.PartitionKeys))
	}
	return nil
}

// ColumnNames returns the names of cols, in order.
func ColumnNames(cols []Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

// ValuesKey encodes partition values so that comparing keys byte by byte
// orders partitions as Partitions must (values compared element by
// element, byte order, a shorter prefix first), and so that equal keys are
// equal values: each value with its zero bytes escaped (0x00 → 0x00 0x01),
// followed by 0x00 0x00. A store keeps it as its partitions' key (a BLOB,
// a bytea) and sorts on it.
func ValuesKey(values []string) []byte {
	var b bytes.Buffer
	for _, v := range values {
		for i := 0; i < len(v); i++ {
			b.WriteByte(v[i])
			if v[i] == 0 {
				b.WriteByte(1)
			}
		}
		b.Write([]byte{0, 0})
	}
	return b.Bytes()
}

// CompareValues compares partition values element by element in byte
// order, a shorter prefix first: the order of Partitions.
func CompareValues(a, b []string) int {
	return slices.Compare(a, b)
}
