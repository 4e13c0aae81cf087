package spark

import (
	"strings"
	"unicode"
)

// sparkSQL adapts a transform written for the DuckDB engine to Spark SQL
// where the two differ only in spelling: a bare VARCHAR (DuckDB's text
// type, which Spark accepts only with a length) becomes STRING. Text in
// quotes, backticks and comments is left alone. Everything else is
// Spark SQL as written (see docs/how-to/spark.md).
func sparkSQL(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(q) {
				if q[j] == '\\' && c != '`' {
					j += 2
					continue
				}
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(q))
			b.WriteString(q[i:j])
			i = j
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i+2:], "*/")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(q[i:end])
			i = end
		case isWord(c):
			j := i
			for j < len(q) && isWord(q[j]) {
				j++
			}
			w := q[i:j]
			k := j
			for k < len(q) && (q[k] == ' ' || q[k] == '\t' || q[k] == '\n' || q[k] == '\r') {
				k++
			}
			if strings.EqualFold(w, "varchar") && (k >= len(q) || q[k] != '(') && (i == 0 || !isWord(q[i-1])) {
				w = "STRING"
			}
			b.WriteString(w)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isWord(c byte) bool {
	return c == '_' || c < 128 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))) || c >= 128
}
