package job

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// A source or sink block is decoded in one piece: the keys every kind has
// (ctx, from) and the keys of the block's kind, chosen by its marker key,
// as one struct made at run time, so that a key neither knows is an
// unknown key with its line, as everywhere else in the file.

// holder is a Source or a Sink: a block with common keys and a kind.
type holder interface {
	registry() *registry
	set(k Kind, cfg Config)
}

func (s *Source) registry() *registry { return sourceKinds }
func (k *Sink) registry() *registry   { return sinkKinds }

func (s *Source) set(k Kind, cfg Config)  { s.Kind, s.Config = k.Name, cfg }
func (k *Sink) set(kind Kind, cfg Config) { k.Kind, k.Config = kind.Name, cfg }

// UnmarshalYAML decodes a source block by its kind.
func (s *Source) UnmarshalYAML(unmarshal func(any) error) error { return decodeBlock(s, unmarshal) }

// UnmarshalYAML decodes a sink block by its kind.
func (k *Sink) UnmarshalYAML(unmarshal func(any) error) error { return decodeBlock(k, unmarshal) }

// blockType is the struct a block of kind k decodes into: h's yaml-tagged
// fields, then the kind's struct inline.
func blockType(h holder, k Kind) reflect.Type {
	ht := reflect.TypeOf(h).Elem()
	var fields []reflect.StructField
	for i := range ht.NumField() {
		f := ht.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" && f.IsExported() {
			fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
		}
	}
	fields = append(fields, reflect.StructField{Name: "Block", Type: reflect.TypeOf(k.New()).Elem(), Tag: `yaml:",inline"`})
	return reflect.StructOf(fields)
}

// fill copies a decoded block (a value of blockType) into h.
func fill(h holder, k Kind, b reflect.Value) {
	hv := reflect.ValueOf(h).Elem()
	for i := range b.NumField() - 1 {
		hv.FieldByName(b.Type().Field(i).Name).Set(b.Field(i))
	}
	cfg := k.New()
	reflect.ValueOf(cfg).Elem().Set(b.Field(b.NumField() - 1))
	h.set(k, cfg)
}

func noKind(r *registry) error {
	return fmt.Errorf("no %s kind is built into this binary", r.what)
}

func decodeBlock(h holder, unmarshal func(any) error) error {
	var keys map[string]any
	if err := unmarshal(&keys); err != nil {
		return err
	}
	k, ok := h.registry().forKeys(func(key string) bool { _, ok := keys[key]; return ok })
	if !ok {
		return noKind(h.registry())
	}
	b := reflect.New(blockType(h, k))
	if err := unmarshal(b.Interface()); err != nil {
		return err
	}
	fill(h, k, b.Elem())
	return nil
}

// decodeBlockAll is decodeAll for a source or sink block: every key that
// neither the common keys nor the kind know is reported, and a key of
// another kind says which.
func decodeBlockAll(file string, m ast.MapNode, h holder, path string) []*Error {
	keys := map[string]bool{}
	for it := m.MapRange(); it.Next(); {
		keys[it.Key().GetToken().Value] = true
	}
	r := h.registry()
	k, ok := r.forKeys(func(key string) bool { return keys[key] })
	if !ok {
		return []*Error{{File: file, Line: lineOfNode(m.(ast.Node)), Key: strings.TrimPrefix(path, "$."), Msg: noKind(r).Error()}}
	}
	b := reflect.New(blockType(h, k)).Elem()
	errs := decodeAll(file, m.(ast.Node), b, path)
	for _, e := range errs {
		key, found := strings.CutPrefix(e.Key, strings.TrimPrefix(path, "$.")+".")
		if !found || e.unknown != key {
			continue
		}
		other, ok := r.otherKey(k.Name, key)
		switch {
		case ok && key == other.anchor() && keys[k.anchor()]:
			e.Msg = fmt.Sprintf("a %s has either %s: or %s:, not both", r.what, other.anchor(), k.anchor())
		case ok:
			e.Msg = fmt.Sprintf("is for %s, not %s", other.Noun, k.Noun)
		}
		if ok {
			e.meant = "" // not a typo: the key is another kind's
		}
	}
	fill(h, k, b)
	return errs
}
