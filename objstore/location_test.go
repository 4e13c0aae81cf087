package objstore

import "testing"

func TestParseFolder(t *testing.T) {
	for _, c := range []struct {
		loc  string
		want Folder
	}{
		{"/data/in/", Folder{Scheme: "file", Dir: "/data/in"}},
		{"file:///data/in/../x", Folder{Scheme: "file", Dir: "/data/x"}},
		{"s3://bucket", Folder{Scheme: "s3", Bucket: "bucket"}},
		{"s3://bucket/", Folder{Scheme: "s3", Bucket: "bucket"}},
		{"s3://bucket//a/b", Folder{Scheme: "s3", Bucket: "bucket", Dir: "a/b/"}},
		{"s3://bucket/a/../b/?endpoint=http://x", Folder{Scheme: "s3", Bucket: "bucket", Dir: "a/../b/"}},
		{"s3://key:secret@bucket/a", Folder{Scheme: "s3", Bucket: "bucket", Dir: "a/"}},
	} {
		if got := ParseFolder(c.loc); got != c.want {
			t.Errorf("ParseFolder(%q) = %+v, want %+v", c.loc, got, c.want)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, c := range []struct{ root, key, want string }{
		{"/data/in", "a/b.csv", "/data/in/a/b.csv"},
		{"file:///data/in", "a.csv", "/data/in/a.csv"},
		{"s3://b/in/", "a/b.csv", "s3://b/in/a/b.csv"},
		{"s3://b/in", "a.csv", "s3://b/in/a.csv"},
		{"s3://b/in/", "", "s3://b/in/"},
	} {
		if got := Join(c.root, c.key); got != c.want {
			t.Errorf("Join(%q, %q) = %q, want %q", c.root, c.key, got, c.want)
		}
	}
}
