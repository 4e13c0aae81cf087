package sqldb

import (
	"net/url"
	"path/filepath"
	"strings"
)

// Dataset names the table of connection by the OpenLineage naming
// conventions (https://openlineage.io/docs/spec/naming): PostgreSQL
// namespace postgres://HOST:PORT and name DB.SCHEMA.TABLE; MySQL
// mysql://HOST:PORT and DB.TABLE; SQLite sqlite://PATH (a relative path
// against dir) and the table. uri is the dataSource facet's. ok is false
// when there is no table (a source reading a query) or the connection is
// not a URL.
func Dataset(dir, connection, table string) (namespace, name, uri string, ok bool) {
	if table == "" {
		return "", "", "", false
	}
	if rest, found := strings.CutPrefix(connection, "sqlite:"); found {
		p := strings.TrimPrefix(rest, "//")
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		u := url.URL{Scheme: "sqlite", Path: filepath.ToSlash(filepath.Clean(p))}
		ns := u.String()
		return ns, table, ns, true
	}
	u, err := url.Parse(connection)
	if err != nil {
		return "", "", "", false
	}
	scheme, port := u.Scheme, u.Port()
	switch scheme {
	case "postgresql", "postgres":
		scheme = "postgres"
		if port == "" {
			port = "5432"
		}
	case "mysql", "mariadb":
		scheme = "mysql"
		if port == "" {
			port = "3306"
		}
	}
	ns := scheme + "://" + u.Hostname() + ":" + port
	db := strings.TrimPrefix(u.Path, "/")
	name = db + "." + table
	if scheme == "postgres" && !strings.Contains(table, ".") {
		name = db + ".public." + table
	}
	if scheme == "mysql" && strings.Contains(table, ".") {
		name = table // db.table already: in MySQL a schema is a database
	}
	return ns, name, ns + "/" + db, true
}
