package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The S3 and SQL scenarios need servers: versitygw (started by each S3
// scenario), and a throwaway PostgreSQL and MariaDB on loopback, started
// the way scripts/test.sh starts them for the tests (the same flags: data in
// a scratch folder, fsync off) when a scenario first asks for one, and
// stopped when the harness ends. The harness starts them as its own
// children, so it can stop them, count their CPU time, and take them down
// with it if it is killed. It does not install anything: a server whose
// packages are missing is reported, with the command that installs them.

// sqlPassword is the bench servers' password; tidemark gets it through
// password_env, the clients through PGPASSWORD and MYSQL_PWD.
const (
	sqlPassword    = "tidemark-bench-pw"
	sqlPasswordEnv = "TMBENCH_SQL_PASSWORD"
)

// server is a running database server started by the harness.
type server struct {
	name    string // "PostgreSQL 15.20", for the report
	version string // the server's own account of its version
	host    string // 127.0.0.1
	port    int
	dir     string // scratch folder: data, socket, log
	cmd     *exec.Cmd
	done    chan struct{}
	// stopSig asks the server to shut down quickly.
	stopSig syscall.Signal
	// clientBin is psql or mariadb, for setup and the baselines.
	clientBin string
	postgres  bool
}

// servers starts each database once and stops them all at the end.
type servers struct {
	mu      sync.Mutex
	pg      *server
	pgErr   error
	maria   *server
	mariaEr error
}

// postgres returns the PostgreSQL server, starting it on the first call.
func (s *servers) postgres(ctx context.Context) (*server, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pg == nil && s.pgErr == nil {
		s.pg, s.pgErr = startPostgres(ctx)
		if s.pgErr != nil {
			logf("PostgreSQL: %v", s.pgErr)
		}
	}
	return s.pg, s.pgErr
}

// mariadb returns the MariaDB server, starting it on the first call.
func (s *servers) mariadb(ctx context.Context) (*server, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maria == nil && s.mariaEr == nil {
		s.maria, s.mariaEr = startMariaDB(ctx)
		if s.mariaEr != nil {
			logf("MariaDB: %v", s.mariaEr)
		}
	}
	return s.maria, s.mariaEr
}

// stop stops every server started and removes its folder.
func (s *servers) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, srv := range []*server{s.pg, s.maria} {
		if srv != nil {
			srv.stop()
		}
	}
	s.pg, s.maria = nil, nil
}

// pgBinDir is the newest /usr/lib/postgresql/N/bin (Debian's layout, as
// scripts/test.sh looks it up), else the folder of postgres on PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			found = append(found, d)
		}
	}
	if len(found) > 0 {
		slices.SortFunc(found, func(a, b string) int {
			va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
			vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
			return va - vb
		})
		return found[len(found)-1], nil
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres, no postgres on PATH); " +
		"scripts/test.sh installs it: apt-get install postgresql postgresql-client")
}

// startPostgres runs initdb and postgres as scripts/test.sh's
// start_postgres does (as the postgres user when the harness runs as
// root), plus autovacuum off: the scenarios vacuum and analyze their tables
// themselves, and a background vacuum must not run during a measurement
// or add to the statistics they read.
func startPostgres(ctx context.Context) (*server, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	for _, tool := range []string{"initdb", "psql", "pg_isready"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			return nil, fmt.Errorf("PostgreSQL's %s is missing from %s (apt-get install postgresql postgresql-client)", tool, bin)
		}
	}
	dir, err := os.MkdirTemp("", "tidemark-bench-pg.")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(err)
	}
	var cred *syscall.Credential
	if os.Getuid() == 0 { // postgres refuses to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			return fail(fmt.Errorf("running as root, PostgreSQL needs the postgres user: %w", err))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return fail(err)
		}
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(sqlPassword+"\n"), 0o600); err != nil {
		return fail(err)
	}
	if cred != nil {
		os.Chown(pw, int(cred.Uid), int(cred.Gid))
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres",
		"--pwfile="+pw, "-E", "UTF8", "--locale=C.UTF-8", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w: %s", err, lastLines(string(out), 6)))
	}
	version := strings.TrimPrefix(commandLine(ctx, dir, filepath.Join(bin, "postgres"), "--version"), "postgres (PostgreSQL) ")
	var lastErr error
	for range 3 { // a free port can be taken between probing and binding
		port, err := freeLoopbackPort()
		if err != nil {
			return fail(err)
		}
		srv := &server{name: "PostgreSQL " + firstField(version), version: version, host: "127.0.0.1", port: port, dir: dir, stopSig: syscall.SIGINT,
			clientBin: filepath.Join(bin, "psql"), postgres: true}
		cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"), "-k", dir,
			"-h", "127.0.0.1", "-p", strconv.Itoa(port),
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300",
			"-c", "shared_buffers=256MB", "-c", "max_wal_size=4GB",
			"-c", "autovacuum=off", "-c", "maintenance_work_mem=512MB")
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		ready := func() bool {
			return exec.CommandContext(ctx, filepath.Join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port)).Run() == nil
		}
		if err := srv.launch(ctx, cmd, filepath.Join(dir, "server.log"), ready); err != nil {
			lastErr = err
			continue
		}
		logf("started %s on 127.0.0.1:%d (data in %s)", srv.name, port, dir)
		return srv, nil
	}
	return fail(lastErr)
}

