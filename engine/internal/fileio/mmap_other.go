//go:build !unix

package fileio

import (
	"fmt"
	"io"
	"os"

	"github.com/graphferry/graphferry/engine/errs"
)

// OpenRegular opens path for reading and checks that it is a regular file
// (checked before opening, which could block on a named pipe, and again on
// the open file).
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("dataset: %s is not a regular file (%v)", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w (%w)", err, errs.ErrIO)
	}
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

// MapFile reads the whole file at path (no mmap on this platform).
func MapFile(path string) ([]byte, func() error, error) {
	f, _, err := OpenRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w (%w)", err, errs.ErrIO)
	}
	return data, func() error { return nil }, nil
}

// Advise does nothing where mappings take no advice.
func Advise(data []byte, sequential bool) {}
