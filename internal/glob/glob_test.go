package glob

import "testing"

func TestCompile(t *testing.T) {
	cases := []struct {
		glob, key string
		want      bool
	}{
		{"**/*.csv", "a.csv", true},
		{"**/*.csv", "x/y/a.csv", true},
		{"*.csv", "x/a.csv", false},
		{"tmp/**", "tmp/a/b", true},
		{"?.csv", "ab.csv", false},
		{"[!_]*.csv", "_a.csv", false},
		{"{a,b}.csv", "b.csv", true},
		{"a+b.csv", "a+b.csv", true},
		{"a+b.csv", "aab.csv", false},
	}
	for _, c := range cases {
		re, err := Compile(c.glob)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.glob, err)
		}
		if got := re.MatchString(c.key); got != c.want {
			t.Errorf("%q matches %q = %v, want %v", c.glob, c.key, got, c.want)
		}
	}
	for _, bad := range []string{"[abc", "{a,b"} {
		if _, err := Compile(bad); err == nil {
			t.Errorf("Compile(%q): no error", bad)
		}
	}
}

func TestCheckRelative(t *testing.T) {
	if err := CheckRelative("s3://land/in/", "tmp/**"); err != nil {
		t.Errorf("relative glob refused: %v", err)
	}
	err := CheckRelative("s3://land/in/", "s3://land/in/tmp/**")
	if err == nil || err.Error() != `globs match keys relative to path: write "tmp/**", not "s3://land/in/tmp/**"` {
		t.Errorf("full path under the source: %v", err)
	}
	if got := Relative("s3://land/in", "s3://land/in/tmp/**"); got != "tmp/**" {
		t.Errorf("Relative = %q, want tmp/**", got)
	}
}
