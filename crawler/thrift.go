package crawler

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A reader of Thrift's compact protocol, just enough for a Parquet
// footer's schema: structs read field by field, fields tidemark does not
// need skipped whatever their type.

// Compact protocol types.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

var errThrift = errors.New("corrupt Parquet footer")

type thriftReader struct {
	b     []byte
	depth int
}

func (r *thriftReader) byte1() (byte, error) {
	if len(r.b) == 0 {
		return 0, errThrift
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, nil
}

func (r *thriftReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, errThrift
	}
	r.b = r.b[n:]
	return v, nil
}

// int reads a zigzag varint (i16, i32, i64).
func (r *thriftReader) int() (int64, error) {
	u, err := r.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

func (r *thriftReader) binary() ([]byte, error) {
	n, err := r.uvarint()
	if err != nil || n > uint64(len(r.b)) {
		return nil, errThrift
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v, nil
}

// field reads a field header: its id and type (tStop at the end).
func (r *thriftReader) field(last int16) (int16, byte, error) {
	c, err := r.byte1()
	if err != nil || c == tStop {
		return 0, tStop, err
	}
	typ := c & 0x0f
	if delta := int16(c >> 4); delta != 0 {
		return last + delta, typ, nil
	}
	id, err := r.int()
	return int16(id), typ, err
}

// list reads a list header: its size and element type.
func (r *thriftReader) list() (int, byte, error) {
	c, err := r.byte1()
	if err != nil {
		return 0, 0, err
	}
	n := uint64(c >> 4)
	if n == 15 {
		if n, err = r.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	if n > uint64(len(r.b)) {
		return 0, 0, errThrift
	}
	return int(n), c & 0x0f, nil
}

// skip skips one value of type typ.
func (r *thriftReader) skip(typ byte) error {
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > 64 {
		return errThrift
	}
	switch typ {
	case tTrue, tFalse:
		return nil
	case tByte:
		_, err := r.byte1()
		return err
	case tI16, tI32, tI64:
		_, err := r.int()
		return err
	case tDouble:
		if len(r.b) < 8 {
			return errThrift
		}
		r.b = r.b[8:]
		return nil
	case tBinary:
		_, err := r.binary()
		return err
	case tList, tSet:
		n, et, err := r.list()
		for i := 0; err == nil && i < n; i++ {
			if et == tTrue || et == tFalse {
				_, err = r.byte1()
				continue
			}
			err = r.skip(et)
		}
		return err
	case tMap:
		n, err := r.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := r.byte1()
		for i := uint64(0); err == nil && i < n; i++ {
			if err = r.skip(kv >> 4); err == nil {
				err = r.skip(kv & 0x0f)
			}
		}
		return err
	case tStruct:
		return r.eachField(func(int16, byte) (bool, error) { return false, nil })
	}
	return fmt.Errorf("%w: thrift type %d", errThrift, typ)
}

// eachField reads a struct: f is called with each field's id and type and
// reads the value itself (true) or has it skipped (false).
func (r *thriftReader) eachField(f func(id int16, typ byte) (bool, error)) error {
	var last int16
	for {
		id, typ, err := r.field(last)
		if err != nil {
			return err
		}
		if typ == tStop {
			return nil
		}
		last = id
		read, err := f(id, typ)
		if err != nil {
			return err
		}
		if !read {
			if err := r.skip(typ); err != nil {
				return err
			}
		}
	}
}

// i32 reads an integer field value.
func (r *thriftReader) i32() (int32, error) {
	v, err := r.int()
	return int32(v), err
}
