package e2e

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rowsWith renders records as CSV (or JSON Lines) with one more row, at
// line 1+len(recs)/2+1, whose amount is written as amount; it returns the
// rendered file and the line of that row.
func rowsWith(format string, recs []record, odd record, amount string) ([]byte, int) {
	var b bytes.Buffer
	line := 0
	if format == "csv" {
		b.WriteString("order_id,customer_id,product,amount\n")
		line = 1
	}
	for i, r := range recs {
		if i == len(recs)/2 {
			if format == "csv" {
				fmt.Fprintf(&b, "%d,%s,%s,%s\n", odd.OrderID, odd.CustomerID, odd.Product, amount)
			} else {
				fmt.Fprintf(&b, `{"order_id":%d,"customer_id":%q,"product":%q,"amount":%s}`+"\n", odd.OrderID, odd.CustomerID, odd.Product, amount)
			}
			line += i + 1
		}
		if format == "csv" {
			fmt.Fprintf(&b, "%d,%s,%s,%d\n", r.OrderID, r.CustomerID, r.Product, r.Amount)
		} else {
			fmt.Fprintf(&b, `{"order_id":%d,"customer_id":%q,"product":%q,"amount":%d}`+"\n", r.OrderID, r.CustomerID, r.Product, r.Amount)
		}
	}
	return b.Bytes(), line
}

// TestValuesNotRounded: once amount is recorded as BIGINT, a later CSV
// 1.5 or JSON 6.6 in it (or a value out of range) is a bad record, never
// rounded: fail names file, line and column and publishes nothing; skip
// drops and counts the row; quarantine also keeps its raw line.
func TestValuesNotRounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, amount string
	}{
		{"csv", "1.5"},
		{"csv", "9223372036854775808"},
		// DuckDB converts hex, binary and '_'-grouped digits exactly
		// (0x1F is 31, accepted); 0x1E does not convert.
		{"csv", "0x1E"},
		{"json", "6.6"},
		{"json", `"7.5"`},
	} {
		for _, policy := range []string{"fail", "skip", "quarantine"} {
			t.Run(tc.format+" "+tc.amount+" "+policy, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, jobOpts{format: tc.format, top: []string{"on_bad_record: " + policy}})
				add := func(name string, n int) []record {
					recs := f.gen.records(n)
					if tc.format == "csv" {
						f.putCSV(name+".csv", recs)
					} else {
						f.put(name+".json", jsonlBytes(recs))
					}
					return recs
				}
				first := add("first", 20)
				f.mustRun()
				before := f.bookmark()
				filesBefore := relFiles(t, f.outDir())

				good := f.gen.records(10)
				odd := f.gen.records(1)[0]
				name := "odd." + map[string]string{"csv": "csv", "json": "json"}[tc.format]
				data, line := rowsWith(tc.format, good, odd, tc.amount)
				f.put(name, data)
				if policy == "fail" {
					_, r := f.runExpect(1)
					assertMentions(t, r, name, "column amount", tc.amount[len(tc.amount)-3:])
					if !regexp.MustCompile(fmt.Sprintf(`\bline %d\b`, line)).MatchString(r.output()) {
						t.Errorf("the error does not name line %d\n%v", line, r)
					}
					if after := f.bookmark(); string(after.Version) != string(before.Version) {
						t.Errorf("bookmark moved by a failed run: version %s -> %s", before.Version, after.Version)
					}
					if got := relFiles(t, f.outDir()); strings.Join(got, "\n") != strings.Join(filesBefore, "\n") {
						t.Errorf("a failed run published files: before %d, after %d", len(filesBefore), len(got))
					}
					f.assertSink(first)
					return
				}
				s := f.mustRun()
				if got := rejected(s); got != 1 {
					t.Errorf("run summary: rejected = %d, want 1", got)
				}
				f.assertSink(concat(first, good))
				rejects := f.rejectFiles()
				if policy == "skip" {
					if len(rejects) > 0 {
						t.Errorf("skip: rejects written, want none: %v", rejects)
					}
					return
				}
				rows := readRejects(t, rejects)
				if len(rows) != 1 || rows[0]["file"] != name || rows[0]["line"] != fmt.Sprint(line) ||
					!strings.Contains(rows[0]["raw"], tc.amount) {
					t.Errorf("quarantined rows = %v, want one: %s line %d holding %s", rows, name, line, tc.amount)
				}
			})
		}
	}
}

