package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// slowRows makes every row cost some CPU, so that the engine phase of a
// small input lasts long enough to be seen in progress.
const slowRows = `SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount FROM orders_source ` +
	`WHERE (SELECT sum(hash(order_id + i)) FROM range(40) r(i)) IS NOT NULL`

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestProgressOnTerminal: a local run of 2000 files shows the engine's
// progress (percent and rows) on a terminal, run under script(1) for a
// pseudo-terminal; with stderr not a terminal it shows no bar.
func TestProgressOnTerminal(t *testing.T) {
	t.Parallel()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to run tidemark on a pseudo-terminal")
	}
	f := newFixture(t, jobOpts{transform: slowRows, partitionBy: "-"})
	recs := f.addCSVs("a", 2000, 400)

	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	line := fmt.Sprintf("%s run %s", shellQuote(tidemarkBin), shellQuote(f.jobPath))
	cmd := exec.CommandContext(ctx, script, "-qec", line, "/dev/null")
	cmd.Dir = f.cwd
	cmd.Env = baseEnv(f.environ(nil)...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tidemark run on a terminal: %v after %v\n%s", err, time.Since(start), out)
	}
	tty := string(out)
	bar := regexp.MustCompile(`processing 2000 files \([^)]*\), [0-9,]+ rows +[0-9]+%`)
	if !bar.MatchString(tty) {
		t.Errorf("a run of 2000 local files on a terminal shows no progress of the engine (percent and rows)\n%q", tty)
	}
	f.assertSink(recs)

	f.reset("--purge-output")
	r := f.tidemark(nil, "run", f.jobPath)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%v", r.code, r)
	}
	if strings.Contains(r.stderr, "processing 2000 files") || strings.Contains(r.stderr, "%") {
		t.Errorf("with stderr not a terminal the run shows a progress bar\n%v", r)
	}
	f.assertSink(recs)
}
