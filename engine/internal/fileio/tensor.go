package fileio

import (
	"fmt"
	"math"
	"math/bits"
	"os"

	"github.com/graphferry/graphferry/engine/mem"
)

// CheckTensor checks that t has a known dtype, a non-negative shape and
// exactly prod(shape)*size bytes; name identifies it in the error.
func CheckTensor(name string, t mem.Tensor) error {
	nbytes, err := TensorBytes(t)
	if err != nil {
		return fmt.Errorf("dataset: %s %w", name, err)
	}
	if int64(len(t.Data)) != nbytes {
		return fmt.Errorf("dataset: %s has %d bytes, shape %v of %v needs %d", name, len(t.Data), t.Shape, t.DType, nbytes)
	}
	return nil
}

// TensorBytes returns the byte size of a tensor of t's dtype and shape.
func TensorBytes(t mem.Tensor) (int64, error) {
	if t.DType.Size() == 0 {
		return 0, fmt.Errorf("has invalid dtype %v", t.DType)
	}
	nbytes := uint64(t.DType.Size())
	for _, s := range t.Shape {
		if s < 0 {
			return 0, fmt.Errorf("has negative dimension in shape %v", t.Shape)
		}
		hi, lo := bits.Mul64(nbytes, uint64(s))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, fmt.Errorf("shape %v is too large", t.Shape)
		}
		nbytes = lo
	}
	return int64(nbytes), nil
}

// WriteFile writes data to path through a temporary file and a rename.
func WriteFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("dataset: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}
