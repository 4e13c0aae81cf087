package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestRunSendsLineage: run sends START and COMPLETE to the job file's
// lineage: url with the key from api_key_env, which it never prints.
func TestRunSendsLineage(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []map[string]any
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev map[string]any
		_ = json.Unmarshal(body, &ev)
		mu.Lock()
		got, auth = append(got, ev), append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer srv.Close()
	const key = "e2e-lineage-k3y-90210"
	f := newFixture(t, jobOpts{top: []string{"lineage: {url: " + srv.URL + ", api_key_env: TM_OL_KEY}"}})
	f.secrets = append(f.secrets, key)
	f.addCSVs("a", 1, 5)
	s, r := f.run([]string{"TM_OL_KEY=" + key, "OPENLINEAGE_URL=http://127.0.0.1:1"})
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%v", r.code, r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0]["eventType"] != "START" || got[1]["eventType"] != "COMPLETE" {
		t.Fatalf("got events %v, want START and COMPLETE", got)
	}
	for i, a := range auth {
		if a != "Bearer "+key {
			t.Errorf("event %d: Authorization %q, want the key from TM_OL_KEY", i, a)
		}
	}
	job, _ := got[1]["job"].(map[string]any)
	if job["name"] != s.Job {
		t.Errorf("event job %v, want %s", job, s.Job)
	}
	facets, _ := got[1]["run"].(map[string]any)["facets"].(map[string]any)
	bm, _ := facets["tidemark_bookmark"].(map[string]any)
	if bm["runId"] != s.RunID {
		t.Errorf("bookmark facet %v, want run %s", bm, s.RunID)
	}
}
