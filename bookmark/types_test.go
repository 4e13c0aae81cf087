package bookmark

import (
	"reflect"
	"testing"
)

func TestParseType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Type
		text string // canonical text
	}{
		{"BIGINT", Scalar(BigInt), "BIGINT"},
		{"integer", Scalar(Integer), "INTEGER"},
		{"INT4", Scalar(Integer), "INTEGER"},
		{"VARCHAR", Scalar(Varchar), "VARCHAR"},
		{"varchar(255)", Scalar(Varchar), "VARCHAR"},
		{"DOUBLE", Scalar(Double), "DOUBLE"},
		{"double precision", Scalar(Double), "DOUBLE"},
		{"DECIMAL(18,3)", DecimalOf(18, 3), "DECIMAL(18,3)"},
		{"NUMERIC( 10 , 2 )", DecimalOf(10, 2), "DECIMAL(10,2)"},
		{"DECIMAL(5)", DecimalOf(5, 0), "DECIMAL(5,0)"},
		{"DECIMAL", DecimalOf(18, 3), "DECIMAL(18,3)"},
		{"TIMESTAMP", Scalar(Timestamp), "TIMESTAMP"},
		{"TIMESTAMP WITH TIME ZONE", Scalar(TimestampTZ), "TIMESTAMP WITH TIME ZONE"},
		{"TIMESTAMPTZ", Scalar(TimestampTZ), "TIMESTAMP WITH TIME ZONE"},
		{"timestamp   with time zone", Scalar(TimestampTZ), "TIMESTAMP WITH TIME ZONE"},
		{"TIMESTAMP_NS", Scalar(TimestampNS), "TIMESTAMP_NS"},
		{"TIME WITH TIME ZONE", Scalar(TimeTZ), "TIME WITH TIME ZONE"},
		{"DATE", Scalar(Date), "DATE"},
		{"BOOLEAN", Scalar(Boolean), "BOOLEAN"},
		{"BLOB", Scalar(Blob), "BLOB"},
		{"UBIGINT", Scalar(UBigInt), "UBIGINT"},
		{"HUGEINT", Scalar(HugeInt), "HUGEINT"},
		{"UUID", Scalar(UUID), "UUID"},
		{"JSON", Scalar(JSON), "JSON"},
		{"INTERVAL", Scalar(Interval), "INTERVAL"},
		{"INTEGER[]", ListOf(Scalar(Integer)), "ARRAY<INTEGER>"},
		{"VARCHAR[][]", ListOf(ListOf(Scalar(Varchar))), "ARRAY<ARRAY<VARCHAR>>"},
		{"ARRAY<INTEGER>", ListOf(Scalar(Integer)), "ARRAY<INTEGER>"},
		{"TIMESTAMPTZ[]", ListOf(Scalar(TimestampTZ)), "ARRAY<TIMESTAMP WITH TIME ZONE>"},
		{"DECIMAL(10,2)[]", ListOf(DecimalOf(10, 2)), "ARRAY<DECIMAL(10,2)>"},
		{"STRUCT(a INTEGER, \"b c\" VARCHAR[])",
			StructOf(Field{"a", Scalar(Integer)}, Field{"b c", ListOf(Scalar(Varchar))}),
			`STRUCT<a: INTEGER, "b c": ARRAY<VARCHAR>>`},
		{`STRUCT<a: INTEGER, "b c": ARRAY<VARCHAR>>`,
			StructOf(Field{"a", Scalar(Integer)}, Field{"b c", ListOf(Scalar(Varchar))}),
			`STRUCT<a: INTEGER, "b c": ARRAY<VARCHAR>>`},
		{`STRUCT("say ""hi""" TIMESTAMP WITH TIME ZONE)`,
			StructOf(Field{`say "hi"`, Scalar(TimestampTZ)}), `STRUCT<"say ""hi""": TIMESTAMP WITH TIME ZONE>`},
		{"MAP(VARCHAR, BIGINT)", MapOf(Scalar(Varchar), Scalar(BigInt)), "MAP<VARCHAR, BIGINT>"},
		{"MAP<VARCHAR, STRUCT(x DOUBLE)[]>", MapOf(Scalar(Varchar), ListOf(StructOf(Field{"x", Scalar(Double)}))),
			"MAP<VARCHAR, ARRAY<STRUCT<x: DOUBLE>>>"},
		{"ENUM('a', 'b')", Type{Kind: Other, Name: "ENUM('a', 'b')"}, "ENUM('a', 'b')"},
		{"INTEGER[3]", Type{Kind: Other, Name: "INTEGER[3]"}, "INTEGER[3]"},
		{"GEOMETRY[]", ListOf(Type{Kind: Other, Name: "GEOMETRY"}), "ARRAY<GEOMETRY>"},
	} {
		got, err := ParseType(tc.in)
		if err != nil {
			t.Errorf("ParseType(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseType(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
		if got.String() != tc.text {
			t.Errorf("ParseType(%q).String() = %q, want %q", tc.in, got.String(), tc.text)
		}
	}
}

func TestParseTypeErrors(t *testing.T) {
	for _, in := range []string{"", "INTEGER]", "ARRAY<INTEGER", "MAP(VARCHAR)", "STRUCT(a INTEGER", "DECIMAL(40,2)",
		"DECIMAL(5,6)", "DECIMAL(x)", "INTEGER[x]", "ENUM('a)", `STRUCT("a INTEGER)`, "INTEGER VARCHAR,"} {
		if got, err := ParseType(in); err == nil {
			t.Errorf("ParseType(%q) = %v, want an error", in, got)
		}
	}
}

func FuzzParseType(f *testing.F) {
	for _, s := range []string{"BIGINT", "DECIMAL(18,3)", "TIMESTAMP WITH TIME ZONE", "INTEGER[]", "STRUCT(a INTEGER, \"b\"\"\" MAP(VARCHAR, BIGINT[]))",
		"ARRAY<STRUCT<x: DOUBLE>>", "ENUM('a', 'b')[]", "INTEGER[3][]", "varchar(10)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ, err := ParseType(s)
		if err != nil {
			return
		}
		text := typ.String()
		again, err := ParseType(text)
		if err != nil {
			t.Fatalf("ParseType(%q) = %v, but its text %q does not parse: %v", s, typ, text, err)
		}
		if !reflect.DeepEqual(again, typ) {
			t.Fatalf("ParseType(%q) = %#v; its text %q parses as %#v", s, typ, text, again)
		}
		if again.String() != text {
			t.Fatalf("text of %q: got %q, want %q", s, again.String(), text)
		}
	})
}