// readRejects reads quarantine files: one map per row, by header.
func readRejects(t testing.TB, files []string) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatalf("reading %s: %v", p, err)
		}
		for _, r := range recs[1:] {
			m := map[string]string{}
			for i, h := range recs[0] {
				m[h] = r[i]
			}
			out = append(out, m)
		}
	}
	return out
}

// TestQuarantineKeepsRawBytes: a row rejected for invalid UTF-8 is
// quarantined with its bytes as they were, not with '?' in their place.
func TestQuarantineKeepsRawBytes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{top: []string{"on_bad_record: quarantine"}})
	first := f.addCSVs("first", 1, 10)
	f.mustRun()
	good := f.gen.records(4)
	bad := "9999,C\xe9\xe8,widget,10"
	var b bytes.Buffer
	b.Write(csvBytes(good[:2]))
	b.WriteString(bad + "\n")
	b.Write(csvBytes(good[2:])[len("order_id,customer_id,product,amount\n"):])
	f.put("latin.csv", b.Bytes())
	s := f.mustRun()
	if got := rejected(s); got != 1 {
		t.Errorf("rejected = %d, want 1", got)
	}
	f.assertSink(concat(first, good))
	rows := readRejects(t, f.rejectFiles())
	if len(rows) != 1 || rows[0]["raw"] != bad || rows[0]["line"] != "4" {
		t.Errorf("quarantined = %q, want line 4 with raw %q", rows, bad)
	}
}

// TestUnterminatedQuote: under skip, a quote that is never closed does not
// take the rest of the file into one rejected row: the run fails naming
// the line where the quote opened, and publishes nothing.
func TestUnterminatedQuote(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{top: []string{"on_bad_record: skip"}})
	first := f.addCSVs("first", 1, 10)
	f.mustRun()
	recs := f.gen.records(30)
	var b bytes.Buffer
	b.Write(csvBytes(recs[:5]))
	b.WriteString("7777,\"C0001,widget,10\n") // line 7
	b.Write(csvBytes(recs[5:])[len("order_id,customer_id,product,amount\n"):])
	f.put("quote.csv", b.Bytes())
	_, r := f.runExpect(1)
	assertMentions(t, r, "quote.csv", "line 7", "quote")
	f.assertSink(first)
}

// TestLongLineEcho: the error about a 5 MB line repeats at most a few
// hundred bytes of it.
func TestLongLineEcho(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("first", 1, 10)
	f.mustRun()
	var b bytes.Buffer
	b.Write(csvBytes(f.gen.records(3)))
	b.WriteString("1,C0001,widget," + strings.Repeat("9", 5<<20) + "\n")
	f.put("long.csv", b.Bytes())
	_, r := f.runExpect(1)
	assertMentions(t, r, "long.csv")
	if n := strings.Count(r.stderr, "9999999999"); n*10 > 2000 {
		t.Errorf("stderr repeats about %d bytes of the long line, want at most a few hundred", n*10)
	}
	if len(r.stdout) > 4000 {
		t.Errorf("stdout is %d bytes, want the error clipped", len(r.stdout))
	}
}

