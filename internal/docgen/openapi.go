package docgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// OpenAPIBegin and OpenAPIEnd mark the generated section of
// docs/reference/openapi.md.
const (
	OpenAPIBegin = "<!-- BEGIN HTTP API reference: generated from serve's OpenAPI document " +
		"(go test ./serve -run TestOpenAPIReference -update); do not edit -->"
	OpenAPIEnd = "<!-- END HTTP API reference -->"
)

// schema is the part of an OpenAPI 3.0 schema object the reference shows.
type schema struct {
	Ref         string             `json:"$ref"`
	Type        string             `json:"type"`
	Format      string             `json:"format"`
	Description string             `json:"description"`
	Nullable    bool               `json:"nullable"`
	Enum        []string           `json:"enum"`
	Items       *schema            `json:"items"`
	Properties  map[string]*schema `json:"properties"`
	Required    []string           `json:"required"`
	AllOf       []*schema          `json:"allOf"`
	OneOf       []*schema          `json:"oneOf"`
	// AdditionalProperties is true, a schema, or absent.
	AdditionalProperties json.RawMessage `json:"additionalProperties"`
}

type parameter struct {
	Name        string  `json:"name"`
	In          string  `json:"in"`
	Required    bool    `json:"required"`
	Description string  `json:"description"`
	Schema      *schema `json:"schema"`
}

type media struct {
	Schema *schema `json:"schema"`
}

type response struct {
	Description string           `json:"description"`
	Content     map[string]media `json:"content"`
}

type operation struct {
	Summary     string              `json:"summary"`
	Parameters  []parameter         `json:"parameters"`
	RequestBody *response           `json:"requestBody"`
	Responses   map[string]response `json:"responses"`
	Security    []map[string]any    `json:"security"`
}

type document struct {
	Info struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	} `json:"info"`
	Paths      map[string]map[string]operation `json:"paths"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

// OpenAPIReference is an OpenAPI 3.0 document (JSON) in Markdown: each
// route with its parameters, request body and answers, in path order, then
// each schema of its components with its fields. A schema a route names
// links to its section.
func OpenAPIReference(doc []byte) (string, error) {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return "", fmt.Errorf("reading the OpenAPI document: %w", err)
	}
	var b strings.Builder
	if d.Info.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", d.Info.Description)
	}
	b.WriteString("## Routes\n\n")
	for _, path := range sortedKeys(d.Paths) {
		for _, method := range sortedKeys(d.Paths[path]) {
			writeOperation(&b, strings.ToUpper(method), path, d.Paths[path][method])
		}
	}
	b.WriteString("## Schemas\n\n")
	for _, name := range sortedKeys(d.Components.Schemas) {
		s := d.Components.Schemas[name]
		fmt.Fprintf(&b, "### %s\n\n", name)
		if s.Description != "" {
			fmt.Fprintf(&b, "%s.\n\n", strings.TrimSuffix(s.Description, "."))
		}
		if len(s.Properties) == 0 {
			fmt.Fprintf(&b, "Type: %s.\n\n", typeText(s))
			continue
		}
		b.WriteString("| Field | Type | Meaning |\n|---|---|---|\n")
		for _, f := range sortedKeys(s.Properties) {
			p := s.Properties[f]
			desc := p.Description
			if slices.Contains(s.Required, f) {
				desc = strings.TrimSuffix("always present; "+desc, "; ")
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f, cell(typeText(p)), cell(desc))
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

func writeOperation(b *strings.Builder, method, path string, op operation) {
	fmt.Fprintf(b, "### %s %s\n\n", method, path)
	if op.Summary != "" {
		fmt.Fprintf(b, "%s.\n\n", strings.TrimSuffix(op.Summary, "."))
	}
	if len(op.Security) > 0 {
		b.WriteString("Needs `Authorization: Bearer TOKEN` (the token of `serve --token-env`).\n\n")
	}
	if len(op.Parameters) > 0 {
		b.WriteString("| Parameter | In | Type | Meaning |\n|---|---|---|---|\n")
		for _, p := range op.Parameters {
			desc := p.Description
			if p.Required && p.In != "path" {
				desc = "required; " + desc
			}
			fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", p.Name, p.In, cell(typeText(p.Schema)), cell(desc))
		}
		b.WriteString("\n")
	}
	if op.RequestBody != nil {
		if m, ok := op.RequestBody.Content["application/json"]; ok {
			fmt.Fprintf(b, "Request body (JSON): %s.\n\n", typeText(m.Schema))
		}
	}
	b.WriteString("| Status | Meaning | Body (JSON) |\n|---|---|---|\n")
	for _, code := range sortedKeys(op.Responses) {
		r := op.Responses[code]
		body := ""
		if m, ok := r.Content["application/json"]; ok {
			body = typeText(m.Schema)
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", code, cell(r.Description), cell(body))
	}
	b.WriteString("\n")
}

// typeText says what a schema is in a few words: a link to a named schema,
// "array of X", or an object with its fields.
func typeText(s *schema) string {
	if s == nil {
		return "any"
	}
	var t string
	switch {
	case s.Ref != "":
		name := s.Ref[strings.LastIndex(s.Ref, "/")+1:]
		t = fmt.Sprintf("[%s](#%s)", name, strings.ToLower(name))
	case len(s.AllOf) == 1:
		t = typeText(s.AllOf[0])
	case len(s.OneOf) > 0:
		var alts []string
		for _, a := range s.OneOf {
			alts = append(alts, typeText(a))
		}
		t = strings.Join(alts, " or ")
	case s.Type == "array":
		t = "array of " + typeText(s.Items)
	case s.Type == "object" && len(s.Properties) > 0:
		var fs []string
		for _, f := range sortedKeys(s.Properties) {
			fs = append(fs, fmt.Sprintf("`%s`: %s", f, typeText(s.Properties[f])))
		}
		t = "object {" + strings.Join(fs, ", ") + "}"
	case s.Type == "object" && len(s.AdditionalProperties) > 0 && string(s.AdditionalProperties) != "true":
		var v schema
		if json.Unmarshal(s.AdditionalProperties, &v) == nil {
			t = "object of " + typeText(&v) + " by key"
		} else {
			t = "object"
		}
	case s.Type != "":
		t = s.Type
		if s.Format != "" {
			t += " (" + s.Format + ")"
		}
	default:
		t = "any"
	}
	if len(s.Enum) > 0 {
		t += ": " + strings.Join(s.Enum, ", ")
	}
	if s.Nullable {
		t += " or null"
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
