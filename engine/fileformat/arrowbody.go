package fileformat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/apache/arrow/go/v14/arrow"
	"github.com/klauspost/compress/zstd"
)

// The Arrow Go reader (v14) trusts two things in a record batch body that a
// damaged file can get wrong without any error:
//
//   - A ZSTD-compressed buffer is decoded by reading exactly its declared
//     uncompressed size, so the frame's checksum at its end is never read:
//     a byte flipped inside a literal gives different values silently.
//   - A column whose field node says null_count = 0 has its validity bitmap
//     skipped, so nulls whose count was lost read as whatever their value
//     slots hold (0: node 0 for an id column).
//
// checkBodies therefore walks every record batch of a file itself: it
// decodes each ZSTD buffer completely (klauspost's decoder checks the frame
// checksum and that the frame ends where the buffer does) and checks that
// the validity bitmap of every node that claims no nulls has every bit set.

// ipcBlock is a footer Block: where a message and its body lie in the file.
type ipcBlock struct {
	offset  int64
	metaLen int64
	bodyLen int64
}

// Arrow flatbuffer enum values used below.
const (
	msgRecordBatch = 3 // MessageHeader.RecordBatch
	codecLZ4Frame  = 0 // CompressionType.LZ4_FRAME
	codecZSTD      = 1 // CompressionType.ZSTD
)

func (b flatBuf) i64(pos int) (int64, error) {
	if pos < 0 || pos > len(b)-8 {
		return 0, errFlatbuf
	}
	return int64(binary.LittleEndian.Uint64(b[pos:])), nil
}

// footerBlocks returns the record batch blocks of an Arrow IPC file image
// whose footer checkArrowFooter accepted.
func footerBlocks(file []byte) ([]ipcBlock, error) {
	const magic = "ARROW1"
	end := len(file) - len(magic) - 4
	size := int(binary.LittleEndian.Uint32(file[end:]))
	fb := flatBuf(file[end-size : end])
	root, err := fb.offset(0)
	if err != nil {
		return nil, err
	}
	footer, err := fb.table(root)
	if err != nil {
		return nil, err
	}
	pos, n, err := fb.vector(footer, 3, 24)
	if err != nil {
		return nil, err
	}
	blocks := make([]ipcBlock, n)
	for i := range blocks {
		p := pos + 24*i
		off, _ := fb.i64(p)
		meta, _ := fb.u32(p + 8)
		body, _ := fb.i64(p + 16)
		b := ipcBlock{offset: off, metaLen: int64(int32(meta)), bodyLen: body}
		if b.offset < 0 || b.metaLen < 8 || b.bodyLen < 0 || b.offset > int64(len(file)) ||
			b.metaLen > int64(len(file))-b.offset || b.bodyLen > int64(len(file))-b.offset-b.metaLen {
			return nil, fmt.Errorf("record batch %d lies outside the file (offset %d, metadata %d and body %d bytes, file %d bytes)",
				i, b.offset, b.metaLen, b.bodyLen, len(file))
		}
		blocks[i] = b
	}
	return blocks, nil
}

