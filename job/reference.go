package job

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// The job-file reference (docs/reference/job-file.md) is generated from the same
// definitions the decoder and the validators use: each key from its yaml
// tag, its type from the Go type (in the words of the type errors), its
// doc from its doc tag, and its default from what ApplyDefaults sets on an
// empty block. A test compares the page with Reference.

// ReferenceBegin and ReferenceEnd mark the generated section of the page.
const (
	ReferenceBegin = "<!-- BEGIN job-file reference: generated from the components' configs " +
		"(go test ./all -run TestJobFileReference -update); do not edit -->"
	ReferenceEnd = "<!-- END job-file reference -->"
)

// Reference is the job-file reference in Markdown: the envelope's keys,
// then each registered engine, source and sink kind's.
func Reference() string {
	var b strings.Builder
	s := &Spec{}
	s.ApplyDefaults()
	b.WriteString("#### The job\n\n")
	writeTable(&b, tableRows(reflect.ValueOf(s).Elem(), ""))
	kinds := func(title, intro string, ks []Kind, env any) {
		fmt.Fprintf(&b, "\n#### %s\n\n%s\n", title, intro)
		for _, k := range ks {
			c := k.New()
			c.ApplyDefaults(s)
			how := ""
			switch {
			case env == nil:
				how = fmt.Sprintf(": `engine: %s` or `engine: {%s: {...}}`", k.Name, k.Name)
			case k.Marker == "":
				how = ", the default kind"
			}
			fmt.Fprintf(&b, "\n`%s`: %s%s.\n\n", k.Name, k.Noun, how)
			var rows []string
			if env != nil {
				rows = append(rows, tableRows(reflect.ValueOf(env).Elem(), "")...)
			}
			rows = append(rows, tableRows(reflect.ValueOf(c).Elem(), "")...)
			writeTable(&b, rows)
		}
	}
	kinds("Engines", "The engine's keys go under its name.", EngineKinds(), nil)
	kinds("Sources", "Each item of `sources:` is one of these kinds, told by its keys.", SourceKinds(), &Source{})
	kinds("Sinks", "Each item of `sinks:` is one of these kinds, told by its keys.", SinkKinds(), &Sink{})
	return b.String()
}

func writeTable(b *strings.Builder, rows []string) {
	b.WriteString("| key | type | default | |\n|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
}

// tableRows are the rows of struct v's documented keys; a nested struct
// of keys (io:) is listed key by key under its name.
func tableRows(v reflect.Value, prefix string) []string {
	var rows []string
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		doc, ok := f.Tag.Lookup("doc")
		if key == "" || key == "-" || !ok {
			continue
		}
		if f.Type.Kind() == reflect.Struct && !ownDecoder(f.Type) {
			rows = append(rows, tableRows(v.Field(i), prefix+key+".")...)
			continue
		}
		rows = append(rows, fmt.Sprintf("| `%s%s` | %s | %s | %s |", prefix, key, typeWords(f.Type), defaultOf(v.Field(i)),
			strings.ReplaceAll(doc, "|", "\\|")))
	}
	return rows
}

// typeWords says what a key takes, in the words of the type errors.
func typeWords(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[[]Source](), t == reflect.TypeFor[[]Sink]():
		return "a list of mappings"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "a list of text"
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String:
		return "a mapping of text"
	}
	return strings.ReplaceAll(describeType(t), "|", "\\|")
}

// defaultOf shows a key's value after ApplyDefaults ("" for none).
func defaultOf(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case Duration:
		if x.Duration == 0 {
			return ""
		}
		return "`" + strings.TrimSuffix(strings.TrimSuffix(x.Duration.Round(time.Second).String(), "0s"), "0m") + "`"
	case Size:
		if x.Bytes == 0 {
			return ""
		}
		return "`" + strings.ReplaceAll(humanize.IBytes(uint64(x.Bytes)), " ", "") + "`"
	case Engine:
		return "`" + x.Name + "`"
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		return defaultOf(v.Elem())
	case reflect.String:
		if v.String() == "" {
			return ""
		}
	case reflect.Int, reflect.Int64:
		if v.Int() == 0 {
			return ""
		}
	case reflect.Bool:
	default:
		return ""
	}
	return fmt.Sprintf("`%v`", v.Interface())
}

// SpliceReference returns page with the text between ReferenceBegin and
// ReferenceEnd replaced by Reference.
func SpliceReference(page []byte) ([]byte, error) {
	begin := bytes.Index(page, []byte(ReferenceBegin))
	end := bytes.Index(page, []byte(ReferenceEnd))
	if begin < 0 || end < begin {
		return nil, errors.New("the page has no job-file reference markers, or they are out of order")
	}
	var out bytes.Buffer
	out.Write(page[:begin+len(ReferenceBegin)])
	out.WriteString("\n\n" + Reference() + "\n")
	out.Write(page[end:])
	return out.Bytes(), nil
}
