package job

import (
	"fmt"
	"sync"
)

// Crawler is a job's crawler (`crawler:`), run before the job's sources
// are planned so that the tables they read are up to date: the path of a
// crawler file (relative to the job file), or a crawler file's keys
// inline. Its crawl uses the job's state store.
type Crawler struct {
	// File is the crawler file's path as written ("" for a block inline).
	File string
	// Config is the inline block, decoded by the registered crawler kind
	// (package crawler's *Config); nil for a file.
	Config Config
	// Line is the line of the crawler: key.
	Line int
}

var (
	crawlerMu   sync.Mutex
	crawlerKind *Kind
)

// RegisterCrawler makes the crawler block known to the job file (`crawler:
// {...}`); called from package crawler's init. Its Marker and Anchor are
// unused.
func RegisterCrawler(k Kind) {
	crawlerMu.Lock()
	defer crawlerMu.Unlock()
	if crawlerKind != nil {
		panic("job: the crawler block registered twice")
	}
	crawlerKind = &k
}

func registeredCrawler() (Kind, bool) {
	crawlerMu.Lock()
	defer crawlerMu.Unlock()
	if crawlerKind == nil {
		return Kind{}, false
	}
	return *crawlerKind, true
}

// UnmarshalYAML accepts a crawler file's path or a crawler block.
func (c *Crawler) UnmarshalYAML(unmarshal func(any) error) error {
	var path string
	if err := unmarshal(&path); err == nil {
		*c = Crawler{File: path}
		return nil
	}
	k, ok := registeredCrawler()
	if !ok {
		return fmt.Errorf("no crawler is built into this binary")
	}
	cfg := k.New()
	if err := unmarshal(cfg); err != nil {
		return err
	}
	*c = Crawler{Config: cfg}
	return nil
}

// crawlerDefaults applies the inline crawler block's defaults.
func (s *Spec) crawlerDefaults() {
	if s.Crawler != nil && s.Crawler.Config != nil {
		s.Crawler.Config.ApplyDefaults(s)
	}
}

// crawler checks the crawler: key: a path, or a block its kind validates.
func (v *validator) crawler() {
	c := v.s.Crawler
	switch {
	case c == nil:
	case c.Config != nil:
		c.Config.Validate(&Check{v: v, path: "$.crawler"})
	case c.File == "":
		v.fail("$.crawler", "want a crawler file's path or a crawler block")
	default:
		v.noTilde("$.crawler", c.File)
	}
}
