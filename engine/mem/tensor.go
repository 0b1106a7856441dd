package mem

import "fmt"

// DType is the element type of a Tensor. The values are the engine's own;
// the C API maps them to DLPack type codes.
type DType int

const (
	Invalid DType = iota
	Float32
	Float16
	BFloat16
	Float64
	Int64
	Int32
	Int8
	Uint8
	Bool
)

// Size returns the size of one element in bytes (0 for Invalid).
func (d DType) Size() int {
	switch d {
	case Float32, Int32:
		return 4
	case Float16, BFloat16:
		return 2
	case Float64, Int64:
		return 8
	case Int8, Uint8, Bool:
		return 1
	}
	return 0
}

// String returns the numpy/torch-style name of the type.
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float16:
		return "float16"
	case BFloat16:
		return "bfloat16"
	case Float64:
		return "float64"
	case Int64:
		return "int64"
	case Int32:
		return "int32"
	case Int8:
		return "int8"
	case Uint8:
		return "uint8"
	case Bool:
		return "bool"
	}
	return fmt.Sprintf("dtype(%d)", int(d))
}

// ParseDType is the inverse of String.
func ParseDType(s string) (DType, error) {
	for d := Float32; d <= Bool; d++ {
		if d.String() == s {
			return d, nil
		}
	}
	return Invalid, fmt.Errorf("unknown dtype %q", s)
}

// Tensor is a dense, row-major, C-contiguous buffer with a type and a shape,
// in the memory Device names (the zero Device: host memory). Host and
// pinned tensors hold their bytes in Data, exactly
// prod(Shape)*DType.Size() of them; a device tensor has Data nil and its
// address in DevicePtr (Go never reads device memory). Who owns the memory
// is said by whoever hands the Tensor out.
type Tensor struct {
	DType DType
	Shape []int64
	Data  []byte
	// Device is where the memory lives; zero for host memory.
	Device Device
	// DevicePtr is the address of a device tensor's memory (Device.Kind ==
	// KindDevice), 0 otherwise.
	DevicePtr uintptr
}

// Buffer returns t's memory as a Buffer (no copy).
func (t Tensor) Buffer() Buffer {
	if t.Device.Kind == KindDevice {
		return DeviceBuffer(t.DevicePtr, int(t.ByteSize()), t.Device.Ordinal)
	}
	return Buffer{dev: t.Device, data: t.Data, n: len(t.Data)}
}

// TensorIn returns a tensor of dtype and shape over b's memory (no copy).
func TensorIn(b Buffer, dtype DType, shape []int64) Tensor {
	return Tensor{DType: dtype, Shape: shape, Data: b.data, Device: b.dev, DevicePtr: b.ptr}
}

// ByteSize returns the size of t's memory in bytes: the product of the
// shape times the element size.
func (t Tensor) ByteSize() int64 { return t.NumElements() * int64(t.DType.Size()) }

// NumElements returns the product of the shape.
func (t Tensor) NumElements() int64 {
	n := int64(1)
	for _, s := range t.Shape {
		n *= s
	}
	return n
}

// RowBytes returns the size of one row (the product of Shape[1:] times the
// element size); for a 1-D tensor it is the element size.
func (t Tensor) RowBytes() int {
	n := t.DType.Size()
	for _, s := range t.Shape[1:] {
		n *= int(s)
	}
	return n
}