// mariadbTool finds a MariaDB program by its new name or its MySQL one.
func mariadbTool(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("MariaDB is not installed (no %s on PATH); scripts/test.sh installs it: "+
		"apt-get install mariadb-server mariadb-client", strings.Join(names, " or "))
}

// startMariaDB runs mariadb-install-db and mariadbd as scripts/test.sh's
// start_mariadb does, and creates the user tidemark connects as.
func startMariaDB(ctx context.Context) (*server, error) {
	var bins [4]string
	for i, names := range [][]string{{"mariadbd", "mysqld"}, {"mariadb-install-db", "mysql_install_db"},
		{"mariadb-admin", "mysqladmin"}, {"mariadb", "mysql"}} {
		p, err := mariadbTool(names...)
		if err != nil {
			return nil, err
		}
		bins[i] = p
	}
	mariadbd, installDB, admin, client := bins[0], bins[1], bins[2], bins[3]
	dir, err := os.MkdirTemp("", "tidemark-bench-mariadb.")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	var asUser []string
	if os.Getuid() == 0 {
		asUser = []string{"--user=root"}
	}
	install := exec.CommandContext(ctx, installDB, append([]string{"--no-defaults"}, append(asUser, "--datadir="+filepath.Join(dir, "data"),
		"--auth-root-authentication-method=socket", "--skip-test-db")...)...)
	if out, err := install.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("mariadb-install-db: %w: %s", err, lastLines(string(out), 6)))
	}
	version := commandLine(ctx, dir, mariadbd, "--version")
	if f := strings.Fields(version); len(f) >= 3 {
		version = strings.TrimSuffix(f[2], ",")
	}
	sock := filepath.Join(dir, "sock")
	var lastErr error
	for range 3 {
		port, err := freeLoopbackPort()
		if err != nil {
			return fail(err)
		}
		srv := &server{name: "MariaDB " + strings.SplitN(version, "-", 2)[0], version: version, host: "127.0.0.1", port: port, dir: dir, stopSig: syscall.SIGTERM, clientBin: client}
		args := append([]string{"--no-defaults"}, asUser...)
		args = append(args, "--datadir="+filepath.Join(dir, "data"), "--socket="+sock, "--port="+strconv.Itoa(port),
			"--bind-address=127.0.0.1", "--skip-name-resolve", "--skip-log-bin", "--local-infile=1",
			"--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci",
			"--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0", "--innodb-buffer-pool-size=512M",
			"--innodb-log-file-size=256M", "--max-connections=300", "--log-error="+filepath.Join(dir, "server.log"),
			"--pid-file="+filepath.Join(dir, "pid"))
		cmd := exec.Command(mariadbd, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		ready := func() bool {
			return exec.CommandContext(ctx, admin, "--no-defaults", "-S", sock, "-u", "root", "ping").Run() == nil
		}
		if err := srv.launch(ctx, cmd, filepath.Join(dir, "server.out"), ready); err != nil {
			if b, e := os.ReadFile(filepath.Join(dir, "server.log")); e == nil {
				err = fmt.Errorf("%w: %s", err, lastLines(string(b), 6))
			}
			lastErr = err
			continue
		}
		create := exec.CommandContext(ctx, client, "--no-defaults", "-S", sock, "-u", "root", "-e",
			fmt.Sprintf("CREATE USER 'tidemark'@'%%' IDENTIFIED BY '%s'; GRANT ALL ON *.* TO 'tidemark'@'%%' WITH GRANT OPTION;", sqlPassword))
		if out, err := create.CombinedOutput(); err != nil {
			srv.stop()
			return nil, fmt.Errorf("creating the MariaDB user: %w: %s", err, out)
		}
		logf("started %s on 127.0.0.1:%d (data in %s)", srv.name, port, dir)
		return srv, nil
	}
	return fail(lastErr)
}

