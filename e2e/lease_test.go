package e2e

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// slowTransform is cleanOrders made CPU-bound for a few seconds, so that a
// run holds its lease long enough for a second run to find it held.
const slowTransform = `SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount FROM orders_source ` +
	`WHERE (SELECT sum(hash(i)) FROM range(400000000) t(i)) IS NOT NULL`

// TestConcurrentRunsLease: while one run holds the job's lease, a second
// run exits 3 at once and names the holder; nothing is duplicated.
func TestConcurrentRunsLease(t *testing.T) {
	t.Parallel()
	eachBackend(t, testConcurrentRunsLease)
}

func testConcurrentRunsLease(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{transform: slowTransform})
	input := f.addCSVs("a", 3, 20)
	host, _ := os.Hostname()

	holder := f.start(nil, "run", f.jobPath, "--json")
	var results []result
	var blocked *result
	for !holder.exited() && blocked == nil {
		r := f.tidemark(nil, "run", f.jobPath, "--json")
		results = append(results, r)
		switch r.code {
		case 3:
			blocked = &results[len(results)-1]
		case 0:
			// This one got the lease first; the holder will find it held.
		default:
			t.Fatalf("concurrent run: got exit %d, want 0 or 3\n%v", r.code, r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	hr := holder.wait(t)
	if hr.code != 0 && hr.code != 3 {
		t.Fatalf("first run: got exit %d, want 0 or 3\n%v", hr.code, hr)
	}
	switch {
	case blocked != nil:
		// The holder's host id: hostname:pid by default.
		host := host + ":" + strconv.Itoa(holder.cmd.Process.Pid)
		assertMentions(t, *blocked, host)
		// run --json says so too: exit_code 3 and the lease's holder.
		v := assertFailureJSON(t, *blocked, 3, "lease_held")
		if v.Holder == nil || v.Holder.PID != holder.cmd.Process.Pid || v.Holder.Host != host || v.Holder.Started == "" {
			t.Errorf("run --json on exit 3: holder %+v, want pid %d on host %s with its start time\n%v",
				v.Holder, holder.cmd.Process.Pid, host, *blocked)
		}
		if blocked.took > 10*time.Second {
			t.Errorf("the blocked run took %v to exit 3, want at once", blocked.took)
		}
		if hr.code != 0 {
			t.Errorf("the lease holder: got exit %d, want 0\n%v", hr.code, hr)
		}
	case hr.code == 3:
		assertMentions(t, hr, host)
		if v := assertFailureJSON(t, hr, 3, "lease_held"); v.Holder == nil || v.Holder.Host != host+":"+strconv.Itoa(v.Holder.PID) {
			t.Errorf("run --json on exit 3: holder %+v, want one with host id %s:PID\n%v", v.Holder, host, hr)
		}
	default:
		t.Fatalf("no run exited 3: the first run finished in %v before a second one found the lease held (%d tries)\n%v",
			hr.took, len(results), hr)
	}
	f.assertSink(input)
}

// TestConcurrentRunsRace starts two runs of the same job at the same moment,
// several times: each exits 0 or 3, and every record lands exactly once.
func TestConcurrentRunsRace(t *testing.T) {
	t.Parallel()
	eachBackend(t, testConcurrentRunsRace)
}

func testConcurrentRunsRace(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	var all []record
	for round := 1; round <= 5; round++ {
		all = append(all, f.addCSVs(fmt.Sprintf("round%d", round), 2, 20)...)
		p1 := f.start(nil, "run", f.jobPath, "--json")
		p2 := f.start(nil, "run", f.jobPath, "--json")
		r1, r2 := p1.wait(t), p2.wait(t)
		for _, c := range []struct {
			r     result
			other *proc
		}{{r1, p2}, {r2, p1}} {
			if c.r.code != 0 && c.r.code != 3 {
				t.Fatalf("round %d: got exit %d, want 0 or 3\n%v", round, c.r.code, c.r)
			}
			if c.r.code == 3 {
				// The only other run of the job is the other one of the pair.
				assertMentions(t, c.r, strconv.Itoa(c.other.cmd.Process.Pid))
			}
		}
		if r1.code == 3 && r2.code == 3 {
			t.Fatalf("round %d: both runs exited 3; one of them must get the lease\n%v\n%v", round, r1, r2)
		}
		f.assertSink(all)
	}
	f.assertNoDuplicates()
}