// checkBodies checks the bodies of every record batch of file (see above),
// in parallel; limit caps any buffer's uncompressed size.
func checkBodies(file []byte, schema *arrow.Schema, limit int) error {
	blocks, err := footerBlocks(file)
	if err != nil {
		return err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(uint64(limit)), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		return err
	}
	defer dec.Close()
	errs := make([]error, len(blocks))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(blocks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []byte
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= len(blocks) {
					return
				}
				errs[j] = CatchPanic(func() error { return checkBody(file, blocks[j], schema, dec, limit, &scratch) })
				if errs[j] != nil {
					errs[j] = fmt.Errorf("record batch %d: %w", j, errs[j])
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// bodyWalk is the state of checking one record batch body.
type bodyWalk struct {
	body            []byte
	nodes, buffers  int // positions of the vectors in meta
	nNodes, nBufs   int
	meta            flatBuf
	metaOff         int64 // where meta starts in the file
	compressed      bool
	length          int64 // the record batch's row count
	dec             *zstd.Decoder
	scratch         *[]byte // what buffer decodes into, reused
	limit           int
	nextNode, nextB int
}

// openBatch parses the message of a record batch block.
func openBatch(file []byte, blk ipcBlock) (*bodyWalk, error) {
	msg := file[blk.offset : blk.offset+blk.metaLen]
	prefix := 4 // before Arrow 0.15: a bare length
	if binary.LittleEndian.Uint32(msg) == 0xFFFFFFFF {
		prefix = 8
	}
	meta := flatBuf(msg[prefix:])
	root, err := meta.offset(0)
	if err != nil {
		return nil, err
	}
	m, err := meta.table(root)
	if err != nil {
		return nil, err
	}
	// Message: 0 version, 1 header_type, 2 header, 3 bodyLength.
	ht, err := meta.fieldSized(m, 1, 1)
	if err != nil {
		return nil, err
	}
	if ht == 0 || meta[ht] != msgRecordBatch {
		return nil, errors.New("block is not a record batch message")
	}
	w := &bodyWalk{
		body:    file[blk.offset+blk.metaLen : blk.offset+blk.metaLen+blk.bodyLen],
		meta:    meta,
		metaOff: blk.offset + int64(prefix),
	}
	// RecordBatch: 0 length, 1 nodes [FieldNode], 2 buffers [Buffer],
	// 3 compression (BodyCompression: 0 codec, 1 method).
	err = meta.subTable(m, 2, func(rb fbTable) error {
		p, err := meta.fieldSized(rb, 0, 8)
		if err != nil {
			return err
		}
		if p != 0 {
			w.length, _ = meta.i64(p)
		}
		if w.nodes, w.nNodes, err = meta.vector(rb, 1, 16); err != nil {
			return err
		}
		if w.buffers, w.nBufs, err = meta.vector(rb, 2, 16); err != nil {
			return err
		}
		return meta.subTable(rb, 3, func(c fbTable) error {
			codec := byte(codecLZ4Frame) // the flatbuffer default
			p, err := meta.fieldSized(c, 0, 1)
			if err != nil {
				return err
			}
			if p != 0 {
				codec = meta[p]
			}
			switch codec {
			case codecZSTD:
				w.compressed = true
			case codecLZ4Frame:
				// The writers omit LZ4 frame checksums: nothing to check.
			default:
				return fmt.Errorf("unknown compression codec %d", codec)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// batchRows returns the row count of each record batch of an Arrow IPC
// file image whose footer checkArrowFooter accepted, from the batches'
// messages (nothing is decoded).
func batchRows(file []byte) ([]int64, error) {
	blocks, err := footerBlocks(file)
	if err != nil {
		return nil, err
	}
	rows := make([]int64, len(blocks))
	for i, blk := range blocks {
		w, err := openBatch(file, blk)
		if err != nil {
			return nil, fmt.Errorf("record batch %d: %w", i, err)
		}
		if w.length < 0 {
			return nil, fmt.Errorf("record batch %d: length %d is negative", i, w.length)
		}
		rows[i] = w.length
	}
	return rows, nil
}

// checkBody checks one record batch.
func checkBody(file []byte, blk ipcBlock, schema *arrow.Schema, dec *zstd.Decoder, limit int, scratch *[]byte) error {
	w, err := openBatch(file, blk)
	if err != nil {
		return err
	}
	w.dec, w.limit, w.scratch = dec, limit, scratch
	// Every buffer: in bounds, and for ZSTD a complete frame with a good
	// checksum.
	for j := range w.nBufs {
		if _, err := w.buffer(j); err != nil {
			return fmt.Errorf("buffer %d: %w", j, err)
		}
	}
	// Validity bitmaps of the nodes that claim no nulls.
	for _, f := range schema.Fields() {
		ok, err := w.field(f.Type, f.Name, 0)
		if err != nil {
			return err
		}
		if !ok {
			break // a layout we do not map: later fields are not checked
		}
	}
	return nil
}

// buffer returns buffer j of the body, decompressed.
func (w *bodyWalk) buffer(j int) ([]byte, error) {
	if j >= w.nBufs {
		return nil, errors.New("more buffers used than listed")
	}
	off, _ := w.meta.i64(w.buffers + 16*j)
	n, _ := w.meta.i64(w.buffers + 16*j + 8)
	if off < 0 || n < 0 || off > int64(len(w.body)) || n > int64(len(w.body))-off {
		return nil, fmt.Errorf("offset %d and length %d lie outside the %d-byte body", off, n, len(w.body))
	}
	raw := w.body[off : off+n]
	if !w.compressed || n == 0 {
		return raw, nil
	}
	if n < 8 {
		return nil, fmt.Errorf("compressed buffer of %d bytes has no length prefix", n)
	}
	size := int64(binary.LittleEndian.Uint64(raw))
	if size == -1 { // stored uncompressed
		return raw[8:], nil
	}
	if size < 0 || size > int64(w.limit) {
		return nil, fmt.Errorf("uncompressed size %d exceeds the sanity limit %d for this file", size, w.limit)
	}
	buf := (*w.scratch)[:0]
	if int64(cap(buf)) < size {
		buf = make([]byte, 0, size)
	}
	out, err := w.dec.DecodeAll(raw[8:], buf)
	*w.scratch = out[:0] // the next buffer's: each is used and dropped in turn
	if err != nil {
		return nil, fmt.Errorf("corrupt ZSTD data: %w", err)
	}
	if int64(len(out)) != size {
		return nil, fmt.Errorf("ZSTD data decodes to %d bytes, its prefix says %d", len(out), size)
	}
	return out, nil
}

// node returns the next field node: its length and null count.
func (w *bodyWalk) node() (int64, int64, error) {
	if w.nextNode >= w.nNodes {
		return 0, 0, errors.New("more field nodes used than listed")
	}
	p := w.nodes + 16*w.nextNode
	w.nextNode++
	n, _ := w.meta.i64(p)
	nulls, _ := w.meta.i64(p + 8)
	return n, nulls, nil
}

// field checks the validity bitmap of a field of type dt (and of its
// children) and moves past its nodes and buffers. It returns false for a
// layout it does not know, after which the walk cannot go on.
func (w *bodyWalk) field(dt arrow.DataType, name string, depth int) (bool, error) {
	if depth > 64 {
		return false, nil
	}
	bitmapThen := func(more int, children ...arrow.DataType) (bool, error) {
		n, nulls, err := w.node()
		if err != nil {
			return false, err
		}
		bi := w.nextB
		w.nextB += 1 + more
		if nulls == 0 {
			bm, err := w.buffer(bi)
			if err != nil {
				return false, fmt.Errorf("column %q: validity buffer: %w", name, err)
			}
			if len(bm) > 0 {
				if int64(len(bm))*8 < n {
					return false, fmt.Errorf("column %q: validity bitmap of %d bytes is too short for %d rows", name, len(bm), n)
				}
				for i := int64(0); i < n; i++ {
					if i&7 == 0 && i+8 <= n && bm[i>>3] == 0xff {
						i += 7
						continue
					}
					if bm[i>>3]&(1<<(i&7)) == 0 {
						return false, fmt.Errorf("column %q says it has no nulls, but its validity bitmap marks row %d (of the record batch) null", name, i)
					}
				}
			}
		}
		for _, c := range children {
			ok, err := w.field(c, name, depth+1)
			if !ok || err != nil {
				return ok, err
			}
		}
		return true, nil
	}
	switch dt := dt.(type) {
	case *arrow.NullType:
		_, _, err := w.node()
		return err == nil, err
	case *arrow.BinaryType, *arrow.StringType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		return bitmapThen(2)
	case *arrow.ListType:
		return bitmapThen(1, dt.Elem())
	case *arrow.LargeListType:
		return bitmapThen(1, dt.Elem())
	case *arrow.MapType:
		return bitmapThen(1, dt.Elem())
	case *arrow.FixedSizeListType:
		return bitmapThen(0, dt.Elem())
	case *arrow.StructType:
		children := make([]arrow.DataType, len(dt.Fields()))
		for i := range children {
			children[i] = dt.Field(i).Type
		}
		return bitmapThen(0, children...)
	case *arrow.DictionaryType:
		return bitmapThen(1)
	case arrow.ExtensionType:
		return w.field(dt.StorageType(), name, depth+1)
	case arrow.FixedWidthDataType: // primitives, bool, decimals, temporals, fixed-size binary
		return bitmapThen(1)
	}
	return false, nil
}
