package bookmark

import (
	"fmt"
	"testing"
)

func TestWidens(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"INTEGER", "BIGINT", true},
		{"TINYINT", "INTEGER", true},
		{"BIGINT", "INTEGER", false},
		{"BIGINT", "DOUBLE", true},
		{"DECIMAL(10,2)", "DOUBLE", true},
		{"FLOAT", "DOUBLE", true},
		{"DOUBLE", "BIGINT", false},
		{"DOUBLE", "FLOAT", false},
		{"DATE", "VARCHAR", true},
		{"BOOLEAN", "VARCHAR", true},
		{"VARCHAR", "DOUBLE", false},
		{"BOOLEAN", "DOUBLE", false},
		{"DATE", "TIMESTAMP", false},
		{"BIGINT", "BIGINT", true},
	} {
		if got := Widens(MustParseType(tc.from), MustParseType(tc.to)); got != tc.want {
			t.Errorf("Widens(%s, %s): got %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestWider(t *testing.T) {
	for typ, want := range map[string]string{
		"INTEGER":       "[BIGINT DOUBLE VARCHAR]",
		"BIGINT":        "[DOUBLE VARCHAR]",
		"DECIMAL(10,2)": "[DOUBLE VARCHAR]",
		"DOUBLE":        "[VARCHAR]",
		"DATE":          "[VARCHAR]",
		"VARCHAR":       "[]",
		"ARRAY<BIGINT>": "[]",
	} {
		if got := fmt.Sprint(Wider(MustParseType(typ))); got != want {
			t.Errorf("Wider(%s): got %s, want %s", typ, got, want)
		}
	}
}

func TestEvolveSchema(t *testing.T) {
	v1 := []Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "BIGINT"}}
	v2 := []Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}, {Name: "coupon", Type: "VARCHAR"}}

	first := EvolveSchema(nil, nil, v1, "r1")
	if got := fmt.Sprint(first); got != "[{1 r1 [{id BIGINT} {amount BIGINT}] [] []}]" {
		t.Errorf("first run: got %s", got)
	}
	if same := EvolveSchema(first, v1, v1, "r2"); len(same) != 1 {
		t.Errorf("an unchanged schema: got %d versions, want 1", len(same))
	}
	next := EvolveSchema(first, v1, v2, "r3")
	if got := fmt.Sprint(next[1]); got != "{2 r3 [{id BIGINT} {amount DOUBLE} {coupon VARCHAR}] [coupon] [amount]}" {
		t.Errorf("second version: got %s", got)
	}
	if len(first) != 1 {
		t.Errorf("EvolveSchema changed its argument: %v", first)
	}
	// A state recorded before versions were kept: its schema is version 1.
	old := EvolveSchema(nil, v1, v2, "r4")
	if len(old) != 2 || old[0].RunID != "" || old[1].Version != 2 || fmt.Sprint(old[1].Added) != "[coupon]" {
		t.Errorf("from an old state: got %v", old)
	}
	if got := EvolveSchema(first, v1, nil, "r5"); len(got) != 1 {
		t.Errorf("a run that read nothing: got %v", got)
	}
}
