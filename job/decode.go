package job

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// decodeAll decodes node into v key by key, so that every unknown key and
// every value of the wrong type in the file is reported, each with its key
// and line, where one Unmarshal stops at the first. Parse uses it only
// after Unmarshal failed: a key that cannot be decoded is left zero.
//
// It descends into structs (mappings) and slices of structs (sequences) by
// their yaml tags; everything else — scalars, maps, types with their own
// UnmarshalYAML — is decoded by go-yaml as one value.
func decodeAll(file string, node ast.Node, v reflect.Value, path string) []*Error {
	if node == nil {
		return nil
	}
	t := v.Type()
	if h, ok := v.Addr().Interface().(holder); ok {
		if m, ok := node.(ast.MapNode); ok && !isNull(node) {
			return decodeBlockAll(file, m, h, path)
		}
	}
	switch {
	case t == reflect.TypeFor[Engine]():
		if errs, ok := decodeEngineAll(file, node, v.Addr().Interface().(*Engine), path); ok {
			return errs
		}
	case ownDecoder(t):
	case t.Kind() == reflect.Struct:
		m, ok := node.(ast.MapNode)
		if !ok || isNull(node) {
			break
		}
		var errs []*Error
		for it := m.MapRange(); it.Next(); {
			key := it.Key().GetToken().Value
			kp := path + "." + key
			f, ok := fieldByTag(v, key)
			if !ok {
				errs = append(errs, unknownKey(file, lineOfNode(it.Key()), kp, key, keysOf(t)))
				continue
			}
			errs = append(errs, decodeAll(file, it.Value(), f, kp)...)
		}
		return errs
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && (!ownDecoder(t.Elem()) || isHolder(t.Elem())):
		seq, ok := node.(*ast.SequenceNode)
		if !ok {
			break
		}
		v.Set(reflect.MakeSlice(t, len(seq.Values), len(seq.Values)))
		var errs []*Error
		for i, n := range seq.Values {
			errs = append(errs, decodeAll(file, n, v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return errs
	}
	if err := yaml.NodeToValue(node, v.Addr().Interface(), yaml.DisallowUnknownField()); err != nil {
		v.Set(reflect.Zero(t))
		return []*Error{valueError(file, node, t, path, err)}
	}
	return nil
}

// valueError says what is wrong with a value: for a value of the wrong
// shape, what the key wants and what it got.
func valueError(file string, node ast.Node, t reflect.Type, path string, err error) *Error {
	e := &Error{File: file, Line: lineOfNode(node), Key: strings.TrimPrefix(path, "$.")}
	var te interface{ GetMessage() string }
	msg := err.Error()
	if errors.As(err, &te) {
		msg = te.GetMessage()
	}
	if typeErr.MatchString(msg) || strings.Contains(msg, " was used where ") || strings.Contains(msg, "expected") {
		e.Msg = fmt.Sprintf("want %s, got %s", describeType(t), describeNode(node))
		return e
	}
	e.Msg = strings.Replace(msg, "unknown field", "unknown key", 1)
	return e
}

// describeType says in job-file words what a Go type accepts.
func describeType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Duration]():
		return "a duration (e.g. 15m, 90s)"
	case reflect.TypeFor[Size]():
		return "a size (e.g. 10GiB, 500MB)"
	case reflect.TypeFor[Engine]():
		names := strings.Join(engineKinds.names(), ", ")
		return fmt.Sprintf("an engine name (%s) or {NAME: {options}}", names)
	case reflect.TypeFor[yaml.MapSlice]():
		return "a mapping"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return describeType(t.Elem())
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return wantType(t.Kind().String())
}

// describeNode names what a value is: the scalar as written, or its shape.
func describeNode(n ast.Node) string {
	switch n.(type) {
	case *ast.SequenceNode:
		return "a list"
	case ast.MapNode:
		return "a mapping"
	}
	return fmt.Sprintf("%q", n.GetToken().Value)
}

// ownDecoder reports whether t (or *t) has its own UnmarshalYAML.
func ownDecoder(t reflect.Type) bool {
	type unmarshaler interface {
		UnmarshalYAML(func(any) error) error
	}
	u := reflect.TypeFor[unmarshaler]()
	return t.Implements(u) || reflect.PointerTo(t).Implements(u) || t == reflect.TypeFor[yaml.MapSlice]()
}

// isHolder reports whether t is a source or sink block.
func isHolder(t reflect.Type) bool { return reflect.PointerTo(t).Implements(reflect.TypeFor[holder]()) }

// fieldByTag returns the field of struct v whose yaml tag is key, looking
// into inline fields.
func fieldByTag(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" && f.Type.Kind() == reflect.Struct {
			if fv, ok := fieldByTag(v.Field(i), key); ok {
				return fv, true
			}
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		if name == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func isNull(n ast.Node) bool {
	_, ok := n.(*ast.NullNode)
	return ok
}

func lineOfNode(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}