// TestJSONBooleanNotRounded: a JSON 2 or 0.5 in a column recorded as
// BOOLEAN is a bad record (DuckDB's JSON reader made both true); 0, 1,
// true and false are kept.
func TestJSONBooleanNotRounded(t *testing.T) {
	t.Parallel()
	line := func(r record, paid string) string {
		return fmt.Sprintf(`{"order_id":%d,"customer_id":%q,"product":%q,"amount":%d,"paid":%s}`+"\n",
			r.OrderID, r.CustomerID, r.Product, r.Amount, paid)
	}
	for _, odd := range []string{"2", "0.5"} {
		for _, policy := range []string{"fail", "skip"} {
			t.Run(odd+" "+policy, func(t *testing.T) {
				t.Parallel()
				// The transform reads paid (a column no query reads is not
				// converted, nor checked).
				f := newFixture(t, jobOpts{format: "json", top: []string{"on_bad_record: " + policy},
					transform: cleanOrders + " WHERE paid IS NOT NULL"})
				first := f.gen.records(4)
				var b strings.Builder
				for _, r := range first {
					b.WriteString(line(r, "true"))
				}
				f.put("first.json", []byte(b.String()))
				f.mustRun()
				good := f.gen.records(4)
				bad := f.gen.records(1)[0]
				b.Reset()
				for i, r := range good {
					b.WriteString(line(r, []string{"0", "1", "true", "false"}[i]))
				}
				b.WriteString(line(bad, odd)) // line 5
				f.put("odd.json", []byte(b.String()))
				if policy == "fail" {
					_, r := f.runExpect(1)
					assertMentions(t, r, "odd.json", "line 5", "column paid", odd)
					f.assertSink(first)
					return
				}
				s := f.mustRun()
				if got := rejected(s); got != 1 {
					t.Errorf("rejected = %d, want 1", got)
				}
				f.assertSink(concat(first, good))
			})
		}
	}
}

// TestDecimalNotANumberMessage: a value in a DECIMAL column that is not a
// number is named so, not as having too many decimal places.
func TestDecimalNotANumberMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{options: "{header: true, types: {amount: 'DECIMAL(10,2)'}}"})
	f.put("first.csv", []byte("order_id,customer_id,product,amount\n1,C1,widget,10.50\n"))
	f.mustRun()
	f.put("odd.csv", []byte("order_id,customer_id,product,amount\n2,C2,widget,3.10\n3,C3,widget,ten\n"))
	_, r := f.runExpect(1)
	assertMentions(t, r, "odd.csv", "line 3", "column amount", "not a decimal number")
	if strings.Contains(r.output(), "decimal places") {
		t.Errorf("ten reported as having too many decimal places:\n%v", r)
	}
}

// TestDecimalSeparatorMessage: with decimal_separator ',', "2,5" in an
// integer column is named as a fraction, not as out of range.
func TestDecimalSeparatorMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{options: "{header: true, delim: ';', decimal_separator: ','}"})
	f.put("first.csv", []byte("order_id;customer_id;product;amount\n1;C1;widget;10\n"))
	f.mustRun()
	f.put("odd.csv", []byte("order_id;customer_id;product;amount\n2;C2;widget;3,0\n3;C3;widget;2,5\n"))
	_, r := f.runExpect(1)
	assertMentions(t, r, "odd.csv", "line 3", "column amount", "fraction")
	if strings.Contains(r.output(), "out of the type's range") {
		t.Errorf("2,5 reported as out of range:\n%v", r)
	}
}

// TestNaiveTimeInZonedColumn: a time without an offset in a column
// recorded as TIMESTAMP WITH TIME ZONE is the same instant whatever the
// machine's time zone (it was taken in TZ: 10:00 was 04:30Z in Kolkata
// and 15:00Z in New York).
func TestNaiveTimeInZonedColumn(t *testing.T) {
	t.Parallel()
	for _, tz := range []string{"Asia/Kolkata", "America/New_York"} {
		t.Run(tz, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{transform: "SELECT order_id, customer_id, product, " +
				"CAST(epoch(t) AS BIGINT) AS amount FROM orders_source"})
			env := []string{"TZ=" + tz}
			hdr := "order_id,customer_id,product,t\n"
			f.put("first.csv", []byte(hdr+"1,C1,widget,2026-01-01 10:00:00+00:00\n"))
			if _, r := f.run(env); r.code != 0 {
				t.Fatalf("first run: %v", r)
			}
			f.put("naive.csv", []byte(hdr+"2,C2,widget,2026-01-01 10:00:00\n"))
			if _, r := f.run(env); r.code != 0 {
				t.Fatalf("second run: %v", r)
			}
			at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC).Unix()
			f.assertSink([]record{{1, "C1", "widget", at}, {2, "C2", "widget", at}})
		})
	}
}

