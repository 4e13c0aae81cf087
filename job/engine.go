package job

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// UnmarshalYAML accepts an engine's name ("duckdb") or its name with its
// block ({duckdb: {threads: 2}}), which the engine kind decodes. An engine
// not built into this binary is kept by name, for Validate to refuse.
func (e *Engine) UnmarshalYAML(unmarshal func(any) error) error {
	var name string
	if err := unmarshal(&name); err == nil {
		*e = Engine{Name: name}
		if k, ok := engineKinds.byName(name); ok {
			e.Config = k.New()
		}
		return nil
	}
	var m map[string]any
	if err := unmarshal(&m); err != nil {
		return err
	}
	if len(m) != 1 {
		return fmt.Errorf("engine: want exactly one engine (%s), got %d keys", strings.Join(engineKinds.names(), ", "), len(m))
	}
	for name, raw := range m {
		*e = Engine{Name: name}
		k, ok := engineKinds.byName(name)
		if !ok {
			e.raw, _ = raw.(map[string]any)
			return nil
		}
		cfg := k.New()
		// One field named by the engine, so that go-yaml reports an
		// unknown option with its line.
		t := reflect.StructOf([]reflect.StructField{{Name: "Block", Type: reflect.TypeOf(cfg),
			Tag: reflect.StructTag(fmt.Sprintf(`yaml:%q`, name))}})
		v := reflect.New(t)
		v.Elem().Field(0).Set(reflect.ValueOf(cfg))
		if err := unmarshal(v.Interface()); err != nil {
			return err
		}
		if c, ok := v.Elem().Field(0).Interface().(Config); ok && c != nil {
			e.Config = c
		}
	}
	return nil
}

// decodeEngineAll is decodeAll for the engine: a block of an engine built
// in ({duckdb: {threads: 2}}) is decoded key by key, every unknown key an
// error at its own line. ok is false for the other forms, which go-yaml
// decodes as one value.
func decodeEngineAll(file string, node ast.Node, e *Engine, path string) (errs []*Error, ok bool) {
	m, isMap := node.(ast.MapNode)
	if !isMap || isNull(node) {
		return nil, false
	}
	it := m.MapRange()
	if !it.Next() {
		return nil, false
	}
	name := it.Key().GetToken().Value
	k, known := engineKinds.byName(name)
	if !known || it.Next() {
		return nil, false
	}
	// The one entry again, for its value.
	it = m.MapRange()
	it.Next()
	cfg := k.New()
	if !isNull(it.Value()) {
		errs = decodeAll(file, it.Value(), reflect.ValueOf(cfg).Elem(), path+"."+name)
	}
	*e = Engine{Name: name, Config: cfg}
	return errs, true
}

// validate checks the engine: one built into this binary, and its block.
func (v *validator) engine(options bool) {
	e := v.s.Engine
	if e.Config == nil {
		if options {
			return
		}
		// What an engine that is not built in was given is still checked
		// for secrets: the message must not be the way one leaks.
		for _, k := range slices.Sorted(maps.Keys(e.raw)) {
			if s, ok := e.raw[k].(string); ok {
				v.noSecret("$.engine."+e.Name+"."+k, s, "a token or password does not belong in the job file")
			}
		}
		v.fail("$.engine", "%q: this binary has no %s engine (built in: %s)", e.Name, e.Name, strings.Join(engineKinds.names(), ", "))
		return
	}
	e.Config.Validate(&Check{v: v, path: "$.engine." + e.Name, options: options})
}

// setLines records the line of each source and sink block and of the
// engine.
func (s *Spec) setLines() {
	if s.lines == nil {
		return
	}
	s.Engine.Line = s.lines("$.engine")
	if s.Crawler != nil {
		s.Crawler.Line = s.lines("$.crawler")
	}
	for i := range s.Sources {
		s.Sources[i].Line = s.lines(fmt.Sprintf("$.sources[%d]", i))
	}
	for i := range s.Sinks {
		s.Sinks[i].Line = s.lines(fmt.Sprintf("$.sinks[%d]", i))
	}
}
