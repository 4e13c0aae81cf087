package spark

import "fmt"

// Spark's CSV and JSON readers read a number past a DOUBLE's or FLOAT's
// range (1e400) as infinity, with no error: the value was changed and the
// run succeeded. Such a value is a bad record, as in the DuckDB engine: a
// source with DOUBLE or FLOAT columns is read once more with those
// columns as text (lossyValue), and a value that is a finite number past
// the range (an exponent or more than 38 digits, and infinity as the type)
// fails the run naming file, line and column, or under skip and quarantine
// leaves its row out, counted. An infinity spelled out stays one.

// floatCheck is the check of a DOUBLE or FLOAT column (st: its Spark
// type). Any line may hold such a value: there is no gate.
func floatCheck(st string) *lossCheck {
	return &lossCheck{
		cond: func(v string) string {
			return fmt.Sprintf("((contains(%[1]s, 'e') OR contains(%[1]s, 'E') OR length(%[1]s) > 38) AND abs(try_cast(trim(%[1]s) AS %[2]s)) = CAST('Infinity' AS %[2]s))", v, st)
		},
		why:    "it is out of the type's range, and would be read as infinity",
		expect: func(v string) string { return fmt.Sprintf("try_cast(trim(%s) AS %s)", v, st) },
	}
}
