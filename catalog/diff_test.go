package catalog

import (
	"reflect"
	"testing"
)

func TestDiff(t *testing.T) {
	a := Table{Location: "s3://a/", Format: "csv", Options: map[string]string{"header": "true", "delim": ","},
		Columns:       []Column{{"id", "BIGINT"}, {"amount", "INTEGER"}, {"gone", "VARCHAR"}},
		PartitionKeys: []Column{{"day", "VARCHAR"}}}
	b := Table{Location: "s3://b/", Format: "csv", Options: map[string]string{"header": "false", "quote": "'"},
		Columns:       []Column{{"id", "BIGINT"}, {"amount", "DOUBLE"}, {"note", "VARCHAR"}},
		PartitionKeys: []Column{{"day", "VARCHAR"}, {"product", "VARCHAR"}}, Deprecated: true}
	want := []Difference{
		{What: "location", From: "s3://a/", To: "s3://b/"},
		{What: "option", Name: "delim", From: ","},
		{What: "option", Name: "header", From: "true", To: "false"},
		{What: "option", Name: "quote", To: "'"},
		{What: "column type", Name: "amount", From: "INTEGER", To: "DOUBLE"},
		{What: "column added", Name: "note", To: "VARCHAR"},
		{What: "column dropped", Name: "gone", From: "VARCHAR"},
		{What: "partition keys", From: "day VARCHAR", To: "day VARCHAR, product VARCHAR"},
		{What: "deprecated", From: "false", To: "true"},
	}
	if got := Diff(a, b); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n got %+v\nwant %+v", got, want)
	}
	if len(Diff(a, a)) != 0 {
		t.Errorf("Diff(a, a) = %+v, want nothing", Diff(a, a))
	}
	wider := a
	wider.Columns = append([]Column{{"first", "DATE"}}, a.Columns...)
	wider.Parameters = map[string]string{"run": "r2"}
	if !AddsColumnsOnly(a, wider) {
		t.Error("AddsColumnsOnly(a, a with a column more) = false, want true")
	}
	if AddsColumnsOnly(a, b) {
		t.Error("AddsColumnsOnly(a, b) = true, want false")
	}
}
