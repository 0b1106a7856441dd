package cuda

import (
	"errors"
	"fmt"
	"slices"

	"github.com/graphferry/graphferry/engine/device"
	"github.com/graphferry/graphferry/engine/mem"
)

// Placement says where the graph's topology lives for the kernels
// (engine/device's vocabulary). PlacePinned leaves it in host memory,
// page-locked and mapped for the device: the graph's arrays that are off
// the Go heap (memory-mapped dataset files, a caller's memory) registered
// in place, the others (and any the driver refuses) copied into pinned
// allocations of the driver; the kernels read it over the bus (zero-copy).
type Placement = device.Placement

const (
	PlaceAuto   = device.PlaceAuto
	PlaceDevice = device.PlaceDevice
	PlacePinned = device.PlacePinned
)

// placed is a set of host arrays made readable by the kernels: in device
// memory, or pinned host memory (registered in place when off the Go heap,
// else copied into a pinned allocation). The topology of a sampler and the
// cold tier of node data are placed.
type placed struct {
	dev   Device
	where Placement // PlaceDevice or PlacePinned
	ptrs  []Ptr     // per array (0 for an empty one)
	bytes int64
	// Copied counts the arrays (PlacePinned) copied into pinned
	// allocations: on the Go heap, which is never handed to the driver to
	// keep, or refused by the driver's registration.
	copied int
	undo   []func() error
}

// place makes arrays readable by dev's kernels where says (PlaceAuto:
// device memory when their total fits in the free memory less reserve).
// Empty arrays get address 0. Arrays off the Go heap (mem.OffHeap) must
// stay mapped and unchanged until release (registered memory is read in
// place); Go-heap arrays are copied.
func place(dev Device, arrays [][]byte, where Placement, reserve int64) (*placed, error) {
	pl := &placed{dev: dev, ptrs: make([]Ptr, len(arrays))}
	for _, a := range arrays {
		pl.bytes += int64(len(a))
	}
	switch where {
	case PlaceAuto:
		free, _, err := dev.MemInfo()
		if err != nil {
			return nil, err
		}
		where = PlacePinned
		if pl.bytes+reserve <= free {
			where = PlaceDevice
		}
	case PlaceDevice, PlacePinned:
	default:
		return nil, fmt.Errorf("cuda: unknown placement %d", int(where))
	}
	pl.where = where
	var st Stream
	if where == PlaceDevice {
		var err error
		if st, err = dev.NewStream(); err != nil {
			return nil, err
		}
		defer st.Close()
	}
	for i, a := range arrays {
		if len(a) == 0 {
			continue
		}
		var err error
		if where == PlaceDevice {
			err = pl.upload(st, i, a)
		} else {
			err = pl.pin(i, a)
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("cuda: placing %d bytes in %s memory: %w", len(a), where, err), pl.release())
		}
	}
	if st != nil {
		if err := st.Sync(); err != nil {
			return nil, errors.Join(err, pl.release())
		}
	}
	return pl, nil
}

func (pl *placed) upload(st Stream, i int, a []byte) error {
	p, err := pl.dev.Alloc(int64(len(a)))
	if err != nil {
		return err
	}
	pl.undo = append(pl.undo, func() error { return pl.dev.Free(p) })
	pl.ptrs[i] = p
	return st.CopyIn(p, a)
}

// pin makes a readable in pinned host memory: registered in place when it
// is off the Go heap (the Go heap is never handed to the driver to keep:
// the driver and the kernels would read it behind the collector's back),
// else copied into a pinned allocation of the driver.
func (pl *placed) pin(i int, a []byte) error {
	if mem.OffHeap(a) {
		if p, err := pl.dev.RegisterHost(a); err == nil {
			pl.undo = append(pl.undo, func() error { return pl.dev.UnregisterHost(a) })
			pl.ptrs[i] = p
			return nil
		}
	}
	h, err := pl.dev.AllocHost(int64(len(a)))
	if err != nil {
		return err
	}
	pl.undo = append(pl.undo, func() error { return pl.dev.FreeHost(h) })
	copy(h.Bytes, a)
	pl.ptrs[i] = h.Ptr
	pl.copied++
	return nil
}

// release frees what place made.
func (pl *placed) release() error { return undoAll(&pl.undo) }

// undoAll runs the functions of *undo in reverse order, empties it, and
// returns their errors joined.
func undoAll(undo *[]func() error) error {
	var errs []error
	for i := len(*undo) - 1; i >= 0; i-- {
		errs = append(errs, (*undo)[i]())
	}
	*undo = nil
	return errors.Join(errs...)
}

// degreeBounds answers, for a graph, how many neighbours a frontier of k
// distinct nodes can have at most: the sum of the k largest in-degrees
// (each capped at a fan-out), so that a batch's buffers can be sized on the
// host before its kernels run, without reading sizes back per hop.
type degreeBounds struct {
	desc   []int64 // in-degrees, largest first
	prefix []int64 // prefix[k] = sum of desc[:k]
}

func newDegreeBounds(indptr []int64) *degreeBounds {
	n := len(indptr) - 1
	d := &degreeBounds{desc: make([]int64, n), prefix: make([]int64, n+1)}
	for v := range n {
		d.desc[v] = indptr[v+1] - indptr[v]
	}
	slices.SortFunc(d.desc, func(a, b int64) int { return int(b - a) })
	for i, x := range d.desc {
		d.prefix[i+1] = d.prefix[i] + x
	}
	return d
}

// sum returns the sum over k distinct nodes of min(degree, capAt) at most
// (capAt < 0: no cap).
func (d *degreeBounds) sum(k, capAt int64) int64 {
	k = min(max(k, 0), int64(len(d.desc)))
	if capAt < 0 {
		return d.prefix[k]
	}
	// c = the number of nodes of degree >= capAt (a prefix of desc).
	c, _ := slices.BinarySearchFunc(d.desc, capAt, func(x, t int64) int {
		if x >= t {
			return -1
		}
		return 1
	})
	if k <= int64(c) {
		return k * capAt
	}
	return int64(c)*capAt + d.prefix[k] - d.prefix[c]
}

// positive returns how many of k distinct nodes can have a neighbour at
// most.
func (d *degreeBounds) positive(k int64) int64 {
	c, _ := slices.BinarySearchFunc(d.desc, int64(1), func(x, t int64) int {
		if x >= t {
			return -1
		}
		return 1
	})
	return min(max(k, 0), int64(c))
}
