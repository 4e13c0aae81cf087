package job

import (
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/objstore"
)

// The job file never holds a secret: a password, token or secret key
// written into a connection string, a URL or an S3 setting is refused here,
// before anything connects, so that no message, log line or state record
// can carry it. The message shows the value with the secret masked.

// connection checks a SQL source's or sink's connection string against
// the forms its kind takes (schemes).
func (v *validator) connection(p, conn string, schemes []string) {
	if v.noSecret(p+".connection", conn, "name the environment variable that holds the password in password_env") {
		return
	}
	if !slices.ContainsFunc(schemes, func(s string) bool { return strings.HasPrefix(conn, s) }) {
		// Not quoted: a string of another form may hold anything.
		v.fail(p+".connection", "is not a connection URL: want %s", strings.Join(schemes, ", "))
	}
}

// noSecretInPath refuses credentials in a source's or sink's URL. Local
// paths are not checked: "a:b@c" is a valid folder name.
func (v *validator) noSecretInPath(p, path string) {
	if isLocal(path) {
		v.noTilde(p, path)
		return
	}
	v.noSecret(p, path, awsChain)
}

const awsChain = "S3 credentials come from the AWS chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an instance or pod role)"

// stateHint says where a state store's credentials come from instead.
func stateHint(state string) string {
	switch objstore.Scheme(state) {
	case "postgres", "postgresql":
		return "the state store's password comes from PGPASSWORD or ~/.pgpass"
	case "s3":
		return awsChain
	case "file":
		return "a state location is a SQLite file's path, a postgres:// URL (the password from PGPASSWORD or ~/.pgpass) " +
			"or an s3:// URL; a key=value connection string is none of them"
	}
	return "credentials come from the environment, never from the state URL"
}

// StateHint says, for a state location with a secret inline, where its
// credentials come from instead.
func StateHint(state string) string { return stateHint(state) }

// noSecret fails the key at p when value holds a secret inline, and
// reports whether it did.
func (v *validator) noSecret(p, value, instead string) bool {
	found, masked := secret.Find(value)
	if len(found) == 0 {
		return false
	}
	v.fail(p, "holds a secret inline (%s): %q; %s", secret.Describe(found), masked, instead)
	return true
}

// isLocal reports whether a source or sink path is on a local disk.
func isLocal(path string) bool { return objstore.IsLocal(path) }

// noTilde refuses a local path that starts with ~ (~/x, ~user/x): no shell
// expands it, so it would name a folder called "~" beside the job file, not
// the home folder (a sink would be written there without a word).
func (v *validator) noTilde(p, path string) {
	path = strings.TrimPrefix(path, "file://")
	if strings.HasPrefix(path, "~") {
		v.fail(p, "%q: ~ is not expanded (no shell reads the job file): write the full path, or ./%s for a folder of that name", path, path)
	}
}
