//go:build unix

package fileio

import (
	"fmt"
	"math"
	"os"
	"syscall"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
)

// OpenRegular opens path for reading and checks that it is a regular file.
// It opens with O_NONBLOCK, so that a named pipe (or a device) in place of
// a dataset file is refused at once instead of blocking in open(2), deaf to
// Ctrl-C; fstat on the open descriptor leaves no window for a swap between
// the check and the use. (O_NONBLOCK means nothing to regular files.)
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: open %s: %w (%w)", path, err, errs.ErrIO)
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("dataset: %w (%w)", err, errs.ErrIO)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("dataset: %s is not a regular file (%v)", path, st.Mode().Type())
	}
	return f, st, nil
}

// MapFile memory-maps the whole file at path read-only (a regular file
// only, see OpenRegular). The returned release function unmaps it; an
// empty file gives an empty slice. The mapping is registered with
// feature.RegisterMapping, so that a fault reading it (the file truncated
// meanwhile) is reported as an error naming path.
func MapFile(path string) ([]byte, func() error, error) {
	f, st, err := OpenRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	size := st.Size()
	if size == 0 {
		return []byte{}, func() error { return nil }, nil
	}
	if size > math.MaxInt {
		return nil, nil, fmt.Errorf("dataset: %s: size %d is too large to map", path, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: mmap %s: %w (%w)", path, err, errs.ErrIO)
	}
	unregister := feature.RegisterMapping(data, path)
	return data, func() error {
		unregister()
		return syscall.Munmap(data)
	}, nil
}

// Advise gives the kernel access advice for a mapping made by MapFile:
// sequential (read ahead eagerly) or random (no read-ahead). Advice only:
// a kernel refusing it changes nothing.
func Advise(data []byte, sequential bool) {
	if len(data) == 0 {
		return
	}
	advice := syscall.MADV_RANDOM
	if sequential {
		advice = syscall.MADV_SEQUENTIAL
	}
	_ = syscall.Madvise(data, advice)
}
