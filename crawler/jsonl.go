package crawler

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// sniffJSONLines classifies text as JSON Lines: every complete non-empty
// line is one JSON object. The columns are the union of the objects' keys
// in the order first seen; numbers are BIGINT when integral and in range,
// else DOUBLE; strings are DATE, TIMESTAMP or VARCHAR (a string of digits
// stays text); objects are STRUCTs, arrays ARRAYs; null says nothing.
func sniffJSONLines(text []byte, complete bool) (shape, error) {
	if !complete {
		i := bytes.LastIndexByte(text, '\n')
		if i < 0 {
			return shape{}, errors.New("no complete line within sample_bytes")
		}
		text = text[:i+1]
	}
	text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))
	var s schema
	idx := map[string]int{}
	lines := 0
	for line := range bytes.Lines(text) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' {
			return shape{}, errors.New("a line is not a JSON object")
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var obj orderedObject
		if err := d.Decode(&obj); err != nil {
			return shape{}, errors.New("a line is not a JSON object")
		}
		if d.More() {
			return shape{}, errors.New("a line holds more than one JSON value")
		}
		lines++
		for _, kv := range obj {
			i, ok := idx[kv.key]
			if !ok {
				i = len(s)
				idx[kv.key] = i
				s = append(s, column{Name: kv.key})
			}
			if t, ok := jsonType(kv.value); ok {
				s.observe(i, t)
			}
		}
	}
	if lines == 0 {
		return shape{}, errors.New("no JSON object")
	}
	return shape{Format: "json", Schema: s}, nil
}

// jsonType is the type of a decoded JSON value; false for null.
func jsonType(v any) (bookmark.Type, bool) {
	switch x := v.(type) {
	case nil:
		return bookmark.Type{}, false
	case bool:
		return bookmark.Scalar(bookmark.Boolean), true
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return bigint, true
		}
		return double, true
	case string:
		return textType(x, false)
	case []any:
		var elem bookmark.Type
		known := false
		for _, e := range x {
			if t, ok := jsonType(e); ok {
				if known {
					elem = Widen(elem, t)
				} else {
					elem, known = t, true
				}
			}
		}
		if !known {
			elem = varchar
		}
		return bookmark.ListOf(elem), true
	case orderedObject:
		fields := make([]bookmark.Field, 0, len(x))
		for _, kv := range x {
			t, ok := jsonType(kv.value)
			if !ok {
				t = varchar
			}
			fields = append(fields, bookmark.Field{Name: kv.key, Type: t})
		}
		return bookmark.StructOf(fields...), true
	}
	return varchar, true
}

// orderedObject is a JSON object with its keys in the order written.
type orderedObject []keyValue

type keyValue struct {
	key   string
	value any
}

// UnmarshalJSON reads an object key by key, nested objects as
// orderedObjects too.
func (o *orderedObject) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		return err
	}
	obj, ok := v.(orderedObject)
	if !ok {
		return errors.New("not a JSON object")
	}
	*o = obj
	return nil
}

// decodeOrdered decodes one value from d, objects as orderedObjects.
func decodeOrdered(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := orderedObject{}
			seen := map[string]bool{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				if seen[k] {
					continue
				}
				seen[k] = true
				obj = append(obj, keyValue{k, v})
			}
			_, err := d.Token()
			return obj, err
		case '[':
			var arr []any
			for d.More() {
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := d.Token()
			if arr == nil {
				arr = []any{}
			}
			return arr, err
		}
	}
	return tok, nil
}
