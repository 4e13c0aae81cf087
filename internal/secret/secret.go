// Package secret finds credentials written inline in the strings a job
// names places with — connection strings, object-store and state URLs — so
// that they can be refused before anything connects, and masks them in
// text that is about to be shown or stored.
//
// The forms it knows: a password in a URL's user info
// (postgres://etl:pw@host/db, s3://AKIA...:secret@bucket/, also when the
// secret holds a '/' or the ':' is written %3A; in an s3:// URL any user
// info, which names no place), a secret-named parameter in a URL's query
// string, fragment or ;-parameters (?password=, ?sslpassword=, ?pass=,
// #password=, sc://host/;token=), a
// secret-named key=value pair of a libpq connection string
// (host=... password=...), and a MySQL DSN's user:password@ prefix.
package secret

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Mask replaces every secret value.
const Mask = "xxxxx"

// Finding is one inline secret of a string.
type Finding struct {
	// Key is the parameter's name as written ("password", "sslpassword",
	// "token"), or "password" for a URL's or DSN's user info.
	Key string
	// UserInfo is set for a password in user:password@.
	UserInfo bool
}

// String says what was found, for messages: "the password parameter" or
// "a password in user:password@".
func (f Finding) String() string {
	if f.UserInfo {
		return "a password in user:password@"
	}
	return "the " + f.Key + " parameter"
}

// Describe lists the findings for a message, each kind once.
func Describe(found []Finding) string {
	var what []string
	for _, f := range found {
		if w := f.String(); !slices.Contains(what, w) {
			what = append(what, w)
		}
	}
	return strings.Join(what, ", ")
}

// IsSecretKey reports whether a parameter of this name holds a secret:
// password, sslpassword, pass, pwd, token, *_secret, *_secret_access_key,
// X-Amz-Signature and the like. Names that merely mention one
// (allowCleartextPasswords, sslkey) are not secrets.
func IsSecretKey(name string) bool {
	k := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	switch k {
	case "pass", "sig", "key", "apikey", "api_key":
		return true
	}
	for _, suffix := range []string{"password", "passwd", "pwd", "secret", "token", "secret_key", "secret_access_key", "signature", "credential"} {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return false
}

// Find returns the inline secrets of s (a connection string or a URL) and
// s with each of them masked. It never fails: a string it cannot parse is
// scanned as key=value text.
func Find(s string) ([]Finding, string) {
	if scheme, rest, ok := strings.Cut(s, "://"); ok && isScheme(scheme) {
		return findURL(scheme+"://", rest)
	}
	var found []Finding
	out := s
	if !strings.HasPrefix(strings.ToLower(s), "sqlite:") {
		// A MySQL DSN: user:password@tcp(host)/db.
		if at := strings.LastIndex(s, "@"); at > 0 {
			if user, _, ok := strings.Cut(s[:at], ":"); ok && !strings.ContainsAny(user, "/ =") {
				found = append(found, Finding{Key: "password", UserInfo: true})
				out = user + ":" + Mask + s[at:]
			}
		}
	}
	f, out := maskPairs(out, kvPair)
	return append(found, f...), out
}

var portThenPath = regexp.MustCompile(`^[0-9]+/`)

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

func isScheme(s string) bool { return schemeRE.MatchString(s) }

// findURL scans the part of a URL after scheme://.
func findURL(prefix, rest string) ([]Finding, string) {
	var found []Finding
	end := strings.IndexAny(rest, "?#")
	if end < 0 {
		end = len(rest)
	}
	head, tail := rest[:end], rest[end:]
	// The user info ends at the last '@' before the query: a secret may
	// hold '/' (AWS secret keys do), a user name may not.
	if at := strings.LastIndex(head, "@"); at >= 0 {
		info := head[:at]
		if u, err := url.PathUnescape(info); err == nil {
			info = u // a ':' written as %3A separates a password all the same
		}
		// host:5432/db@x has an '@' in its path, not a password.
		if user, pw, ok := strings.Cut(info, ":"); ok && !strings.Contains(user, "/") && !portThenPath.MatchString(pw) {
			found = append(found, Finding{Key: "password", UserInfo: true})
			head = user + ":" + Mask + head[at:]
		} else if strings.EqualFold(prefix, "s3://") && !strings.Contains(info, "/") {
			// An S3 location has no user: what is written there is a key
			// or a token.
			found = append(found, Finding{Key: "password", UserInfo: true})
			head = Mask + head[at:]
		}
	}
	// ;key=value parameters in the path (Spark Connect: sc://host/;token=...).
	f, head := maskPairs(head, semiPair)
	found = append(found, f...)
	f, tail = maskPairs(tail, queryPair)
	return append(found, f...), prefix + head + tail
}

var (
	// queryPair is one parameter of a query string.
	queryPair = regexp.MustCompile(`([?&;#])([^=&;#]+)=([^&;#]*)`)
	// semiPair is one ;key=value parameter.
	semiPair = regexp.MustCompile(`(;)([^=;/?#]+)=([^;/?#]*)`)
	// kvPair is one key=value pair of a libpq connection string; a value
	// may be single-quoted with backslash escapes.
	kvPair = regexp.MustCompile(`(^|[\s;])([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*('(?:[^'\\]|\\.)*'?|[^\s;]*)`)
)

// maskPairs masks the values of secret-named pairs matched by re, whose
// groups are (separator, key, value).
func maskPairs(s string, re *regexp.Regexp) ([]Finding, string) {
	var found []Finding
	out := re.ReplaceAllStringFunc(s, func(m string) string {
		g := re.FindStringSubmatch(m)
		name := g[2]
		if u, err := url.QueryUnescape(name); err == nil {
			name = u
		}
		if !IsSecretKey(name) || g[3] == "" {
			return m
		}
		found = append(found, Finding{Key: strings.TrimSpace(name)})
		return m[:len(m)-len(g[3])] + Mask
	})
	return found, out
}

// textURL is a URL with user info inside free text; textPair a
// secret-looking key=value pair.
var (
	textURL  = regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@"'` + "`" + `]+):([^\s@"'` + "`" + `]*)@`)
	textPair = regexp.MustCompile(`(?i)\b((?:ssl)?pass(?:word|wd)?|pwd|(?:aws_)?secret(?:_access_key|_key)?|(?:session_|security_|access_|x-amz-security-)?token|api_?key)(\s*=\s*)('[^']*'|"[^"]*"|[^\s&;,"'` + "`" + `)]+)`)
)

// Redact masks, in free text such as an error message, every URL user
// info password and every secret-named key=value value. It is the last
// line of defence for what a driver or library echoes; the job file's
// values are refused by Find before any of them is used.
func Redact(text string) string {
	if !strings.Contains(text, "@") && !strings.Contains(text, "=") {
		return text
	}
	text = textURL.ReplaceAllString(text, "$1:"+Mask+"@")
	return textPair.ReplaceAllStringFunc(text, func(m string) string {
		g := textPair.FindStringSubmatch(m)
		if g[3] == Mask {
			return m
		}
		return g[1] + g[2] + Mask
	})
}
