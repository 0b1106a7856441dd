package fileformat

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v14/arrow/memory"
)

// The Arrow Go reader trusts the lengths stored in a file: a corrupted
// vector length in the footer makes it allocate (say) 30 GB for the schema,
// and a corrupted buffer length makes it allocate that much before reading,
// both fatal out-of-memory crashes that recover cannot catch. Before handing
// a file to it we therefore check the footer's flatbuffer structure (every
// table and vector the reader sizes allocations from lies inside the
// footer), and we read through an allocator that refuses absurd sizes.

// checkArrowFooter checks the footer of an Arrow IPC file image and returns
// the number of record batches it lists.
func checkArrowFooter(file []byte) (int, error) {
	const magic = "ARROW1"
	if len(file) < 2*len(magic)+4+2 || string(file[len(file)-len(magic):]) != magic {
		return 0, errors.New("not an Arrow IPC file (no trailing ARROW1 magic)")
	}
	end := len(file) - len(magic) - 4
	size := int64(binary.LittleEndian.Uint32(file[end:]))
	if size <= 0 || size > int64(end-8) {
		return 0, fmt.Errorf("footer length %d is inconsistent with the file size %d", size, len(file))
	}
	fb := flatBuf(file[end-int(size) : end])
	root, err := fb.offset(0)
	if err != nil {
		return 0, err
	}
	footer, err := fb.table(root)
	if err != nil {
		return 0, err
	}
	// Footer: 1 schema, 2 dictionaries [Block], 3 recordBatches [Block],
	// 4 custom_metadata [KeyValue]. A Block struct is 24 bytes.
	if err := fb.subTable(footer, 1, func(t fbTable) error { return fb.checkSchema(t) }); err != nil {
		return 0, err
	}
	if _, _, err := fb.vector(footer, 2, 24); err != nil {
		return 0, err
	}
	_, nrec, err := fb.vector(footer, 3, 24)
	if err != nil {
		return 0, err
	}
	if err := fb.checkKeyValues(footer, 4); err != nil {
		return 0, err
	}
	return nrec, nil
}

// flatBuf is a flatbuffer image with bounds-checked accessors.
type flatBuf []byte

// fbTable is a checked table: its position, vtable position and sizes.
type fbTable struct{ pos, vt, vtLen, tabLen int }

var errFlatbuf = errors.New("corrupt Arrow metadata (flatbuffer out of bounds)")

func (b flatBuf) u32(pos int) (uint32, error) {
	if pos < 0 || pos > len(b)-4 {
		return 0, errFlatbuf
	}
	return binary.LittleEndian.Uint32(b[pos:]), nil
}

func (b flatBuf) u16(pos int) (int, error) {
	if pos < 0 || pos > len(b)-2 {
		return 0, errFlatbuf
	}
	return int(binary.LittleEndian.Uint16(b[pos:])), nil
}

// offset follows the unsigned offset stored at pos.
func (b flatBuf) offset(pos int) (int, error) {
	o, err := b.u32(pos)
	if err != nil {
		return 0, err
	}
	if int64(pos)+int64(o) >= int64(len(b)) {
		return 0, errFlatbuf
	}
	return pos + int(o), nil
}

// table checks the table at pos and its vtable.
func (b flatBuf) table(pos int) (fbTable, error) {
	so, err := b.u32(pos)
	if err != nil {
		return fbTable{}, err
	}
	vt := int64(pos) - int64(int32(so))
	if vt < 0 || vt > int64(len(b)-4) {
		return fbTable{}, errFlatbuf
	}
	t := fbTable{pos: pos, vt: int(vt)}
	t.vtLen, _ = b.u16(t.vt)
	t.tabLen, _ = b.u16(t.vt + 2)
	if t.vtLen < 4 || t.vt+t.vtLen > len(b) || t.tabLen < 4 || pos+t.tabLen > len(b) {
		return fbTable{}, errFlatbuf
	}
	return t, nil
}

// field returns the position of the offset-valued field slot in t, or 0 if
// absent.
func (b flatBuf) field(t fbTable, slot int) (int, error) { return b.fieldSized(t, slot, 4) }

// fieldSized returns the position of field slot (size bytes) in t, or 0.
func (b flatBuf) fieldSized(t fbTable, slot, size int) (int, error) {
	if 4+2*slot+2 > t.vtLen {
		return 0, nil
	}
	off, _ := b.u16(t.vt + 4 + 2*slot)
	if off == 0 {
		return 0, nil
	}
	if off+size > t.tabLen {
		return 0, errFlatbuf
	}
	return t.pos + off, nil
}

