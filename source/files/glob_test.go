package files

import "testing"

func TestMatcher(t *testing.T) {
	cases := []struct {
		include, exclude []string
		key              string
		want             bool
	}{
		{nil, nil, "a/b.csv", true},
		{[]string{"**/*.csv"}, nil, "b.csv", true},
		{[]string{"**/*.csv"}, nil, "x/y/b.csv", true},
		{[]string{"**/*.csv"}, nil, "x/y/b.csv.gz", false},
		{[]string{"*.csv"}, nil, "x/b.csv", false},
		{[]string{"*.{csv,json}"}, nil, "b.json", true},
		{[]string{"day?/*.csv"}, nil, "day1/a.csv", true},
		{[]string{"**"}, []string{"tmp/**"}, "tmp/a.csv", false},
		{[]string{"**"}, []string{"tmp/**"}, "tmpx/a.csv", true},
		{[]string{"[ab].csv"}, nil, "c.csv", false},
		{[]string{"a.csv"}, nil, "a+csv", false},
	}
	for _, c := range cases {
		m, err := newMatcher(c.include, c.exclude)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.match(c.key); got != c.want {
			t.Errorf("include %v exclude %v key %q: got %v, want %v", c.include, c.exclude, c.key, got, c.want)
		}
	}
}
