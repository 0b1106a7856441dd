package device

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
)

// recorder is a Device and a device allocator that record what the
// session asks of them, in order.
type recorder struct{ log []string }

func (r *recorder) WaitOn(s mem.Stream, e mem.Event) error {
	r.log = append(r.log, "wait")
	return nil
}
func (r *recorder) Quiesce() error { r.log = append(r.log, "quiesce"); return nil }
func (r *recorder) Device() mem.Device {
	return mem.Device{Kind: mem.KindDevice}
}
func (r *recorder) AllocBuffer(n int, _ mem.Stream) (mem.Buffer, error) {
	return mem.DeviceBuffer(0x1000, n, 0), nil
}
func (r *recorder) FreeBuffer(b mem.Buffer, s mem.Stream) {
	r.log = append(r.log, "free after "+map[mem.Stream]string{mem.NoStream: "nothing", PerThread: "per-thread", 7: "stream 7"}[s])
}

func newRecorded(t *testing.T, consumer mem.Stream) (*Session, *recorder, *pipeline.Batch) {
	r := &recorder{}
	s := NewSession(Options{Stream: consumer}, Stages{Device: r, Close: func() error { r.log = append(r.log, "teardown"); return nil }})
	b := pipeline.NewDeviceBatch(nil, r, 5, 9, nil)
	b.Nodes = mem.Tensor{DType: mem.Int64, Shape: []int64{1}, Device: r.Device(), DevicePtr: 0x1000}
	require.NoError(t, s.Deliver(b))
	return s, r, b
}

// A tensor taken on a thread and released after that thread's per-thread
// stream is given back only by a call on that thread: on any other, the
// stream handle would name that thread's own stream (issue 32: the event
// was recorded on whatever thread drained).
func TestPerThreadStreamIsOrderedOnItsThread(t *testing.T) {
	s, r, b := newRecorded(t, 7)
	require.Equal(t, []string{"wait"}, r.log) // the consumer's stream waits for the batch
	alloc := s.Take(b, &b.Nodes)
	require.Zero(t, b.Nodes.DevicePtr)
	require.NoError(t, s.Release(b, mem.NoStream))
	freed := Freed{Alloc: alloc, Ptr: 0x1000, Stream: PerThread, Thread: 1}
	require.NoError(t, s.Give(2, freed)) // another thread: kept
	require.Equal(t, []string{"wait"}, r.log)
	require.NoError(t, s.Give(2))
	require.Equal(t, []string{"wait"}, r.log)
	require.NoError(t, s.Give(1)) // its thread: given back after its stream
	require.Equal(t, []string{"wait", "free after per-thread"}, r.log)
	require.NoError(t, s.Close())
	require.Equal(t, []string{"wait", "free after per-thread", "teardown"}, r.log)
	require.Nil(t, Find(s.ID()))
}

// A loader closed while a per-thread free waits for a thread that never
// calls again: the device is quiesced (every stream, that thread's
// included), the memory given back, the device torn down.
func TestTeardownQuiescesForForeignPerThreadFrees(t *testing.T) {
	s, r, b := newRecorded(t, mem.NoStream)
	alloc := s.Take(b, &b.Nodes)
	require.NoError(t, s.Release(b, 7))
	require.NoError(t, s.Give(2, Freed{Alloc: alloc, Ptr: 0x1000, Stream: PerThread, Thread: 1}))
	require.Equal(t, []string(nil), r.log)
	require.NotNil(t, Find(s.ID()))
	require.NoError(t, s.Close())
	require.Equal(t, []string{"quiesce", "free after nothing", "teardown"}, r.log)
	require.Nil(t, Find(s.ID()))
}

// The device outlives Close while a batch or a taken tensor is in use;
// ordinary streams are given back on any thread.
func TestTeardownWaitsForTheLastUser(t *testing.T) {
	s, r, b := newRecorded(t, mem.NoStream)
	alloc := s.Take(b, &b.Nodes)
	require.NoError(t, s.Close())
	require.NotContains(t, r.log, "teardown")
	require.NoError(t, s.Release(b, mem.NoStream))
	require.NotContains(t, r.log, "teardown")
	require.NoError(t, s.Give(3, Freed{Alloc: alloc, Ptr: 0x1000, Stream: 7, Thread: 1}))
	require.Equal(t, []string{"free after stream 7", "teardown"}, r.log)
}
