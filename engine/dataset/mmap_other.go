//go:build !unix

package dataset

import (
	"fmt"
	"os"
)

// mapFile reads the whole file at path (no mmap on this platform).
func mapFile(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w", err)
	}
	return data, func() error { return nil }, nil
}