// launch starts cmd with its output in logFile and waits until ready
// answers, up to a minute.
func (s *server) launch(ctx context.Context, cmd *exec.Cmd, logFile string, ready func() bool) error {
	out, err := os.Create(logFile)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		out.Close()
		close(s.done)
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if ready() {
			return nil
		}
		select {
		case <-s.done:
			b, _ := os.ReadFile(logFile)
			return fmt.Errorf("%s exited at start: %s", filepath.Base(cmd.Path), lastLines(string(b), 6))
		case <-ctx.Done():
			s.kill()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("%s did not answer on port %d within a minute", filepath.Base(cmd.Path), s.port)
		}
	}
}

func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// stop shuts the server down (killing it if it takes over 20 s) and
// removes its folder.
func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(s.stopSig)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			s.kill()
		}
	}
	os.RemoveAll(s.dir)
	logf("stopped %s", s.name)
}

// cpu is the CPU time the server's processes have used so far: the main
// process, its live children (PostgreSQL's backends) and its reaped ones.
func (s *server) cpu() time.Duration {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return treeCPU(s.cmd.Process.Pid)
}

// treeCPU is the CPU time of a process, of its children that have exited
// (which it has waited for), and of its live children.
func treeCPU(pid int) time.Duration {
	f := procStat(pid)
	if f == nil {
		return 0
	}
	total := statTicks(f, 11, 12, 13, 14) // utime stime cutime cstime
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		cf := procStat(child)
		if len(cf) > 1 && cf[1] == strconv.Itoa(pid) {
			total += statTicks(cf, 11, 12)
		}
	}
	return time.Duration(total) * time.Second / clockTicks
}

// procStat returns the fields of /proc/PID/stat after the command name:
// state, ppid, ... (so utime, field 14 in proc(5), is index 11).
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

func statTicks(f []string, idx ...int) int64 {
	var n int64
	for _, i := range idx {
		if i < len(f) {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			n += v
		}
	}
	return n
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// url is the connection URL tidemark gets for database db (the password
// comes through password_env).
func (s *server) url(db string) string {
	if s.postgres {
		return fmt.Sprintf("postgres://postgres@%s:%d/%s", s.host, s.port, db)
	}
	return fmt.Sprintf("mysql://tidemark@%s:%d/%s", s.host, s.port, db)
}

// clientArgs are the client's arguments to run stmt in db, printing rows
// unaligned, one a line, fields separated by tabs.
func (s *server) clientArgs(db, stmt string) []string {
	if s.postgres {
		return []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", s.host, "-p", strconv.Itoa(s.port), "-U", "postgres",
			"-d", db, "-At", "-F", "\t", "-c", stmt}
	}
	args := []string{"--no-defaults", "-h", s.host, "-P", strconv.Itoa(s.port), "-u", "tidemark", "-N", "-B", "-e", stmt}
	if db != "" {
		args = append(args, db)
	}
	return args
}

// clientEnv gives the client the password.
func (s *server) clientEnv() []string {
	if s.postgres {
		return []string{"PGPASSWORD=" + sqlPassword}
	}
	return []string{"MYSQL_PWD=" + sqlPassword}
}

// query runs statements in db (the server's default database when db is
// "") with the server's client and returns what it printed.
func (s *server) query(ctx context.Context, db, stmt string) (string, error) {
	if s.postgres && db == "" {
		db = "postgres"
	}
	cmd := exec.CommandContext(ctx, s.clientBin, s.clientArgs(db, stmt)...)
	cmd.Env = append(os.Environ(), s.clientEnv()...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w: %s", s.name, truncate(strings.Join(strings.Fields(stmt), " "), 200), err, lastLines(stderr.String(), 4))
	}
	return strings.TrimSpace(string(out)), nil
}
