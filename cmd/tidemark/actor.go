package main

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// historyShown is how many of the newest bookmark versions `bookmark show`
// looks through for resets and rewinds.
const historyShown = 20

// cliActor names who runs this command, for the bookmark history: "cli
// USER@HOST" (either part "unknown" when it cannot be found).
func cliActor() string {
	name, host := "unknown", "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		host = h
	}
	return "cli " + name + "@" + host
}

// printResets prints the resets and rewinds among the job's newest
// bookmark versions, newest first, with when and who asked.
func printResets(ctx context.Context, st store.Store, job string) error {
	vs, err := st.Versions(ctx, job, store.VersionQuery{Limit: historyShown})
	if err != nil {
		return err
	}
	for _, v := range vs {
		if v.Kind == store.KindCommit {
			continue
		}
		what := "cleared"
		if v.Kind == store.KindRewind {
			what = "rewound to run " + v.RunID
		}
		fmt.Printf("  version %d: %s at %s by %s\n", v.Version, what, v.At.UTC().Format(time.RFC3339), orNone(v.By))
	}
	return nil
}
