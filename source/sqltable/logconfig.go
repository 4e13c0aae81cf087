package sqltable

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/tidemark-etl/tidemark/job"
)

// ChangesLog is the value of changes: that reads a table's changes from
// PostgreSQL's logical replication.
const ChangesLog = "log"

// The columns a change row carries after the table's own, in this order.
const (
	OpColumn         = "_op"          // I, U or D
	LSNColumn        = "_lsn"         // the commit's LSN, 00000000/00000000 (sorts as text, casts to pg_lsn)
	SeqColumn        = "_seq"         // the change's place in its transaction, from 1 (0: a snapshot row)
	CommitTimeColumn = "_commit_time" // the commit's time (NULL: a snapshot row)
)

// slotName is a valid slot or publication name: PostgreSQL allows lower
// case letters, digits and underscores, at most 63 bytes.
var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// validateLog checks the keys of changes: log, each at its key.
func (c *JobConfig) validateLog(ck *job.Check) {
	if c.Changes != ChangesLog {
		for key, v := range map[string]string{"slot": c.Slot, "publication": c.Publication} {
			if v != "" {
				ck.Fail(key, "only with changes: log")
			}
		}
	}
	if c.Changes == "" {
		return
	}
	ck.OneOf("changes", c.Changes, []string{ChangesLog, ChangesDetect})
	if c.Changes == ChangesDetect {
		c.validateDetect(ck)
		return
	}
	if c.Changes != ChangesLog {
		return
	}
	if !strings.HasPrefix(c.Connection, "postgres://") && !strings.HasPrefix(c.Connection, "postgresql://") {
		ck.Fail("changes", "log reads PostgreSQL's logical replication: the connection must be postgres://")
	}
	if c.Query != "" {
		ck.Fail("query", "changes: log reads a table, not a query")
	}
	for key, set := range map[string]bool{"bookmark_keys": len(c.BookmarkKeys) > 0, "lookback": c.Lookback != "",
		"bounded_rows": c.BoundedRows != 0, "bookmark_keys_sort_order": c.BookmarkKeysSortOrder != "asc" && c.BookmarkKeysSortOrder != ""} {
		if set {
			ck.Fail(key, "not with changes: log (the bookmark is the replication slot's position)")
		}
	}
	for key, v := range map[string]string{"slot": c.Slot, "publication": c.Publication} {
		if v != "" && !slotName.MatchString(v) {
			ck.Fail(key, "%q: want lower-case letters, digits and underscores, at most 63", v)
		}
	}
}

// LogNames are the slot and publication of a changes: log source: the
// ones the job file names, else tidemark_<job>_<ctx>_<hash> (job and ctx
// lower-cased, other characters than letters and digits as _, cut so
// that the name fits PostgreSQL's 63 bytes; the hash, 8 hex digits of
// SHA-256 over job, ctx and database, keeps apart two jobs whatever the
// cut, and one job's sources in two databases of a server, where slots
// are server-wide). The publication defaults to the slot's name.
func LogNames(jobName, ctx, database, slot, publication string) (string, string) {
	if slot == "" {
		h := sha256.Sum256([]byte(jobName + "\x00" + ctx + "\x00" + database))
		tail := "_" + hex.EncodeToString(h[:4])
		body := "tidemark_" + slug(jobName) + "_" + slug(ctx)
		if len(body) > 63-len(tail) {
			body = body[:63-len(tail)]
		}
		slot = body + tail
	}
	if publication == "" {
		publication = slot
	}
	return slot, publication
}

// slug is s in lower case with every character other than a-z and 0-9
// as _.
func slug(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return string(b)
}
