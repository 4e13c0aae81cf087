package crawler

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// parquetMagic opens and closes every Parquet file.
var parquetMagic = []byte("PAR1")

// parquetFooterSpan is where a Parquet file's footer is: the 8 bytes at
// the end hold its length and the magic.
func parquetFooterSpan(tail []byte, size int64) (off, n int64, err error) {
	if len(tail) != 8 || !bytes.Equal(tail[4:], parquetMagic) {
		return 0, 0, errors.New("starts like Parquet but does not end with its magic PAR1 (truncated or still being written?)")
	}
	n = int64(binary.LittleEndian.Uint32(tail[:4]))
	off = size - 8 - n
	if off < 4 {
		return 0, 0, errors.New("corrupt Parquet footer length")
	}
	return off, n, nil
}

// schemaElement is one element of a Parquet footer's flattened schema.
type schemaElement struct {
	name        string
	typ         int32 // physical type; -1 for a group
	repetition  int32 // 0 required, 1 optional, 2 repeated
	children    int32
	converted   int32 // -1: none
	scale, prec int32
	logical     logicalType
}

// logicalType is the part of a LogicalType union tidemark maps.
type logicalType struct {
	kind      int16 // the union's field id; 0: none
	scale     int32
	precision int32
	utc       bool
	unit      int16 // TimeUnit field id: 1 millis, 2 micros, 3 nanos
	bitWidth  int8
	signed    bool
}

// parquetSchema reads the columns of a Parquet footer (FileMetaData);
// footer may be cut short after the schema, which comes first.
func parquetSchema(footer []byte) (schema, error) {
	r := &thriftReader{b: footer}
	var elems []schemaElement
	err := r.eachField(func(id int16, typ byte) (bool, error) {
		if id != 2 || typ != tList {
			if id > 2 && elems != nil {
				return false, errSchemaRead
			}
			return false, nil
		}
		n, et, err := r.list()
		if err != nil || et != tStruct {
			return true, errThrift
		}
		for range n {
			e, err := readSchemaElement(r)
			if err != nil {
				return true, err
			}
			elems = append(elems, e)
		}
		return true, nil
	})
	if err != nil && !errors.Is(err, errSchemaRead) {
		if elems == nil {
			return nil, fmt.Errorf("reading the Parquet footer's schema: %w (a schema larger than sample_bytes?)", err)
		}
		if !errors.Is(err, errThrift) {
			return nil, err
		}
	}
	if len(elems) == 0 {
		return nil, errors.New("the Parquet footer has no schema")
	}
	pos := 1
	root := elems[0]
	var s schema
	for range root.children {
		name, t, err := parquetNode(elems, &pos)
		if err != nil {
			return nil, err
		}
		s = append(s, column{Name: name, Type: t, Known: true})
	}
	return s, nil
}

// errSchemaRead stops reading a footer once its schema is read.
var errSchemaRead = errors.New("schema read")

func readSchemaElement(r *thriftReader) (schemaElement, error) {
	e := schemaElement{typ: -1, converted: -1}
	err := r.eachField(func(id int16, typ byte) (bool, error) {
		var err error
		switch {
		case id == 1 && typ == tI32:
			e.typ, err = r.i32()
		case id == 3 && typ == tI32:
			e.repetition, err = r.i32()
		case id == 4 && typ == tBinary:
			var b []byte
			b, err = r.binary()
			e.name = string(b)
		case id == 5 && typ == tI32:
			e.children, err = r.i32()
		case id == 6 && typ == tI32:
			e.converted, err = r.i32()
		case id == 7 && typ == tI32:
			e.scale, err = r.i32()
		case id == 8 && typ == tI32:
			e.prec, err = r.i32()
		case id == 10 && typ == tStruct:
			e.logical, err = readLogical(r)
		default:
			return false, nil
		}
		return true, err
	})
	return e, err
}

func readLogical(r *thriftReader) (logicalType, error) {
	var l logicalType
	err := r.eachField(func(id int16, typ byte) (bool, error) {
		if typ != tStruct {
			return false, nil
		}
		l.kind = id
		return true, r.eachField(func(fid int16, ft byte) (bool, error) {
			var err error
			switch {
			case id == 5 && fid == 1 && ft == tI32:
				l.scale, err = r.i32()
			case id == 5 && fid == 2 && ft == tI32:
				l.precision, err = r.i32()
			case (id == 7 || id == 8) && fid == 1:
				l.utc = ft == tTrue
				return ft == tTrue || ft == tFalse, nil
			case (id == 7 || id == 8) && fid == 2 && ft == tStruct:
				err = r.eachField(func(uid int16, _ byte) (bool, error) { l.unit = uid; return false, nil })
			case id == 10 && fid == 1 && ft == tByte:
				var b byte
				b, err = r.byte1()
				l.bitWidth = int8(b)
			case id == 10 && fid == 2:
				l.signed = ft == tTrue
				return ft == tTrue || ft == tFalse, nil
			default:
				return false, nil
			}
			return true, err
		})
	})
	return l, err
}

