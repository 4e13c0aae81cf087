package sqltable

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Config is one SQL table source; its fields mirror the job file's keys.
type Config struct {
	// Ctx is the source's stable id (for messages and the session's
	// application_name).
	Ctx string
	// Connection is postgres://user@host:port/db, mysql://user@host:port/db
	// or sqlite:PATH (a path as given: resolve it against the job file
	// before). It must not contain a password.
	Connection string
	// PasswordEnv names the environment variable holding the password.
	PasswordEnv string
	// Table is schema.table or table; Query is a SELECT whose result the
	// keys apply to (as a subquery). Exactly one is set.
	Table string
	Query string
	// BookmarkKeys are compared as a tuple; default: the table's primary
	// key.
	BookmarkKeys []string
	// SortOrder is asc (default: keys grow) or desc (keys shrink: a run
	// reads keys below the mark).
	SortOrder string
	// Lookback re-reads this far behind the mark on the first key: a
	// number (key distance) for numeric keys, a duration (90s, 10m, 2h,
	// 3d) for date and time keys. Empty: no window.
	Lookback string
	// BoundedRows limits the rows of one run (0: no limit), in key order;
	// the next run continues. A run always ends on a whole key tuple.
	BoundedRows int64
	// OnNullKey is fail (default) or skip: what rows with a NULL key do.
	OnNullKey string
	// NoRegressionCheck turns off the regression check; Plan.Regressions
	// is then always 0.
	NoRegressionCheck bool
	// RegressionRows is how far back the regression check looks: it
	// counts the rows of a region behind the window (behind the mark,
	// without a lookback) that holds between RegressionRows and twice as
	// many rows (all of them while there are fewer), so its cost does not
	// grow with the table. With a single integer primary key the cursor
	// keeps the highest one seen; otherwise the identities of the rows
	// nearest the boundary (at most 2,000, about 2.2 bytes a row; see the
	// package doc). 0: DefaultRegressionRows; negative: every row behind
	// the window, each run (no identities kept).
	RegressionRows int64
}

// DefaultRegressionRows is the regression check's default depth.
const DefaultRegressionRows = 100_000

// regressionRows is the check's depth; 0 means every row.
func (c Config) regressionRows() int64 {
	switch {
	case c.RegressionRows == 0:
		return DefaultRegressionRows
	case c.RegressionRows < 0:
		return 0
	}
	return c.RegressionRows
}

// Validate checks the configuration without connecting.
func (c Config) Validate() error {
	if c.Connection == "" {
		return errors.New("connection: required")
	}
	if (c.Table == "") == (c.Query == "") {
		return errors.New("give exactly one of table and query")
	}
	switch c.SortOrder {
	case "", "asc", "desc":
	default:
		return fmt.Errorf("bookmark_keys_sort_order: %q is not asc or desc", c.SortOrder)
	}
	switch c.OnNullKey {
	case "", "fail", "skip":
	default:
		return fmt.Errorf("on_null_key: %q is not fail or skip", c.OnNullKey)
	}
	if c.BoundedRows < 0 {
		return fmt.Errorf("bounded_rows: %d is negative", c.BoundedRows)
	}
	seen := map[string]bool{}
	for _, k := range c.BookmarkKeys {
		if k == "" {
			return errors.New("bookmark_keys: empty column name")
		}
		if seen[k] {
			return fmt.Errorf("bookmark_keys: %s is listed twice", k)
		}
		seen[k] = true
	}
	if _, err := parseLookback(c.Lookback); err != nil {
		return err
	}
	return nil
}

func (c Config) desc() bool { return c.SortOrder == "desc" }

func (c Config) order() string {
	if c.desc() {
		return "desc"
	}
	return "asc"
}

// lookback is a parsed lookback: a key distance or a duration.
type lookback struct {
	distance string // decimal text, when a number was given
	duration time.Duration
}

func (l lookback) set() bool { return l.distance != "" || l.duration > 0 }

func (l lookback) String() string {
	if l.distance != "" {
		return l.distance
	}
	return l.duration.String()
}

var (
	numberText = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	daysText   = regexp.MustCompile(`^([0-9]+)d$`)
)

func parseLookback(s string) (lookback, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return lookback{}, nil
	case numberText.MatchString(s):
		if strings.Trim(s, "0.") == "" {
			return lookback{}, nil
		}
		return lookback{distance: s}, nil
	case daysText.MatchString(s):
		n, _ := strconv.Atoi(daysText.FindStringSubmatch(s)[1])
		return lookback{duration: time.Duration(n) * 24 * time.Hour}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return lookback{}, fmt.Errorf("lookback: %q is neither a key distance (1000) nor a duration (10m, 2h, 3d)", s)
	}
	return lookback{duration: d}, nil
}

// fits checks that l suits a first key of kind k.
func (l lookback) fits(k keyKind, key string) error {
	if !l.set() {
		return nil
	}
	switch k {
	case keyInteger:
		if l.distance == "" {
			return fmt.Errorf("lookback %s is a duration but key %s is an integer: give a key distance (e.g. 1000)", l, key)
		}
		if strings.Contains(l.distance, ".") {
			return fmt.Errorf("lookback %s: key %s is an integer: give a whole number", l, key)
		}
	case keyDecimal, keyFloat:
		if l.distance == "" {
			return fmt.Errorf("lookback %s is a duration but key %s is a number: give a key distance", l, key)
		}
	case keyDate, keyTimestamp, keyTimestampTZ:
		if l.duration == 0 {
			return fmt.Errorf("lookback %s is a number but key %s is a date or time: give a duration (10m, 2h, 3d)", l, key)
		}
	default:
		return fmt.Errorf("lookback: key %s has a type a lookback cannot move along (text, uuid, ...); use a numeric, date or time first key", key)
	}
	return nil
}
