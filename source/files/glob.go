package files

import (
	"fmt"
	"regexp"
	"strings"
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
		re, err := globRegexp(g)
		if err != nil {
			return nil, err
		}
		m.include = append(m.include, re)
	}
	for _, g := range exclude {
		re, err := globRegexp(g)
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

// globRegexp compiles a glob to an anchored regular expression.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(glob[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("glob %q: unclosed [", glob)
			}
			class := glob[i+1 : i+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += j
		case c == '{':
			j := strings.IndexByte(glob[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("glob %q: unclosed {", glob)
			}
			alts := strings.Split(glob[i+1:i+j], ",")
			for k := range alts {
				alts[k] = regexp.QuoteMeta(alts[k])
			}
			b.WriteString("(?:" + strings.Join(alts, "|") + ")")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", glob, err)
	}
	return re, nil
}

// CompileGlob compiles a glob over '/'-separated keys ("**" spans folders,
// "*" and "?" stay within one, [...] classes) to an anchored regular
// expression, as include: and exclude: are read.
func CompileGlob(glob string) (*regexp.Regexp, error) { return globRegexp(glob) }
