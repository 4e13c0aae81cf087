package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestHostID: --host-id wins over TIDEMARK_HOST_ID; neither leaves the
// library's default; an id that is not one printable line is a usage error.
func TestHostID(t *testing.T) {
	t.Setenv(hostIDEnv, "from-env")
	for _, tc := range []struct {
		flag, env, want string
		bad             bool
	}{
		{"from-flag", "from-env", "from-flag", false},
		{"", "from-env", "from-env", false},
		{"", "", "", false},
		{"two\nlines", "", "", true},
		{"", "tab\there", "", true},
		{strings.Repeat("x", 201), "", "", true},
	} {
		t.Setenv(hostIDEnv, tc.env)
		got, err := hostID(tc.flag)
		var ue usageError
		switch {
		case tc.bad && !errors.As(err, &ue):
			t.Errorf("hostID(%q) with %s=%q: got %q, %v; want a usage error", tc.flag, hostIDEnv, tc.env, got, err)
		case !tc.bad && (err != nil || got != tc.want):
			t.Errorf("hostID(%q) with %s=%q: got %q, %v; want %q", tc.flag, hostIDEnv, tc.env, got, err, tc.want)
		}
	}
}

// TestSkewedClock: the test hook shifts the run's clock by its duration
// and refuses what is not one.
func TestSkewedClock(t *testing.T) {
	t.Setenv(clockSkewEnv, "")
	if now, err := skewedClock(); now != nil || err != nil {
		t.Errorf("unset: got a clock (%v), want none", err)
	}
	t.Setenv(clockSkewEnv, "1h")
	now, err := skewedClock()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(now()); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("a clock an hour ahead is %v ahead", d)
	}
	t.Setenv(clockSkewEnv, "soon")
	var ue usageError
	if _, err := skewedClock(); !errors.As(err, &ue) {
		t.Errorf("%s=soon: got %v, want a usage error", clockSkewEnv, err)
	}
}
