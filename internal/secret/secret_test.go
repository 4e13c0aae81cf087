package secret

import (
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	for _, c := range []struct {
		in, key, masked string
	}{
		{"postgres://etl:hunter2@db:5432/shop", "password", "postgres://etl:xxxxx@db:5432/shop"},
		{"postgres://etl:hun/ter2@db/shop", "password", "postgres://etl:xxxxx@db/shop"},
		{"postgres://etl@db/shop?sslmode=disable&password=hunter2", "password", "postgres://etl@db/shop?sslmode=disable&password=xxxxx"},
		{"postgresql://etl@db/shop?sslpassword=hunter2", "sslpassword", "postgresql://etl@db/shop?sslpassword=xxxxx"},
		{"mysql://etl@db/shop?pass=hunter2", "pass", "mysql://etl@db/shop?pass=xxxxx"},
		{"mysql://etl@db/shop?Passwd=hunter2", "Passwd", "mysql://etl@db/shop?Passwd=xxxxx"},
		{"postgres://etl@db/shop?pass%77ord=hunter2", "password", "postgres://etl@db/shop?pass%77ord=xxxxx"},
		{"s3://AKIAEXAMPLE:hunter2@bucket/in/", "password", "s3://AKIAEXAMPLE:xxxxx@bucket/in/"},
		{"s3://AKIAEXAMPLE:wJal/rXUtn+FEMI@bucket/in/", "password", "s3://AKIAEXAMPLE:xxxxx@bucket/in/"},
		{"s3://AKIAEXAMPLE%3Ahunter2@bucket/in/", "password", "s3://AKIAEXAMPLE:xxxxx@bucket/in/"},
		{"postgres://etl%3ahunter2@db/shop", "password", "postgres://etl:xxxxx@db/shop"},
		{"s3://hunter2@bucket/in/", "password", "s3://xxxxx@bucket/in/"},
		{"s3://bucket/in/#password=hunter2", "password", "s3://bucket/in/#password=xxxxx"},
		{"sc://spark:15002/;token=hunter2;user_id=etl", "token", "sc://spark:15002/;token=xxxxx;user_id=etl"},
		{"host=db port=5432 user=etl password=hunter2 dbname=shop", "password", "host=db port=5432 user=etl password=xxxxx dbname=shop"},
		{"host=db password = 'hun ter\\'2' dbname=shop", "password", "host=db password = xxxxx dbname=shop"},
		{"etl:hunter2@tcp(db:3306)/shop", "password", "etl:xxxxx@tcp(db:3306)/shop"},
	} {
		found, masked := Find(c.in)
		if len(found) != 1 || found[0].Key != c.key {
			t.Errorf("Find(%q): got %v, want one finding %q", c.in, found, c.key)
		}
		if masked != c.masked {
			t.Errorf("Find(%q): masked %q, want %q", c.in, masked, c.masked)
		}
	}
	for _, clean := range []string{
		"postgres://etl@db:5432/shop?sslmode=require",
		"postgres://etl@db:5432/shop?sslkey=/etc/k.pem&sslcert=/etc/c.pem",
		"mysql://etl@db/shop?allowCleartextPasswords=true&allowNativePasswords=true&serverPubKey=k",
		"mysql://etl@db/shop",
		"postgres://db:5432/shop@2024",
		"sqlite:data/shop@2024.db",
		"s3://bucket/in/2024-01-01T00:00@x/",
		"s3://bucket/in/?region=eu-west-1",
		"landing/orders@home:1/",
		"host=db user=etl dbname=shop",
		"sc://spark:15002",
		".tidemark/state.db",
	} {
		if found, masked := Find(clean); len(found) != 0 || masked != clean {
			t.Errorf("Find(%q): got %v %q, want nothing found", clean, found, masked)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, in := range []string{
		`connecting to postgres://etl:hunter2@db/shop: refused`,
		`dsn "user=etl password=hunter2 host=db" rejected`,
		`opening s3://AKIA:hunter2@bucket/in/: no region`,
		`GET https://h/x?X-Amz-Security-Token=hunter2&a=b`,
	} {
		if out := Redact(in); strings.Contains(out, "hunter2") || !strings.Contains(out, Mask) {
			t.Errorf("Redact(%q) = %q", in, out)
		}
	}
	for _, in := range []string{"password_env: environment variable X is not set", "password authentication failed for user \"etl\"",
		"link folder /tmp/TestSecretsRefusedkey=value/x", "holds a secret inline (the password parameter): \"a?password=xxxxx\""} {
		if out := Redact(in); out != in {
			t.Errorf("Redact(%q) = %q, want it unchanged", in, out)
		}
	}
}
