package files

import (
	"regexp"

	"github.com/tidemark-etl/tidemark/internal/glob"
)

// matcher decides which keys of a source are inputs, from include and
// exclude globs over keys relative to the source path. "**" spans folders,
// "*" and "?" stay within one.
type matcher struct {
	include, exclude []*regexp.Regexp
}

func newMatcher(include, exclude []string) (*matcher, error) {
	m := &matcher{}
	for _, g := range include {
		re, err := glob.Compile(g)
		if err != nil {
			return nil, err
		}
		m.include = append(m.include, re)
	}
	for _, g := range exclude {
		re, err := glob.Compile(g)
		if err != nil {
			return nil, err
		}
		m.exclude = append(m.exclude, re)
	}
	return m, nil
}

func (m *matcher) match(key string) bool {
	ok := len(m.include) == 0
	for _, re := range m.include {
		if re.MatchString(key) {
			ok = true
			break
		}
	}
	if !ok {
		return false
	}
	for _, re := range m.exclude {
		if re.MatchString(key) {
			return false
		}
	}
	return true
}
