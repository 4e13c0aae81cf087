package spark

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
)

// s3aConf is the session conf for reading s3:// inputs through the
// cluster's s3a, from the standard AWS environment that tidemark itself
// reads S3 with: static credentials, region and a custom endpoint (which
// implies path-style addressing, as for tidemark). It goes to the server
// as session conf (a Config RPC), never into SQL text or a message. The
// FileSystem cache is turned off for s3a so that another session's
// credentials are never reused.
func s3aConf() [][2]string {
	conf := [][2]string{{"fs.s3a.impl.disable.cache", "true"}}
	set := func(key string, envs ...string) {
		for _, e := range envs {
			if v := os.Getenv(e); v != "" {
				conf = append(conf, [2]string{key, v})
				return
			}
		}
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" {
		conf = append(conf, [2]string{"fs.s3a.aws.credentials.provider",
			"org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider,org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"})
		if os.Getenv("AWS_SESSION_TOKEN") != "" {
			conf[len(conf)-1][1] = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
		}
	}
	set("fs.s3a.access.key", "AWS_ACCESS_KEY_ID")
	set("fs.s3a.secret.key", "AWS_SECRET_ACCESS_KEY")
	set("fs.s3a.session.token", "AWS_SESSION_TOKEN")
	set("fs.s3a.endpoint.region", "AWS_REGION", "AWS_DEFAULT_REGION")
	for _, e := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if v := os.Getenv(e); v != "" {
			conf = append(conf, [2]string{"fs.s3a.endpoint", v}, [2]string{"fs.s3a.path.style.access", "true"})
			if u, err := url.Parse(v); err == nil && u.Scheme == "http" {
				conf = append(conf, [2]string{"fs.s3a.connection.ssl.enabled", "false"})
			}
			break
		}
	}
	return conf
}

// s3aSecret reports whether a conf key holds a credential (for messages).
func s3aSecret(key string) bool {
	return strings.HasSuffix(key, ".secret.key") || strings.HasSuffix(key, ".session.token") || strings.HasSuffix(key, ".access.key")
}

// needS3 sets the s3a conf on the session before the first s3:// input.
func (x *execution) needS3(ctx context.Context, src *engine.Source) error {
	if x.e.s3Set {
		return nil
	}
	any := false
	for _, in := range src.Files {
		if engine.Scheme(in.Location) == "s3" {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	for _, kv := range s3aConf() {
		if err := x.s.setConf(ctx, kv[0], kv[1]); err != nil {
			what := kv[0]
			if s3aSecret(what) {
				what = "an s3a credential"
			}
			return fmt.Errorf("spark at %s: setting %s: %w", x.s.remote, what, cleanError(err))
		}
	}
	x.e.s3Set = true
	return nil
}
