package e2e

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// TestSQLPasswordNeverShown: a password full of URL and SQL metacharacters
// works through password_env, and neither it nor a wrong one shows in the
// output of any command, successful or failing (every command of every SQL
// test is checked the same way by sqlFixture.check).
func TestSQLPasswordNeverShown(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		pw := `p@ss:w/rd?x=1&y#2%41'"\ -` + sqlRandomHex(6)
		f.password = pw
		f.secrets = append(f.secrets, pw)
		f.conn = f.createUser(pw)
		f.env = append(f.env, sqlPasswordEnv+"="+pw) // the later value wins
		f.createOrders()
		f.insertOrders(idRange(1, 20)...)
		j := sqlJob{table: "orders_out"}
		f.writeJob(j)

		s := f.mustRun()
		assertIDSet(t, "run with a password full of metacharacters", f.fileIDsOfRun(s.RunID), idRange(1, 20))
		assertIDSet(t, "table", f.tableIDs("orders_out"), idRange(1, 20))
		f.insertOrders(idRange(21, 25)...)
		for _, args := range [][]string{
			{"plan", f.jobPath},
			{"plan", f.jobPath, "--json"},
			{"run", f.jobPath, "--log-format", "json"},
			{"runs", f.jobPath},
			{"runs", f.jobPath, "--json"},
			{"bookmark", "show", f.jobPath},
			{"bookmark", "show", f.jobPath, "--json"},
		} {
			if r := f.tidemark(nil, args...); r.code != 0 {
				t.Errorf("got exit %d, want 0\n%v", r.code, r)
			}
		}
		assertIDSet(t, "files", f.fileIDs(), idRange(1, 25))

		// A wrong password: the run fails (the bookmark is kept) and shows
		// neither the wrong nor the right one.
		wrong := "Wr0ng-pw-" + sqlRandomHex(6)
		f.secrets = append(f.secrets, wrong)
		before := f.bookmark()
		f.insertOrders(idRange(26, 30)...)
		for _, args := range [][]string{
			{"run", f.jobPath, "--json"},
			{"run", f.jobPath, "--log-format", "json"},
			{"plan", f.jobPath, "--json"},
		} {
			r := f.tidemark([]string{sqlPasswordEnv + "=" + wrong}, args...)
			if r.code != 1 {
				t.Errorf("with a wrong password: got exit %d, want 1\n%v", r.code, r)
			}
		}
		if after := f.bookmark(); after != before {
			t.Errorf("bookmark changed by runs with a wrong password:\nbefore %s\nafter  %s", before, after)
		}

		// The variable unset: the error names it.
		var env []string
		for _, kv := range f.env {
			if !strings.HasPrefix(kv, sqlPasswordEnv+"=") {
				env = append(env, kv)
			}
		}
		r := tidemark(t, f.cwd, env, "run", f.jobPath, "--json")
		f.check(r)
		if r.code == 0 || !strings.Contains(r.output(), sqlPasswordEnv) {
			t.Errorf("with %s unset: got exit %d, want a failure naming the variable\n%v", sqlPasswordEnv, r.code, r)
		}

		// A missing table: named, no password.
		f.writeJob(sqlJob{src: sqlSrc{table: "no_such_table"}, table: "orders_out"})
		r = f.tidemark(nil, "run", f.jobPath, "--json")
		if r.code == 0 || !strings.Contains(r.output(), "no_such_table") {
			t.Errorf("a missing source table: got exit %d, want a failure naming it\n%v", r.code, r)
		}

		// A password inline in the connection string is refused (a job-file
		// error) without being echoed.
		u, err := url.Parse(f.conn)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(u.User.Username(), pw)
		f.conn = u.String()
		f.secrets = append(f.secrets, strings.TrimPrefix(u.User.String(), u.User.Username()+":")) // the escaped form
		f.writeJob(sqlJob{table: "orders_out"})
		for _, args := range [][]string{{"run", f.jobPath, "--json"}, {"run", f.jobPath}, {"plan", f.jobPath}} {
			r := f.tidemark(nil, args...)
			if r.code != 2 || !strings.Contains(r.output(), "password_env") {
				t.Errorf("a password inline in connection: got exit %d, want 2 and a message pointing to password_env\n%v", r.code, r)
			}
		}
	})
}

