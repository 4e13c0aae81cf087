package bookmark

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCursorStoredAsJSON: a SQL source's cursor is kept in the state as
// the JSON it is, not base64 (a third larger); a state written before, with
// the cursor base64-encoded, reads the same cursor.
func TestCursorStoredAsJSON(t *testing.T) {
	cursor := `{"v":1,"keys":["id"],"mark":["7"]}`
	b, err := json.Marshal(SourceState{Cursor: JSONBytes(cursor)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cursor":`+cursor) {
		t.Fatalf("cursor not kept as JSON: %s", b)
	}
	for _, in := range []string{string(b), `{"cursor":"eyJ2IjoxLCJrZXlzIjpbImlkIl0sIm1hcmsiOlsiNyJdfQ=="}`} {
		var st SourceState
		if err := json.Unmarshal([]byte(in), &st); err != nil {
			t.Fatal(err)
		}
		if string(st.Cursor) != cursor {
			t.Fatalf("from %s: cursor %q, want %q", in, st.Cursor, cursor)
		}
	}
	// Bytes that are not JSON still come back.
	b, _ = json.Marshal(SourceState{Cursor: JSONBytes("\xff not json")})
	var st SourceState
	if err := json.Unmarshal(b, &st); err != nil || string(st.Cursor) != "\xff not json" {
		t.Fatalf("non-JSON cursor through %s: %q, %v", b, st.Cursor, err)
	}
}