// parquetNode maps the schema element at *pos (and its children) to a
// column name and type.
func parquetNode(elems []schemaElement, pos *int) (string, bookmark.Type, error) {
	if *pos >= len(elems) {
		return "", bookmark.Type{}, errThrift
	}
	e := elems[*pos]
	*pos++
	if e.typ >= 0 && e.children == 0 {
		t := parquetLeaf(e)
		if e.repetition == 2 {
			t = bookmark.ListOf(t)
		}
		return e.name, t, nil
	}
	var kids []bookmark.Field
	var kidElems []schemaElement
	for range e.children {
		kidElems = append(kidElems, elemAt(elems, *pos))
		name, t, err := parquetNode(elems, pos)
		if err != nil {
			return "", bookmark.Type{}, err
		}
		kids = append(kids, bookmark.Field{Name: name, Type: t})
	}
	var t bookmark.Type
	switch {
	case (e.converted == 3 || e.logical.kind == 3) && len(kids) == 1:
		// LIST: group { repeated group list { element } }, or the legacy
		// two-level forms, whose repeated child is the element itself.
		inner := kids[0].Type
		if kidElems[0].repetition == 2 && inner.Kind == bookmark.List {
			inner = *inner.Elem
		}
		if inner.Kind == bookmark.Struct && len(inner.Fields) == 1 && kidElems[0].name != "array" {
			inner = inner.Fields[0].Type
		}
		t = bookmark.ListOf(inner)
	case (e.converted == 1 || e.converted == 2 || e.logical.kind == 2) && len(kids) == 1:
		// MAP: group { repeated group key_value { key; value } }.
		kv := kids[0].Type
		if kv.Kind == bookmark.List {
			kv = *kv.Elem
		}
		if kv.Kind != bookmark.Struct || len(kv.Fields) != 2 {
			return "", bookmark.Type{}, fmt.Errorf("map %q of the Parquet schema has no key and value", e.name)
		}
		t = bookmark.MapOf(kv.Fields[0].Type, kv.Fields[1].Type)
	default:
		t = bookmark.StructOf(kids...)
	}
	if e.repetition == 2 {
		t = bookmark.ListOf(t)
	}
	return e.name, t, nil
}

func elemAt(elems []schemaElement, i int) schemaElement {
	if i < len(elems) {
		return elems[i]
	}
	return schemaElement{}
}

// parquetLeaf maps a primitive column: by its logical type, else its
// converted type, else its physical type.
func parquetLeaf(e schemaElement) bookmark.Type {
	l := e.logical
	switch l.kind {
	case 1, 4: // STRING, ENUM
		return varchar
	case 5:
		return bookmark.DecimalOf(int(l.precision), int(l.scale))
	case 6:
		return bookmark.Scalar(bookmark.Date)
	case 7:
		if l.utc {
			return bookmark.Scalar(bookmark.TimeTZ)
		}
		return bookmark.Scalar(bookmark.Time)
	case 8:
		switch {
		case l.utc:
			return timestampTZ
		case l.unit == 3:
			return bookmark.Scalar(bookmark.TimestampNS)
		}
		return bookmark.Scalar(bookmark.Timestamp)
	case 10:
		k := map[int8]bookmark.Kind{8: bookmark.TinyInt, 16: bookmark.SmallInt, 32: bookmark.Integer, 64: bookmark.BigInt}
		if !l.signed {
			k = map[int8]bookmark.Kind{8: bookmark.UTinyInt, 16: bookmark.USmallInt, 32: bookmark.UInteger, 64: bookmark.UBigInt}
		}
		if kind, ok := k[l.bitWidth]; ok {
			return bookmark.Scalar(kind)
		}
	case 12:
		return bookmark.Scalar(bookmark.JSON)
	case 13:
		return bookmark.Scalar(bookmark.Blob)
	case 14:
		return bookmark.Scalar(bookmark.UUID)
	}
	switch e.converted {
	case 0, 4: // UTF8, ENUM
		return varchar
	case 5:
		return bookmark.DecimalOf(int(e.prec), int(e.scale))
	case 6:
		return bookmark.Scalar(bookmark.Date)
	case 7, 8:
		return bookmark.Scalar(bookmark.Time)
	case 9, 10:
		return bookmark.Scalar(bookmark.Timestamp)
	case 11, 12, 13, 14:
		return bookmark.Scalar([]bookmark.Kind{bookmark.UTinyInt, bookmark.USmallInt, bookmark.UInteger, bookmark.UBigInt}[e.converted-11])
	case 15, 16, 17, 18:
		return bookmark.Scalar([]bookmark.Kind{bookmark.TinyInt, bookmark.SmallInt, bookmark.Integer, bookmark.BigInt}[e.converted-15])
	case 19:
		return bookmark.Scalar(bookmark.JSON)
	case 20:
		return bookmark.Scalar(bookmark.Blob)
	case 21:
		return bookmark.Scalar(bookmark.Interval)
	}
	switch e.typ {
	case 0:
		return bookmark.Scalar(bookmark.Boolean)
	case 1:
		return bookmark.Scalar(bookmark.Integer)
	case 2:
		return bigint
	case 3:
		return bookmark.Scalar(bookmark.Timestamp) // INT96: the legacy timestamp
	case 4:
		return bookmark.Scalar(bookmark.Float)
	case 5:
		return double
	}
	return bookmark.Scalar(bookmark.Blob)
}
