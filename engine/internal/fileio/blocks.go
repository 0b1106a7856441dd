package fileio

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
)

// BlockSize is the block of the per-block checksums of mapped data files
// (feature.SetBlockSums): 256 KiB. The first read of a row verifies the
// whole block it lies in, so smaller blocks read less to verify one row;
// the table costs 4 bytes a block (5.3 in the base64 of graphferry.json),
// so larger blocks keep it small. At 256 KiB: verifying a row first costs
// a CRC of 256 KiB (about 20 us at the several GB/s of CRC-32C, less than
// one sampled batch's gather of a few MB), and a 57 GB feature file (papers100M,
// float32 x 128) has a table of 218 K blocks, 1.2 MB of JSON, far inside
// MaxMetaBytes (64 MiB: files up to about 3 TB).
const BlockSize = 256 << 10

// PageSize is the unit of the page sums of the feature file, which the disk
// tier checks on every read: its direct reads fetch whole aligned 4 KiB
// pages anyway, so checking them costs a CRC of the bytes read (well under
// a microsecond a page) and no extra read, where a 256 KiB block costs a
// read of the whole block the first time a row in it is read. The table is
// 4 bytes a page (0.1% of the file: 56 MB for papers100M's 57 GB), too
// large for graphferry.json: it is a file of its own beside the data
// (PagesSuffix), covered by graphferry.json's sums.
const PageSize = 4096

// PagesSuffix names the page sums file of a data file: feat.bin's is
// feat.bin.pages.
const PagesSuffix = ".pages"

// Blocks is the "blocks" entry of graphferry.json: the block size and, per
// mapped data file, the CRC-32C of each block as little-endian uint32s in
// standard base64; and, per data file the disk tier reads (the feature
// file), the name of its page sums file (SumPages) and their page size.
type Blocks struct {
	Size     int               `json:"size"`
	Files    map[string]string `json:"files"`
	Pages    map[string]string `json:"pages,omitempty"`
	PageSize int               `json:"page_size,omitempty"`
}

// SumBlocks returns the base64 block sums of data (see Blocks).
func SumBlocks(data []byte, size int) (string, error) {
	raw, err := sumChunks(data, size)
	return base64.StdEncoding.EncodeToString(raw), err
}

// sumChunks returns the CRC-32C of each size bytes of data (the last chunk
// may be short) as little-endian uint32s.
func sumChunks(data []byte, size int) ([]byte, error) {
	n := (len(data) + size - 1) / size
	raw := make([]byte, 4*n)
	err := feature.Guard(func() {
		for i := range n {
			crc := crc32.Checksum(data[i*size:min((i+1)*size, len(data))], castagnoli)
			binary.LittleEndian.PutUint32(raw[4*i:], crc)
		}
	})
	return raw, err
}

// decodeSums reads little-endian uint32s (len(raw) a multiple of 4).
func decodeSums(raw []byte) []uint32 {
	sums := make([]uint32, len(raw)/4)
	for i := range sums {
		sums[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return sums
}

// SumFilePages maps the file at path and returns the CRC-32C of each size
// bytes of it (the last page may be short), little-endian uint32s: the
// content of its page sums file.
func SumFilePages(path string, size int) ([]byte, error) {
	data, release, err := MapFile(path)
	if err != nil {
		return nil, err
	}
	defer release()
	return sumChunks(data, size)
}

// DecodePageSums returns the sums of a page sums file's content raw, for a
// data file of dataLen bytes in pages of size bytes, named record in
// messages; a content of the wrong length is an error wrapping errs.ErrIO.
func DecodePageSums(raw []byte, dataLen int64, size int, record string) ([]uint32, error) {
	if size < 512 || size&(size-1) != 0 {
		return nil, fmt.Errorf("dataset: %s: page size %d is not a power of two >= 512 (%w)", record, size, errs.ErrIO)
	}
	n := (dataLen + int64(size) - 1) / int64(size)
	if int64(len(raw)) != 4*n {
		return nil, fmt.Errorf("dataset: %s is %d bytes, want %d (4 per %d-byte page of %d bytes) (%w)", record, len(raw), 4*n, size, dataLen, errs.ErrIO)
	}
	return decodeSums(raw), nil
}

// SumFileBlocks maps the file at path and returns its block sums.
func SumFileBlocks(path string, size int) (string, error) {
	data, release, err := MapFile(path)
	if err != nil {
		return "", err
	}
	defer release()
	return SumBlocks(data, size)
}

// AttachBlocks decodes the block sums b records for name and attaches them
// to data, the mapping of that file from byte base on (see
// feature.SetBlockSums); a file b does not list is left as it is.
func (b *Blocks) AttachBlocks(name string, data []byte, base int, record string) error {
	if b == nil {
		return nil
	}
	enc, ok := b.Files[name]
	if !ok {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(raw)%4 != 0 {
		return fmt.Errorf("dataset: %s: the block sums of %s are not base64 of 4-byte sums (%w)", record, filepath.Base(name), errs.ErrIO)
	}
	if err := feature.SetBlockSums(data, base, b.Size, decodeSums(raw), record); err != nil {
		return fmt.Errorf("dataset: %s: %s: %w (%w)", record, name, err, errs.ErrIO)
	}
	return nil
}