// TestUnterminatedQuoteFirstRun: on a first run, where DuckDB's sniffer
// gives up on such a file ("Error when sniffing file ... not possible to
// automatically detect the CSV parsing dialect"), an unclosed quote is
// named with the line where it opened too.
func TestUnterminatedQuoteFirstRun(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"fail", "skip"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{top: []string{"on_bad_record: " + policy}})
			recs := f.gen.records(30)
			var b bytes.Buffer
			b.Write(csvBytes(recs[:5]))
			b.WriteString("7777,\"C0001,widget,10\n") // line 7
			b.Write(csvBytes(recs[5:])[len("order_id,customer_id,product,amount\n"):])
			f.put("quote.csv", b.Bytes())
			_, r := f.runExpect(1)
			assertMentions(t, r, "quote.csv", "line 7", "quote")
			if strings.Contains(r.output(), "sniffing") {
				t.Errorf("the error is DuckDB's sniffer's:\n%v", r)
			}
			f.assertSink(nil)
		})
	}
}

// TestTimestampOffsetNotDropped: in a column recorded as TIMESTAMP (no
// zone), a non-zero UTC offset is a bad record, also one with seconds
// (+01:00:00, as PostgreSQL writes +00:53:28), which was dropped (10:00
// stored); a zero offset in any spelling is accepted.
func TestTimestampOffsetNotDropped(t *testing.T) {
	t.Parallel()
	for _, odd := range []string{"+05:30", "+01:00:00", "+00:53:28"} {
		t.Run(odd, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{transform: "SELECT order_id, customer_id, product, " +
				"CAST(epoch(t) AS BIGINT) AS amount FROM orders_source"})
			hdr := "order_id,customer_id,product,t\n"
			f.put("first.csv", []byte(hdr+"1,C1,widget,2026-01-01 10:00:00\n"))
			f.mustRun()
			f.put("zero.csv", []byte(hdr+"2,C2,widget,2026-01-01 10:00:00+00:00:00\n3,C3,widget,2026-01-01 10:00:00Z\n"))
			f.mustRun()
			f.put("odd.csv", []byte(hdr+"4,C4,widget,2026-01-01 10:00:00\n5,C5,widget,2026-01-01 10:00:00"+odd+"\n"))
			_, r := f.runExpect(1)
			assertMentions(t, r, "odd.csv", "line 3", "column t", odd)
			at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC).Unix()
			f.assertSink([]record{{1, "C1", "widget", at}, {2, "C2", "widget", at}, {3, "C3", "widget", at}})
		})
	}
}

// TestNotADateMessage: a JSON number in a DATE or TIMESTAMP column is
// named as not a date or timestamp, not as a time of day the date would
// drop or an offset.
func TestNotADateMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{format: "json", transform: "SELECT order_id, customer_id, product, " +
		"CAST(epoch(t) AS BIGINT) + CAST(epoch(d) AS BIGINT) AS amount FROM orders_source"})
	f.put("first.json", []byte(`{"order_id":1,"customer_id":"C1","product":"widget","t":"2026-01-01 10:00:00","d":"2026-01-01"}`+"\n"))
	f.mustRun()
	for _, tc := range []struct{ line, want string }{
		{`"t":"2026-01-01 10:00:00","d":20260101`, "is not a date"},
		{`"t":1767261600,"d":"2026-01-01"`, "is not a timestamp"},
	} {
		f.put("odd.json", []byte(`{"order_id":2,"customer_id":"C2","product":"widget",`+tc.line+"}\n"))
		_, r := f.runExpect(1)
		assertMentions(t, r, "odd.json", "line 1", tc.want)
		if strings.Contains(r.output(), "time of day") || strings.Contains(r.output(), "UTC offset") {
			t.Errorf("%s: misnamed:\n%v", tc.line, r)
		}
	}
}
