package dataset

import (
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strings"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
)

// FileSum is the size and checksum of one dataset file, as recorded in
// graphferry.json ("files": {"edges.arrow": {...}, ...}).
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

// maxMetaBytes caps graphferry.json and meta.json (they hold counts and
// provenance, never data).
const maxMetaBytes = 64 << 20

// checkFileName checks that name names a file directly inside a dataset
// directory: not empty, not "." or "..", no path separator.
func checkFileName(what, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) ||
		filepath.Base(name) != name || filepath.IsAbs(name) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("dataset: %s %q must be a plain file name in the dataset directory", what, name)
	}
	return nil
}

// confine returns the path of the file name inside dir after checking that
// it stays inside dir: name is a plain file name and, if it is a symbolic
// link, it resolves to a file inside dir (a link to another file of the
// dataset, feat.bin -> feat.v2.bin, stays allowed; a link out of the
// directory, to a file of the right size anywhere, is refused). A missing
// file gives its plain path (opening it then reports it).
func confine(dir, what, name string) (string, error) {
	if err := checkFileName(what, name); err != nil {
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

// readSmall reads a whole regular file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	f, st, err := openRegular(path)
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

// sumBytes returns the FileSum of data.
func sumBytes(data []byte) (FileSum, error) {
	var crc uint32
	err := feature.Guard(func() { crc = crc32.Update(0, castagnoli, data) })
	return FileSum{Size: int64(len(data)), CRC32C: fmt.Sprintf("%08x", crc)}, err
}

// sumFile returns the FileSum of the file at path.
func sumFile(path string) (FileSum, error) {
	data, release, err := mapFile(path)
	if err != nil {
		return FileSum{}, err
	}
	defer release()
	s, err := sumBytes(data)
	if err != nil {
		return FileSum{}, fmt.Errorf("dataset: %s: %w", path, err)
	}
	return s, nil
}

// checkSize compares the size of the regular file at path with the recorded
// one (a mismatch wraps errs.ErrIO: the file changed after it was written).
func checkSize(path string, want FileSum) error {
	f, st, err := openRegular(path)
	if err != nil {
		return err
	}
	f.Close()
	if st.Size() != want.Size {
		return fmt.Errorf("dataset: %s is %d bytes, %s says %d: it was truncated, extended or replaced (%w)",
			path, st.Size(), MetaFile, want.Size, errs.ErrIO)
	}
	return nil
}

// checkSum compares the checksum of the file at path with the recorded one.
func checkSum(path string, want FileSum) error {
	data, release, err := mapFile(path)
	if err != nil {
		return err
	}
	defer release()
	return checkSumBytes(path, data, want)
}

// checkSumBytes compares the size and checksum of data, the contents of the
// file at path, with the recorded ones.
func checkSumBytes(path string, data []byte, want FileSum) error {
	got, err := sumBytes(data)
	if err != nil {
		return fmt.Errorf("dataset: %s: %w", path, err)
	}
	if got.Size != want.Size {
		return fmt.Errorf("dataset: %s is %d bytes, %s says %d: it was truncated, extended or replaced (%w)",
			path, got.Size, MetaFile, want.Size, errs.ErrIO)
	}
	if !strings.EqualFold(got.CRC32C, want.CRC32C) {
		return fmt.Errorf("dataset: %s: CRC-32C is %s, %s says %s: the file is damaged or was changed (%w)",
			path, got.CRC32C, MetaFile, want.CRC32C, errs.ErrIO)
	}
	return nil
}

// checkAlloc refuses (errs.ErrNoMem) an allocation of need bytes for what
// that the machine's memory cannot hold: Go's out-of-memory error is fatal,
// so sizes read from files are checked before they are allocated.
func checkAlloc(need uint64, what string) error {
	total := totalMemory()
	if total > 0 && need > total {
		return fmt.Errorf("dataset: %s needs %d bytes, more than this machine's %d bytes of memory (%w)", what, need, total, errs.ErrNoMem)
	}
	return nil
}

// totalMemory returns the machine's physical memory in bytes, or 0 when
// unknown (a variable so that tests can lower it).
var totalMemory = physicalMemory
