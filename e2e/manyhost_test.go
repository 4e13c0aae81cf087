package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/tidemark-etl/tidemark" // links the state store backends
	"github.com/tidemark-etl/tidemark/internal/faultproxy"
	"github.com/tidemark-etl/tidemark/store"
)

// Many hosts: the settings of TestManyHosts.
const (
	manyHosts    = 4               // tidemark processes, each its own host id
	manyLanding  = 6 * time.Second // how long files keep landing
	manyTTL      = 2 * time.Second // every run's lease TTL
	manyStall    = 3 * time.Second // a stalled process stops this long: past its TTL
	manySkewHost = 3               // this host's clock is an hour ahead
)

// TestManyHosts: four tidemark processes with distinct host ids share one
// state store and one S3 source and sink, each looping `tidemark run`
// while files keep landing, until the landing stopped and a run of its own
// read nothing. A controller SIGKILLs random lease holders and stops
// (SIGSTOP) others past their lease TTL; one host's clock is an hour ahead.
// At the end every landed record is in the sink exactly once (read back
// with DuckDB), the succeeded runs' input manifests partition the landed
// files, the committed versions are 1..head with one run each, every
// published file belongs to a succeeded run, and nothing is left staged.
func TestManyHosts(t *testing.T) {
	t.Parallel()
	eachStateStore(t, func(t *testing.T, ss stateStore) {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { testManyHosts(t, ss, seed) })
		}
	})
}

// manyHost is one host of the many-host test: its id, its environment and
// the run it has going.
type manyHost struct {
	id    string
	env   []string
	flags []string          // extra run flags: --state through the host's proxy
	proxy *faultproxy.Proxy // in front of the state store, when it has a server

	mu      sync.Mutex
	cur     *proc
	results []result
}

func (h *manyHost) running() *proc {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

func testManyHosts(t *testing.T, ss stateStore, seed uint64) {
	f, url := stateOn(t, onS3, ss, jobOpts{partitionBy: "-"})
	var target string
	var via func(addr string) (string, []string)
	if ss.through != nil {
		target, via = ss.through(url, f.env)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))

	// The landing: a file every 100-300 ms.
	var landed []record
	var landedFiles []string
	var landing atomic.Bool
	landing.Store(true)
	landDone := make(chan struct{})
	go func() {
		defer close(landDone)
		defer landing.Store(false)
		lrng := rand.New(rand.NewPCG(seed, 7))
		end := time.Now().Add(manyLanding)
		for i := 0; time.Now().Before(end); i++ {
			name := fmt.Sprintf("land/%03d.csv", i)
			landed = append(landed, f.addCSV(name, 1+lrng.IntN(5))...)
			landedFiles = append(landedFiles, name)
			time.Sleep(time.Duration(100+lrng.IntN(200)) * time.Millisecond)
		}
	}()

	hosts := make([]*manyHost, manyHosts)
	var wg sync.WaitGroup
	for i := range hosts {
		h := &manyHost{id: fmt.Sprintf("host-%d", i)}
		h.env = []string{"TIDEMARK_HOST_ID=" + h.id}
		if i == manySkewHost {
			h.env = append(h.env, "TIDEMARK_TEST_CLOCK_SKEW=1h")
		}
		if via != nil {
			p, err := faultproxy.Start(target)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			loc, env := via(p.Addr)
			h.proxy, h.flags = p, []string{"--state", loc}
			h.env = append(h.env, env...)
		}
		hosts[i] = h
		wg.Add(1)
		go func() {
			defer wg.Done()
			loopRuns(t, f, h, &landing)
		}()
	}

	// The controller: while files land, every 300-900 ms it kills a lease
	// holder or stops one past its TTL (SIGSTOP, or through its proxy to
	// the store: all its traffic held, or its connections cut).
	var kills, stalls int
	for landing.Load() {
		time.Sleep(time.Duration(300+rng.IntN(600)) * time.Millisecond)
		var busy []*manyHost
		for _, h := range hosts {
			if p := h.running(); p != nil && !p.exited() {
				busy = append(busy, h)
			}
		}
		if len(busy) == 0 {
			continue
		}
		h := busy[rng.IntN(len(busy))]
		p := h.running()
		if p == nil {
			continue
		}
		actions := 3
		if h.proxy != nil {
			actions = 5
		}
		switch rng.IntN(actions) {
		case 0:
			if p.cmd.Process.Signal(syscall.SIGKILL) == nil {
				kills++
			}
		case 1:
			if p.cmd.Process.Signal(syscall.SIGSTOP) == nil {
				stalls++
				time.Sleep(manyStall)
				_ = p.cmd.Process.Signal(syscall.SIGCONT)
			}
		case 3:
			stalls++
			h.proxy.Hold()
			time.Sleep(manyStall)
			h.proxy.Release()
		case 4:
			stalls++
			h.proxy.Cut()
		}
	}
	<-landDone
	wg.Wait()
	t.Logf("seed %d: %d files landed (%d records), %d kills, %d stalls", seed, len(landedFiles), len(landed), kills, stalls)
	if kills+stalls == 0 {
		t.Errorf("the controller neither killed nor stalled a run: the test tested nothing")
	}

	var runs, lost int
	for _, h := range hosts {
		for _, r := range h.results {
			f.check(r)
			runs++
			if r.code == 1 && strings.Contains(r.stdout, "lease lost") {
				lost++
			}
		}
	}
	t.Logf("seed %d: %d runs, %d of them fenced out after losing their lease", seed, runs, lost)

	assertFiles(t, "the run after every host stopped", f.mustRun(), 0)
	f.assertSink(landed)
	f.assertNoDuplicates()
	if left := f.stagedFiles(); len(left) > 0 {
		t.Errorf("staged files left: %v", firstFew(left))
	}
	f.assertNoUploads("after the many-host runs")
	checkManyHostState(t, f, url, landedFiles, hosts)
}

