// Package fileio holds the file plumbing that the dataset packages share
// (engine/fileformat, engine/dataset, engine/convert, engine/rankpart):
// opening regular files only, memory-mapping them with faults reported as
// errors, reading small metadata files, keeping a dataset's file names
// inside its directory, the size and CRC-32C records of files (FileSum) and
// their checks, tensor size checks, atomic writes, and refusing
// allocations larger than the machine's memory. Its errors read
// "dataset: ...", as the dataset packages' do.
//
// It imports only errs, mem, bounds (the memory limit) and feature (for
// its fault guard).
package fileio

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strings"

	"github.com/graphferry/graphferry/engine/bounds"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
)

// FileSum is the size and checksum of one dataset file, as the layouts
// record them (graphferry.json's and partition.json's "files":
// {"edges.arrow": {...}, ...}).
type FileSum struct {
	Size int64 `json:"size"`
	// CRC32C is the CRC-32C (Castagnoli) of the whole file, 8 hex digits.
	// CRC-32C: hardware-accelerated in Go's hash/crc32 on amd64 and arm64
	// (SSE4.2 / ARMv8 CRC instructions, several GB/s per core, so that a
	// full check costs about a read of the files), and it detects every
	// error burst up to 32 bits, which covers flipped bytes.
	CRC32C string `json:"crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MaxMetaBytes caps graphferry.json and meta.json (they hold counts and
// provenance, never data).
const MaxMetaBytes = 64 << 20

// CheckFileName checks that name names a file directly inside a dataset
// directory: not empty, not "." or "..", no path separator.
func CheckFileName(what, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) ||
		filepath.Base(name) != name || filepath.IsAbs(name) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("dataset: %s %q must be a plain file name in the dataset directory", what, name)
	}
	return nil
}

// Confine returns the path of the file name inside dir after checking that
// it stays inside dir: name is a plain file name and, if it is a symbolic
// link, it resolves to a file inside dir (a link to another file of the
// dataset, feat.bin -> feat.v2.bin, stays allowed; a link out of the
// directory, to a file of the right size anywhere, is refused). A missing
// file gives its plain path (opening it then reports it).
func Confine(dir, what, name string) (string, error) {
	if err := CheckFileName(what, name); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path, nil
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("dataset: %w (%w)", err, errs.ErrIO)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("dataset: %s (%s) resolves to %s, outside the dataset directory %s", what, path, real, root)
	}
	return path, nil
}

// ReadSmall reads a whole regular file of at most limit bytes.
func ReadSmall(path string, limit int64) ([]byte, error) {
	f, st, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, fmt.Errorf("dataset: %s is %d bytes, more than the %d a metadata file may have", path, st.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("dataset: %w (%w)", err, errs.ErrIO)
	}
	return data, nil
}

// SumBytes returns the FileSum of data.
func SumBytes(data []byte) (FileSum, error) { return SumBytesContext(nil, data) }

// sumChunk is how many bytes SumBytesContext sums between two looks at its
// context (a few milliseconds of CRC).
const sumChunk = 16 << 20

// SumBytesContext is SumBytes stopped early, with ctx's error, when ctx (nil:
// never) is done: checked every sumChunk bytes.
func SumBytesContext(ctx context.Context, data []byte) (FileSum, error) {
	var crc uint32
	for off := 0; ; off += sumChunk {
		if ctx != nil && ctx.Err() != nil {
			return FileSum{}, ctx.Err()
		}
		chunk := data[off:min(off+sumChunk, len(data))]
		if err := feature.Guard(func() { crc = crc32.Update(crc, castagnoli, chunk) }); err != nil {
			return FileSum{}, err
		}
		if off+sumChunk >= len(data) {
			break
		}
	}
	return FileSum{Size: int64(len(data)), CRC32C: fmt.Sprintf("%08x", crc)}, nil
}

// SumFile returns the FileSum of the file at path.
func SumFile(path string) (FileSum, error) {
	data, release, err := MapFile(path)
	if err != nil {
		return FileSum{}, err
	}
	defer release()
	s, err := SumBytes(data)
	if err != nil {
		return FileSum{}, fmt.Errorf("dataset: %s: %w", path, err)
	}
	return s, nil
}

// CheckSize compares the size of the regular file at path with the one
// record (the metadata file naming it, e.g. graphferry.json) records (a
// mismatch wraps errs.ErrIO: the file changed after it was written).
func CheckSize(path string, want FileSum, record string) error {
	f, st, err := OpenRegular(path)
	if err != nil {
		return err
	}
	f.Close()
	if st.Size() != want.Size {
		return fmt.Errorf("dataset: %s is %d bytes, %s says %d: it was truncated, extended or replaced (%w)",
			path, st.Size(), record, want.Size, errs.ErrIO)
	}
	return nil
}

// CheckSum compares the checksum of the file at path with the one record
// records.
func CheckSum(path string, want FileSum, record string) error {
	return CheckSumContext(nil, path, want, record)
}

// CheckSumContext is CheckSum stopped early, with ctx's error, when ctx
// (nil: never) is done.
func CheckSumContext(ctx context.Context, path string, want FileSum, record string) error {
	data, release, err := MapFile(path)
	if err != nil {
		return err
	}
	defer release()
	return checkSumBytes(ctx, path, data, want, record)
}

// CheckSumBytes compares the size and checksum of data, the contents of the
// file at path, with the ones record records.
func CheckSumBytes(path string, data []byte, want FileSum, record string) error {
	return checkSumBytes(nil, path, data, want, record)
}

func checkSumBytes(ctx context.Context, path string, data []byte, want FileSum, record string) error {
	got, err := SumBytesContext(ctx, data)
	if err != nil {
		if ctx != nil && ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("dataset: %s: %w", path, err)
	}
	if got.Size != want.Size {
		return fmt.Errorf("dataset: %s is %d bytes, %s says %d: it was truncated, extended or replaced (%w)",
			path, got.Size, record, want.Size, errs.ErrIO)
	}
	if !strings.EqualFold(got.CRC32C, want.CRC32C) {
		return fmt.Errorf("dataset: %s: CRC-32C is %s, %s says %s: the file is damaged or was changed (%w)",
			path, got.CRC32C, record, want.CRC32C, errs.ErrIO)
	}
	return nil
}

// CheckAlloc refuses (errs.ErrNoMem) an allocation of need bytes for what
// that the machine's memory cannot hold: Go's out-of-memory error is fatal,
// so sizes read from files are checked before they are allocated.
func CheckAlloc(need uint64, what string) error {
	total := TotalMemory()
	if total > 0 && need > total {
		return fmt.Errorf("dataset: %s needs %d bytes, more than the %d bytes of memory this process may use (%w)", what, need, total, errs.ErrNoMem)
	}
	return nil
}

// TotalMemory returns the memory in bytes this process may use
// (bounds.Memory: the machine's, or its cgroup's limit), or 0 when unknown
// (a variable so that tests can lower it).
var TotalMemory = func() uint64 { return bounds.Memory() }
