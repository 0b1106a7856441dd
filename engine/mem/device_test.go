package mem

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKindsAndDevices(t *testing.T) {
	require.Equal(t, "host", CPU.String())
	require.Equal(t, "pinned", Device{Kind: KindPinned}.String())
	require.Equal(t, "device:3", Device{Kind: KindDevice, Ordinal: 3}.String())
	require.Equal(t, "Kind(9)", Kind(9).String())
	require.True(t, KindHost.HostAccessible())
	require.True(t, KindPinned.HostAccessible())
	require.False(t, KindDevice.HostAccessible())
	require.False(t, Kind(9).HostAccessible())
}

func TestBuffers(t *testing.T) {
	b := []byte{1, 2, 3}
	h := HostBuffer(b)
	require.Equal(t, CPU, h.Device())
	require.Equal(t, 3, h.Len())
	require.Equal(t, &b[0], &h.Bytes()[0], "no copy")
	require.Zero(t, h.DevicePtr())
	got, err := h.HostBytes("x")
	require.NoError(t, err)
	require.Equal(t, b, got)

	p := PinnedBuffer(b)
	require.Equal(t, KindPinned, p.Device().Kind)
	_, err = p.HostBytes("x")
	require.NoError(t, err)

	d := DeviceBuffer(0xdead0000, 64, 1)
	require.Equal(t, Device{Kind: KindDevice, Ordinal: 1}, d.Device())
	require.Equal(t, 64, d.Len())
	require.Nil(t, d.Bytes())
	require.Equal(t, uintptr(0xdead0000), d.DevicePtr())
	_, err = d.HostBytes("the feature rows")
	require.EqualError(t, err, "mem: the feature rows is device:1 memory, which the host cannot read in place")

	var zero Buffer
	require.Equal(t, 0, zero.Len())
	require.Equal(t, CPU, zero.Device())
}

func TestTensorBuffers(t *testing.T) {
	data := Bytes([]int64{1, 2, 3, 4, 5, 6})
	host := Tensor{DType: Int64, Shape: []int64{2, 3}, Data: data}
	require.Equal(t, int64(48), host.ByteSize())
	hb := host.Buffer()
	require.Equal(t, CPU, hb.Device())
	require.Equal(t, data, hb.Bytes())
	back := TensorIn(hb, Int64, []int64{6})
	require.Equal(t, Int64s(back.Data), []int64{1, 2, 3, 4, 5, 6})

	dev := Tensor{DType: Float32, Shape: []int64{4, 2}, Device: Device{Kind: KindDevice}, DevicePtr: 0x1000}
	db := dev.Buffer()
	require.Equal(t, 32, db.Len())
	require.Equal(t, uintptr(0x1000), db.DevicePtr())
	require.Nil(t, db.Bytes())
	rt := TensorIn(db, Float32, []int64{8})
	require.Nil(t, rt.Data)
	require.Equal(t, uintptr(0x1000), rt.DevicePtr)
	require.Equal(t, KindDevice, rt.Device.Kind)
}

// failing is an Allocator whose allocations fail.
type failing struct{}

func (failing) Alloc(int) ([]byte, error) { return nil, errors.New("no memory") }
func (failing) Free([]byte)               {}

func TestKinded(t *testing.T) {
	c := NewChecked(nil)
	a, err := Kinded(c, CPU)
	require.NoError(t, err)
	require.Equal(t, CPU, a.Device())
	b, err := a.AllocBuffer(24, NoStream)
	require.NoError(t, err)
	require.Len(t, b.Bytes(), 24)
	n, _ := c.Outstanding()
	require.Equal(t, 1, n)
	a.FreeBuffer(b, NoStream)
	n, _ = c.Outstanding()
	require.Zero(t, n, "the buffer went back to the host allocator")

	pa, err := Kinded(Heap{}, Device{Kind: KindPinned})
	require.NoError(t, err)
	pb, err := pa.AllocBuffer(8, Stream(7))
	require.NoError(t, err)
	require.Equal(t, KindPinned, pb.Device().Kind)

	_, err = Kinded(Heap{}, Device{Kind: KindDevice})
	require.EqualError(t, err, "mem: Kinded: a host Allocator cannot hand out device:0 memory")
	_, err = Kinded(nil, CPU)
	require.Error(t, err)
	fa, err := Kinded(failing{}, CPU)
	require.NoError(t, err)
	_, err = fa.AllocBuffer(8, NoStream)
	require.EqualError(t, err, "no memory")
}
