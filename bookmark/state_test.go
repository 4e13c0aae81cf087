package bookmark

import (
	"encoding/json"
	"testing"
)

// TestUnknownKindPassesThrough: a state written by a kind this binary
// does not have (a store read by an older tidemark, a state copy) keeps
// the kind's fields as written, byte for byte, and shows its core.
func TestUnknownKindPassesThrough(t *testing.T) {
	in := `{"kind":"elsewhere","fingerprint":"fp","files":2,"bytes":20,"next":{"a":[1,"x"]},"n":7}`
	var s SourceState
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	raw, ok := s.Detail.(RawState)
	if !ok || raw.Of != "elsewhere" || raw.JSON != `{"next":{"a":[1,"x"]},"n":7}` || raw.Number("n") != 7 {
		t.Fatalf("detail = %#v, want the kind's fields as written", s.Detail)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != in {
		t.Errorf("encoded\n %s\nwant\n %s", b, in)
	}
	if s.View().ListsFiles(s) {
		t.Errorf("a kind not built in lists files")
	}
}

// TestFlattenJSON: a detail's keys go beside the core's in the record's
// order, a key in both once with the detail's value, other keys after.
func TestFlattenJSON(t *testing.T) {
	got, err := FlattenJSON([]string{"a", "b", "c"}, []byte(`{"c":1,"a":2}`), []byte(`{"z":3,"b":4,"a":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":5,"b":4,"c":1,"z":3}`; string(got) != want {
		t.Errorf("FlattenJSON = %s, want %s", got, want)
	}
	core, rest, err := SplitJSON(got, []string{"a", "c"})
	if err != nil || string(core) != `{"a":5,"c":1}` || string(rest) != `{"b":4,"z":3}` {
		t.Errorf("SplitJSON = %s, %s, %v; want the core's keys and the others", core, rest, err)
	}
}