// TestSQLInlineSecretForms: the job's real password written into its
// connection string in any form the drivers understand — a query-string
// parameter (pgx and go-sql-driver take password=, pgx sslpassword=), a
// libpq key=value string, a MySQL DSN — is refused at validation (exit 2)
// for sources and sinks alike, naming each key and line, masked; no output
// (the JSON log included) and no byte of the state file shows it. On
// PostgreSQL the query-string form used to connect, and the table sink's
// connection was kept in the state file's output manifests.
func TestSQLInlineSecretForms(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 10)...)
		f.writeJob(sqlJob{table: "orders_out"})
		f.mustRun()
		valid := f.conn
		u, err := url.Parse(valid)
		if err != nil {
			t.Fatal(err)
		}
		withQuery := func(k string) string {
			c := *u
			q := c.Query()
			q.Set(k, f.password)
			c.RawQuery = q.Encode()
			return c.String()
		}
		forms := map[string]string{"password parameter": withQuery("password")}
		switch f.kind {
		case sqldb.Postgres:
			forms["sslpassword parameter"] = withQuery("sslpassword")
			forms["key=value"] = fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s",
				u.Hostname(), u.Port(), u.User.Username(), f.password, strings.TrimPrefix(u.Path, "/"))
		case sqldb.MySQL:
			forms["pass parameter"] = withQuery("pass")
			forms["DSN"] = fmt.Sprintf("%s:%s@tcp(%s)%s", u.User.Username(), f.password, u.Host, u.Path)
		}
		for name, conn := range forms {
			f.conn = conn
			f.writeJob(sqlJob{table: "orders_out"})
			srcLine := lineOf(t, f.jobPath, "connection:")
			for _, args := range [][]string{
				{"run", f.jobPath, "--json"},
				{"run", f.jobPath, "--log-format", "json"},
				{"plan", f.jobPath, "--json"},
				{"bookmark", "show", f.jobPath},
			} {
				r := f.tidemark(nil, args...) // checks the output for the password
				if r.code != 2 {
					t.Errorf("%s: got exit %d, want 2\n%v", name, r.code, r)
					continue
				}
				assertMentions(t, r, ":"+srcLine+": sources[0].connection:", "sinks[1].connection:", "xxxxx", "password_env")
			}
		}
		// Connection strings the drivers refuse, with the password in
		// password_env: their errors, which quote the connection string,
		// show no password.
		bad := map[sqldb.Kind]string{sqldb.Postgres: "sslmode=bogus", sqldb.MySQL: "readTimeout=bogus"}[f.kind]
		f.conn = valid + "?" + bad
		f.writeJob(sqlJob{table: "orders_out"})
		for _, args := range [][]string{{"run", f.jobPath, "--json"}, {"run", f.jobPath, "--log-format", "json"}, {"plan", f.jobPath}} {
			if r := f.tidemark(nil, args...); r.code != 1 || !strings.Contains(r.output(), "bogus") {
				t.Errorf("a connection string the driver refuses: got exit %d, want 1 and the driver's error\n%v", r.code, r)
			}
		}
		f.conn = valid
		f.writeJob(sqlJob{table: "orders_out"})
		for _, args := range [][]string{{"runs", f.jobPath, "--json"}, {"bookmark", "show", f.jobPath, "--json"}} {
			if r := f.tidemark(nil, args...); r.code != 0 {
				t.Errorf("got exit %d, want 0\n%v", r.code, r)
			}
		}
		for _, s := range f.secrets {
			assertNoSecretInState(t, filepath.Join(f.dir, ".tidemark"), s)
		}
	})
}
