package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInlineSecretsRefused: a password, token or secret key written into
// the job file — a key=value or URL connection string, an S3 URL, an s3:
// setting, the state URL, the Spark remote — or into --state or
// TIDEMARK_STATE, is refused before anything runs (exit 2) by every
// command, with a message that names the key and its line and shows the
// value masked; the secret appears in no output (stdout, stderr, the JSON
// log) and not in the state file (its raw bytes, WAL included), and the
// bookmark does not move.
func TestInlineSecretsRefused(t *testing.T) {
	t.Parallel()
	// Where a case puts its value into the fixture's job file.
	addSource := func(yaml, lines string) string {
		return strings.Replace(yaml, "sources:\n", "sources:\n  - ctx: extra_db\n"+lines, 1)
	}
	addSink := func(yaml, lines string) string { return yaml + "  - ctx: extra_out\n" + lines }
	addTop := func(yaml, line string) string {
		return strings.Replace(yaml, "job: sales\n", "job: sales\n"+line+"\n", 1)
	}
	sourceConn := func(conn string) func(string) string {
		return func(y string) string {
			return addSource(y, fmt.Sprintf("    connection: %q\n    table: orders\n", conn))
		}
	}
	for _, tc := range []struct {
		name string
		// job edits the job file (S is the secret); nil leaves it valid.
		job func(yaml, s string) string
		// key is the job-file key the message names, lineHas the text of
		// its line; both empty for --state and TIDEMARK_STATE.
		key, lineHas string
		flagState    string // --state, with S
		envState     string // TIDEMARK_STATE, with S
	}{
		{name: "libpq connection string", key: "sources[0].connection", lineHas: "host=127.0.0.1",
			job: func(y, s string) string {
				return sourceConn("host=127.0.0.1 port=5432 user=etl password=" + s + " dbname=shop")(y)
			}},
		{name: "password in a postgres query string", key: "sources[0].connection", lineHas: "connection:",
			job: func(y, s string) string {
				return sourceConn("postgres://etl@127.0.0.1:5432/shop?sslmode=disable&password=" + s)(y)
			}},
		{name: "sslpassword in a sink's query string", key: "sinks[1].connection", lineHas: "?sslpassword=",
			job: func(y, s string) string {
				return addSink(y, fmt.Sprintf("    connection: %q\n    table: out\n", "postgres://etl@127.0.0.1/shop?sslpassword="+s))
			}},
		{name: "pass in a mysql query string", key: "sources[0].connection", lineHas: "connection:",
			job: func(y, s string) string { return sourceConn("mysql://etl@127.0.0.1:3306/shop?pass=" + s)(y) }},
		{name: "mysql DSN", key: "sources[0].connection", lineHas: "connection:",
			job: func(y, s string) string { return sourceConn("etl:" + s + "@tcp(127.0.0.1:3306)/shop")(y) }},
		{name: "password in a sink's connection URL", key: "sinks[1].connection", lineHas: "connection:",
			job: func(y, s string) string {
				return addSink(y, fmt.Sprintf("    connection: %q\n    table: out\n", "postgres://etl:"+s+"@127.0.0.1/shop"))
			}},
		{name: "credentials in an S3 source URL", key: "sources[0].path", lineHas: "AKIAIOSFODNN7EXAMPLE",
			job: func(y, s string) string {
				return addSource(y, fmt.Sprintf("    path: %q\n", "s3://AKIAIOSFODNN7EXAMPLE:"+s+"/K7MDENG+bP@bucket/in/"))
			}},
		{name: "credentials in an S3 sink URL", key: "sinks[1].path", lineHas: "AKIAIOSFODNN7EXAMPLE",
			job: func(y, s string) string {
				return addSink(y, fmt.Sprintf("    path: %q\n", "s3://AKIAIOSFODNN7EXAMPLE:"+s+"@bucket/out/"))
			}},
		{name: "credentials in an S3 sink URL, colon escaped", key: "sinks[1].path", lineHas: "AKIAIOSFODNN7EXAMPLE",
			job: func(y, s string) string {
				return addSink(y, fmt.Sprintf("    path: %q\n", "s3://AKIAIOSFODNN7EXAMPLE%3A"+s+"@bucket/out/"))
			}},
		{name: "a token as the user of an S3 URL", key: "sources[0].path", lineHas: "@bucket",
			job: func(y, s string) string { return addSource(y, fmt.Sprintf("    path: %q\n", "s3://"+s+"@bucket/in/")) }},
		{name: "a password in an S3 URL's fragment", key: "sinks[1].path", lineHas: "#password",
			job: func(y, s string) string {
				return addSink(y, fmt.Sprintf("    path: %q\n", "s3://bucket/out/#password="+s))
			}},
		{name: "credentials in an s3 endpoint", key: "sources[0].s3.endpoint", lineHas: "s3: {endpoint",
			job: func(y, s string) string {
				return strings.Replace(y, "    format: csv\n", fmt.Sprintf("    format: csv\n    s3: {endpoint: %q}\n", "https://AKIA:"+s+"@s3.example.com/"), 1)
			}},
		{name: "password in the state URL", key: "state", lineHas: "state:",
			job: func(y, s string) string {
				return addTop(y, fmt.Sprintf("state: %q", "postgres://tidemark:"+s+"@127.0.0.1/state"))
			}},
		{name: "password in the state URL's query", key: "state", lineHas: "state:",
			job: func(y, s string) string {
				return addTop(y, fmt.Sprintf("state: %q", "postgres://tidemark@127.0.0.1/state?password="+s))
			}},
		{name: "credentials in an S3 state URL", key: "state", lineHas: "state:",
			job: func(y, s string) string { return addTop(y, fmt.Sprintf("state: %q", "s3://AKIA:"+s+"@bucket/state/")) }},
		{name: "token in the Spark remote", key: "engine.spark.remote", lineHas: "engine:",
			job: func(y, s string) string {
				return addTop(y, fmt.Sprintf("engine: {spark: {remote: %q}}", "sc://spark:15002/;token="+s))
			}},
		{name: "--state with a password", flagState: "postgres://tidemark:S@127.0.0.1/state"},
		{name: "TIDEMARK_STATE with a password", envState: "s3://AKIA:S/x@bucket/state/"},
		// Not URLs: without the check they were taken as SQLite paths, and
		// the password became the state file's name.
		{name: "key-value state in the job file", key: "state", lineHas: "state:",
			job: func(y, s string) string {
				return addTop(y, fmt.Sprintf("state: %q", "host=127.0.0.1 port=5432 password="+s))
			}},
		{name: "--state key-value", flagState: "host=127.0.0.1 port=5432 password=S dbname=state"},
		{name: "TIDEMARK_STATE key-value", envState: "host=127.0.0.1 port=5432 password=S"},
		{name: "--state mysql DSN", flagState: "etl:S@tcp(127.0.0.1:3306)/state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{})
			f.addCSVs("a", 2, 10)
			f.mustRun()
			before := f.bookmark()

			s := "hunter2-" + sqlRandomHex(6)
			f.secrets = append(f.secrets, s)
			var flags, env []string
			valid, err := os.ReadFile(f.jobPath)
			if err != nil {
				t.Fatal(err)
			}
			if tc.job != nil {
				writeFile(t, f.jobPath, []byte(tc.job(string(valid), s)))
			}
			if tc.flagState != "" {
				flags = []string{"--state", strings.ReplaceAll(tc.flagState, "S", s)}
			}
			if tc.envState != "" {
				env = []string{"TIDEMARK_STATE=" + strings.ReplaceAll(tc.envState, "S", s)}
			}
			line := ""
			if tc.key != "" {
				line = lineOf(t, f.jobPath, tc.lineHas)
			}
			for _, args := range [][]string{
				{"run", f.jobPath, "--json"},
				{"run", f.jobPath, "--log-format", "json"},
				{"plan", f.jobPath},
				{"plan", f.jobPath, "--json"},
				{"runs", f.jobPath, "--json"},
				{"bookmark", "show", f.jobPath},
			} {
				r := f.tidemark(env, append(args, flags...)...) // checks every output for s
				if r.code != 2 {
					t.Errorf("got exit %d, want 2\n%v", r.code, r)
					continue
				}
				if !strings.Contains(r.output(), "xxxxx") {
					t.Errorf("the message does not show the value masked\n%v", r)
				}
				if tc.key != "" {
					assertMentions(t, r, tc.key+":")
					if !regexp.MustCompile(`:` + line + `: ` + regexp.QuoteMeta(tc.key) + `:`).MatchString(r.output()) {
						t.Errorf("the message does not name line %s of the job file for %s\n%v", line, tc.key, r)
					}
				}
			}
			writeFile(t, f.jobPath, valid)
			if after := f.bookmark(); string(after.Version) != string(before.Version) {
				t.Errorf("bookmark moved: version %s -> %s", before.Version, after.Version)
			}
			assertNoSecretInState(t, filepath.Join(f.dir, ".tidemark"), s)
			assertNoSecretInNames(t, s, f.dir) // the working folder is in it
		})
	}
}

// assertNoSecretInNames fails if a file or folder under dirs has secret in
// its name (a state location taken as a path).
func assertNoSecretInNames(t testing.TB, secret string, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.Contains(d.Name(), secret) {
				t.Errorf("%s was created: its name holds the secret", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// assertNoSecretInState fails if any file of the SQLite state folder
// (state.db, its -wal and -shm) holds secret in its raw bytes.
func assertNoSecretInState(t testing.TB, dir, secret string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading the state folder: %v", err)
	}
	if len(entries) == 0 {
		t.Fatalf("the state folder %s is empty", dir)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the state file %s holds the secret %q", e.Name(), secret)
		}
	}
}