// vector checks the vector in field slot (elements of elemSize bytes) and
// returns the position of its first element and its length (0 if absent).
func (b flatBuf) vector(t fbTable, slot, elemSize int) (int, int, error) {
	p, err := b.field(t, slot)
	if err != nil || p == 0 {
		return 0, 0, err
	}
	v, err := b.offset(p)
	if err != nil {
		return 0, 0, err
	}
	n, err := b.u32(v)
	if err != nil {
		return 0, 0, err
	}
	if int64(v)+4+int64(n)*int64(elemSize) > int64(len(b)) {
		return 0, 0, errFlatbuf
	}
	return v + 4, int(n), nil
}

// subTable checks the table in field slot (if present) and runs check on it.
func (b flatBuf) subTable(t fbTable, slot int, check func(fbTable) error) error {
	p, err := b.field(t, slot)
	if err != nil || p == 0 {
		return err
	}
	q, err := b.offset(p)
	if err != nil {
		return err
	}
	sub, err := b.table(q)
	if err != nil {
		return err
	}
	return check(sub)
}

// tables checks a vector of tables in field slot and runs check on each.
func (b flatBuf) tables(t fbTable, slot int, check func(fbTable) error) error {
	v, n, err := b.vector(t, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		q, err := b.offset(v + 4*i)
		if err != nil {
			return err
		}
		sub, err := b.table(q)
		if err != nil {
			return err
		}
		if err := check(sub); err != nil {
			return err
		}
	}
	return nil
}

// checkKeyValues checks a [KeyValue] field (KeyValue: 0 key, 1 value).
func (b flatBuf) checkKeyValues(t fbTable, slot int) error {
	return b.tables(t, slot, func(kv fbTable) error {
		if _, _, err := b.vector(kv, 0, 1); err != nil {
			return err
		}
		_, _, err := b.vector(kv, 1, 1)
		return err
	})
}

// checkSchema checks a Schema: 1 fields [Field], 2 custom_metadata, 3
// features [long].
func (b flatBuf) checkSchema(s fbTable) error {
	if err := b.tables(s, 1, func(f fbTable) error { return b.checkField(f, 0) }); err != nil {
		return err
	}
	if err := b.checkKeyValues(s, 2); err != nil {
		return err
	}
	_, _, err := b.vector(s, 3, 8)
	return err
}

// checkField checks a Field: 0 name, 3 type (union table), 4 dictionary
// (DictionaryEncoding, 1 indexType), 5 children [Field], 6 custom_metadata.
func (b flatBuf) checkField(f fbTable, depth int) error {
	if depth > 64 {
		return errors.New("corrupt Arrow metadata (fields nested too deeply)")
	}
	if _, _, err := b.vector(f, 0, 1); err != nil {
		return err
	}
	// The reader sizes an allocation from one vector in a type table: the
	// typeIds of a Union (type_type 14, typeIds in slot 1). Other type
	// tables are only checked to be in bounds.
	tt, err := b.fieldSized(f, 2, 1)
	if err != nil {
		return err
	}
	isUnion := tt != 0 && b[tt] == 14
	if err := b.subTable(f, 3, func(ty fbTable) error {
		if !isUnion {
			return nil
		}
		_, _, err := b.vector(ty, 1, 4)
		return err
	}); err != nil {
		return err
	}
	if err := b.subTable(f, 4, func(d fbTable) error {
		return b.subTable(d, 1, func(fbTable) error { return nil })
	}); err != nil {
		return err
	}
	if err := b.tables(f, 5, func(c fbTable) error { return b.checkField(c, depth+1) }); err != nil {
		return err
	}
	return b.checkKeyValues(f, 6)
}

// cappedAllocator is a Go allocator that panics (caught by CatchPanic) on a
// single allocation larger than limit, so a corrupted length in a file
// cannot crash the process with an out-of-memory error.
type cappedAllocator struct {
	inner memory.Allocator
	limit int
}

func (a cappedAllocator) check(size int) {
	if size < 0 || size > a.limit {
		panic(fmt.Sprintf("buffer size %d exceeds the sanity limit %d for this file", size, a.limit))
	}
}

// Allocate implements memory.Allocator.
func (a cappedAllocator) Allocate(size int) []byte {
	a.check(size)
	return a.inner.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a cappedAllocator) Reallocate(size int, b []byte) []byte {
	a.check(size)
	return a.inner.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a cappedAllocator) Free(b []byte) { a.inner.Free(b) }