// loopRuns runs the job on host h until the landing stopped and one of its
// runs read nothing.
func loopRuns(t *testing.T, f *fixture, h *manyHost, landing *atomic.Bool) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		stopped := !landing.Load()
		args := append([]string{"run", f.jobPath, "--json", "--lease-ttl", manyTTL.String()}, h.flags...)
		p := startTidemark(t, f.cwd, f.environ(h.env), args...)
		h.mu.Lock()
		h.cur = p
		h.mu.Unlock()
		<-p.done
		r := finish(t, p.ctx, p.args, p.start, p.err, p.stdout, p.stderr)
		p.cancel()
		h.mu.Lock()
		h.cur = nil
		h.results = append(h.results, r)
		h.mu.Unlock()
		switch {
		case r.code == 0 && stopped && strings.Contains(r.stdout, `"files":0`):
			return
		case r.code == 2:
			t.Errorf("host %s: a run exited 2\n%v", h.id, r)
			return
		case r.code == 3:
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Errorf("host %s: still running after two minutes", h.id)
}

// checkManyHostState reads the state store after the many-host test: the
// succeeded runs' input manifests partition the landed files, the
// committed versions are 1..head with one run each, every published file
// belongs to a succeeded run, and the hosts' ids are on their runs.
func checkManyHostState(t *testing.T, f *fixture, url string, landedFiles []string, hosts []*manyHost) {
	t.Helper()
	ctx := context.Background()
	st, err := openState(ctx, url, f.env)
	if err != nil {
		t.Fatalf("opening the state store: %v", err)
	}
	defer st.Close()
	runs, err := store.AllRuns(ctx, st, "sales")
	if err != nil {
		t.Fatal(err)
	}
	succeeded := map[string]store.Run{}
	byVersion := map[int64]string{}
	read := map[string]string{} // landed file -> the run that read it
	hostRuns := map[string]int{}
	for _, r := range runs {
		hostRuns[r.Host]++
		if r.Status == store.StatusRunning {
			t.Errorf("run %s of %s is still recorded running after every host stopped", r.RunID, r.Host)
		}
		if r.Status != store.StatusSucceeded {
			continue
		}
		succeeded[r.RunID] = r
		if r.Sources["orders_source"].Files == 0 {
			continue
		}
		if other, ok := byVersion[r.Version]; ok {
			t.Errorf("runs %s and %s both committed version %d", other, r.RunID, r.Version)
		}
		byVersion[r.Version] = r.RunID
		for fr, err := range st.RunInputs(ctx, "sales", []string{r.RunID}) {
			if err != nil {
				t.Fatal(err)
			}
			if other, ok := read[fr.File.Path]; ok {
				t.Errorf("file %s is in the input manifests of runs %s and %s", fr.File.Path, other, r.RunID)
			}
			read[fr.File.Path] = r.RunID
		}
		if r.Host == fmt.Sprintf("host-%d", manySkewHost) && time.Until(r.StartedAt) < 30*time.Minute {
			t.Errorf("run %s of the host whose clock is an hour ahead started at %v, want about an hour from now", r.RunID, r.StartedAt)
		}
	}
	for _, name := range landedFiles {
		if _, ok := read[name]; !ok {
			t.Errorf("landed file %s is in no succeeded run's input manifest", name)
		}
	}
	if len(read) != len(landedFiles) {
		t.Errorf("the input manifests hold %d files, %d landed", len(read), len(landedFiles))
	}
	head, err := st.Head(ctx, "sales")
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= head.Version; v++ {
		if _, ok := byVersion[v]; !ok {
			t.Errorf("no run committed version %d of the %d", v, head.Version)
		}
	}
	for _, file := range f.sinkFiles() {
		if id := runOfFile(t, file); succeeded[id].RunID == "" {
			t.Errorf("published file %s belongs to run %s, which did not succeed: a fenced-out run published", filepath.Base(file), id)
		}
	}
	for _, h := range hosts {
		if hostRuns[h.id] == 0 {
			t.Errorf("no run is recorded with host id %s", h.id)
		}
	}
}
