// Package runner runs a job through the contracts alone (source.Source,
// sink.Sink, engine.Engine, store.Store): lease, mark dead runs, claim the
// sinks, recover committed but unpublished runs, plan, execute, stage,
// commit and publish (Run). It also answers what the next run would read
// (Plan), resets a job's bookmark (Reset), and gives a Go program the
// bookmark of a folder of files alone (Bookmarks, bookmarks.go).
package runner
