package tidemark

import (
	"os"
	"strconv"
	"testing"
)

// TestRunRecordsHost: each run records the host id it ran with, in its run
// record and result; without one, hostname:pid.
func TestRunRecordsHost(t *testing.T) {
	w := newWorld(t)
	host, _ := os.Hostname()
	want := map[string]string{}
	for i, id := range []string{"worker-a", "worker-b", ""} {
		w.write("f"+strconv.Itoa(i)+".csv", strconv.Itoa(i))
		res := w.run(RunOptions{HostID: id})
		if id == "" {
			id = host + ":" + strconv.Itoa(os.Getpid())
		}
		want[res.RunID] = id
		if res.Host != id {
			t.Errorf("run %d: result host %q, want %q", i, res.Host, id)
		}
	}
	for runID, id := range want {
		if got := w.runRecord(runID).Host; got != id {
			t.Errorf("run %s: recorded host %q, want %q", runID, got, id)
		}
	}
}
