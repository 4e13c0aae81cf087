package sqltable

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// windowStart returns the lower end of the lookback window for a mark's
// first key value (as key text): mark − lookback for ascending keys,
// mark + lookback for descending ones, in the same text form (SQLite
// literals stay literals, timestamps keep their layout). The result only
// ever bounds comparisons, so it need not be a value that exists; it must
// be computed the same way every time, which it is.
func windowStart(k sqldb.Kind, kind keyKind, mark string, l lookback, desc bool) (string, error) {
	quoted := false
	if k == sqldb.SQLite && strings.HasPrefix(mark, "'") {
		v, err := sqliteLiteral(mark)
		if err != nil {
			return "", err
		}
		mark, quoted = v.(string), true
	}
	sign := -1
	if desc {
		sign = 1
	}
	var out string
	var err error
	switch kind {
	case keyInteger, keyDecimal, keyFloat:
		out, err = moveNumber(mark, l.distance, sign)
	case keyDate:
		days := int((l.duration + 24*time.Hour - 1) / (24 * time.Hour))
		out, err = moveTime(mark, time.Duration(sign*days)*24*time.Hour)
	case keyTimestamp, keyTimestampTZ:
		out, err = moveTime(mark, time.Duration(sign)*l.duration)
	default:
		err = fmt.Errorf("a lookback cannot move along this key's type")
	}
	if err != nil {
		return "", fmt.Errorf("computing the lookback window from %q: %w", mark, err)
	}
	if quoted {
		out = sqldb.SQLite.Literal(out)
	}
	return out, nil
}

// moveNumber adds sign*dist to the decimal text v, exactly, keeping as
// many decimals as either has.
func moveNumber(v, dist string, sign int) (string, error) {
	a, ok := new(big.Rat).SetString(v)
	if !ok {
		return "", fmt.Errorf("%q is not a number", v)
	}
	d, ok := new(big.Rat).SetString(dist)
	if !ok {
		return "", fmt.Errorf("%q is not a number", dist)
	}
	if sign < 0 {
		d.Neg(d)
	}
	r := new(big.Rat).Add(a, d)
	scale := max(decimals(v), decimals(dist))
	return r.FloatString(scale), nil
}

func decimals(s string) int {
	if strings.ContainsAny(s, "eE") {
		return 6
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// timeLayouts are the timestamp texts the databases write (PostgreSQL and
// MySQL ISO output, the usual SQLite spellings), tried in order.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999-07",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// moveTime adds d to the timestamp or date text v and writes it back in
// the layout it was read with. Infinite values stay as they are.
func moveTime(v string, d time.Duration) (string, error) {
	if v == "infinity" || v == "-infinity" {
		return v, nil
	}
	for _, layout := range timeLayouts {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		return t.Add(d).Format(layout), nil
	}
	return "", fmt.Errorf("%q is not a date or timestamp tidemark can read", v)
}
