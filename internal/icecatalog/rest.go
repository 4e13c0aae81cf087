package icecatalog

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/apache/iceberg-go/catalog/rest"
)

// REST is an external Iceberg REST catalog: a job's iceberg.catalog
// block (an Iceberg sink's or source's), its base URI, the warehouse it is
// asked for, and the NAME of the environment variable holding its
// credential.
type REST struct {
	URI           string `yaml:"rest" doc:"the REST catalog's base URI (http:// or https://, no user, password or ?query)"`
	Warehouse     string `yaml:"warehouse" doc:"the warehouse the REST catalog is asked for"`
	CredentialEnv string `yaml:"credential_env" doc:"the NAME of the environment variable holding the catalog's credential (CLIENT_ID:SECRET for OAuth2, else a bearer token), never the credential itself"`
}

// Checker is where a job-file block's problems go (a *job.Check).
type Checker interface {
	Fail(key, format string, args ...any)
	NoSecret(key, value, instead string) bool
}

// Check checks a catalog: block's keys at iceberg.catalog.*: a REST
// catalog's URI is http(s) and holds no credential (that is
// credential_env's, which must be a variable's name), and warehouse and
// credential_env belong to rest. The zero REST (no catalog:) is fine.
func (r REST) Check(ck Checker) {
	if r == (REST{}) {
		return
	}
	if r.URI == "" {
		ck.Fail("iceberg.catalog.rest", "is required with catalog: (the REST catalog's base URI, http://HOST:PORT/...); "+
			"leave catalog: out for the state store's own catalog")
		return
	}
	const instead = "put the credential in an environment variable and name it in credential_env"
	if ck.NoSecret("iceberg.catalog.rest", r.URI, instead) {
		return
	}
	if err := CheckURI(r.URI); err != nil {
		ck.Fail("iceberg.catalog.rest", "%v", err)
	}
	if r.CredentialEnv != "" && !envName.MatchString(r.CredentialEnv) {
		// Not quoted: it may be the credential itself.
		ck.Fail("iceberg.catalog.credential_env", "must be the NAME of an environment variable (letters, digits "+
			"and _), never the credential itself")
	}
}

// envName is an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckURI says what is wrong with a REST catalog's base URI (nil: it is
// an http or https URL without user, password, query or fragment). The
// message never repeats a user or password.
func CheckURI(uri string) error {
	u, err := url.Parse(uri)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%q: want the REST catalog's base URI, http://HOST:PORT or https://HOST/PATH", uri)
	case u.User != nil:
		return errors.New("holds a user name: put the credential in an environment variable and name it in credential_env")
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q: the base URI takes no ?query or #fragment (a credential belongs in credential_env, "+
			"a warehouse in warehouse)", uri)
	}
	return nil
}

// MissingCredential says that r's credential variable is unset or empty
// (nil: it is set, or r names none).
func (r REST) MissingCredential() error {
	if r.CredentialEnv != "" && os.Getenv(r.CredentialEnv) == "" {
		return fmt.Errorf("the Iceberg REST catalog's credential variable %s (credential_env) is not set", r.CredentialEnv)
	}
	return nil
}

// OpenREST connects to the REST catalog r. The credential, from the
// environment variable r.CredentialEnv, is an OAuth2 client credential
// CLIENT_ID:SECRET (exchanged for a token at the catalog's token
// endpoint) or, without a colon, a bearer token.
func OpenREST(ctx context.Context, r REST) (*Catalog, error) {
	var opts []rest.Option
	if r.Warehouse != "" {
		opts = append(opts, rest.WithWarehouseLocation(r.Warehouse))
	}
	if err := r.MissingCredential(); err != nil {
		return nil, fmt.Errorf("opening the Iceberg REST catalog %s: %w", r.URI, err)
	}
	if r.CredentialEnv != "" {
		cred := os.Getenv(r.CredentialEnv)
		if strings.Contains(cred, ":") {
			opts = append(opts, rest.WithCredential(cred))
		} else {
			opts = append(opts, rest.WithOAuthToken(cred))
		}
	}
	c, err := rest.NewCatalog(ctx, Name, r.URI, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to the Iceberg REST catalog %s: %w", r.URI, err)
	}
	return &Catalog{Catalog: c, close: func() error { return nil }}, nil
}
