package diskio

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/graphferry/graphferry/engine/errs"
)

const oDirect = syscall.O_DIRECT

// fadviseRandom tells the kernel that a buffered descriptor is read at
// random (no read-ahead). Advice only.
func fadviseRandom(fd int) {
	const posixFadvRandom = 1
	syscall.Syscall6(syscall.SYS_FADVISE64, uintptr(fd), 0, 0, posixFadvRandom, 0, 0)
}

// The io_uring system calls (the same numbers on every architecture) and
// the constants of linux/io_uring.h used here.
const (
	sysIOURingSetup    = 425
	sysIOURingEnter    = 426
	sysIOURingRegister = 427

	registerBuffers = 0

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	featSingleMmap = 1
	// setupCoopTaskrun (Linux 5.19) lets the kernel run completion work
	// when the ring's user next enters the kernel (which it does to wait)
	// instead of interrupting it with an inter-processor interrupt per
	// completion.
	setupCoopTaskrun = 1 << 8
	enterGetEvents   = 1
	opRead           = 22 // IORING_OP_READ, Linux 5.6
	opReadFixed      = 4  // IORING_OP_READ_FIXED: into a registered buffer
)

// sqringOffsets, cqringOffsets and uringParams mirror struct
// io_sqring_offsets, io_cqring_offsets and io_uring_params.
type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

// sqe mirrors struct io_uring_sqe (64 bytes), as a read uses it.
type sqe struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	rwFlags  uint32
	userData uint64
	pad      [3]uint64
}

// cqe mirrors struct io_uring_cqe (16 bytes).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// ring is one io_uring instance, used by one batch at a time.
type ring struct {
	fd             int
	sqMem, cqMem   []byte
	sqeMem         []byte
	sqHead, sqTail *uint32
	sqMask         uint32
	sqArray        []uint32
	sqes           []sqe
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []cqe
	entries        uint32
	// fixed, when not nil, is a buffer registered with the ring: slot s
	// of a batch reads a request of at most fixedSlot bytes into
	// fixed[s*fixedSlot:] with READ_FIXED, which spares the kernel pinning
	// and releasing the buffer's pages on every read.
	fixed []byte
}

// fixedSlot is the size of a ring's registered buffer per request in
// flight: most requests of rows under a page are one or a few pages; a
// larger one is read into a buffer of the pool. Registered memory counts
// against RLIMIT_MEMLOCK (64 slots: 1 MiB a ring); a ring that cannot
// register it reads every request into the pool's buffers.
const fixedSlot = 16 << 10

// noFixed, set by tests, makes new rings go without a fixed buffer.
var noFixed bool

// newRing sets up a ring of at least depth entries.
func newRing(depth int) (*ring, error) {
	p := uringParams{flags: setupCoopTaskrun}
	fd, _, e := syscall.Syscall(sysIOURingSetup, uintptr(depth), uintptr(unsafe.Pointer(&p)), 0)
	if e == syscall.EINVAL { // a kernel before 5.19: without the flag
		p = uringParams{}
		fd, _, e = syscall.Syscall(sysIOURingSetup, uintptr(depth), uintptr(unsafe.Pointer(&p)), 0)
	}
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", e)
	}
	r := &ring{fd: int(fd), entries: p.sqEntries}
	fail := func(err error) (*ring, error) {
		r.close()
		return nil, err
	}
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	single := p.features&featSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	prot, flags := syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE
	if r.sqMem, err = syscall.Mmap(r.fd, offSQRing, sqSize, prot, flags); err != nil {
		return fail(fmt.Errorf("mapping the submission ring: %w", err))
	}
	if single {
		r.cqMem = r.sqMem
	} else if r.cqMem, err = syscall.Mmap(r.fd, offCQRing, cqSize, prot, flags); err != nil {
		return fail(fmt.Errorf("mapping the completion ring: %w", err))
	}
	if r.sqeMem, err = syscall.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), prot, flags); err != nil {
		return fail(fmt.Errorf("mapping the submission entries: %w", err))
	}
	u32 := func(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead, r.sqTail = u32(r.sqMem, p.sqOff.head), u32(r.sqMem, p.sqOff.tail)
	r.sqMask = *u32(r.sqMem, p.sqOff.ringMask)
	r.sqArray = unsafe.Slice(u32(r.sqMem, p.sqOff.array), p.sqEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead, r.cqTail = u32(r.cqMem, p.cqOff.head), u32(r.cqMem, p.cqOff.tail)
	r.cqMask = *u32(r.cqMem, p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&r.cqMem[p.cqOff.cqes])), p.cqEntries)
	r.registerFixed(min(depth, int(p.sqEntries)))
	return r, nil
}

// registerFixed maps and registers slots*fixedSlot bytes as the ring's
// fixed buffer; on any failure (the memory-lock limit, say) the ring goes
// without.
func (r *ring) registerFixed(slots int) {
	if noFixed {
		return
	}
	buf, err := syscall.Mmap(-1, 0, slots*fixedSlot, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return
	}
	iov := syscall.Iovec{Base: &buf[0]}
	iov.SetLen(len(buf))
	if _, _, e := syscall.Syscall6(sysIOURingRegister, uintptr(r.fd), registerBuffers, uintptr(unsafe.Pointer(&iov)), 1, 0, 0); e != 0 {
		syscall.Munmap(buf)
		return
	}
	r.fixed = buf
}

// slotBuffer returns the buffer that slot s reads a request of n bytes
// into: its part of the fixed buffer when the ring has one and n fits,
// else pool, and whether it is the fixed one.
func (r *ring) slotBuffer(s, n int, pool []byte) ([]byte, bool) {
	if n <= fixedSlot && (s+1)*fixedSlot <= len(r.fixed) {
		return r.fixed[s*fixedSlot : s*fixedSlot+n], true
	}
	return pool[:n], false
}

func (r *ring) close() error {
	var errList []error
	unmap := func(m []byte) {
		if m != nil {
			errList = append(errList, syscall.Munmap(m))
		}
	}
	unmap(r.sqeMem)
	if r.cqMem != nil && unsafe.SliceData(r.cqMem) != unsafe.SliceData(r.sqMem) {
		unmap(r.cqMem)
	}
	unmap(r.sqMem)
	if r.fd > 0 {
		errList = append(errList, syscall.Close(r.fd))
	}
	unmap(r.fixed) // pinned pages stay the kernel's until it drops the ring
	return errors.Join(errList...)
}

// submitRead queues a read of len(buf) bytes at off into buf, tagged tag;
// fixed says buf lies in the ring's registered buffer.
func (r *ring) submitRead(fd int, buf []byte, off int64, tag uint64, fixed bool) {
	tail := atomic.LoadUint32(r.sqTail)
	i := tail & r.sqMask
	op := uint8(opRead)
	if fixed {
		op = opReadFixed // buf_index 0 (pad[0]'s low bits): the one buffer registered
	}
	r.sqes[i] = sqe{opcode: op, fd: int32(fd), off: uint64(off), addr: uint64(uintptr(unsafe.Pointer(&buf[0]))), len: uint32(len(buf)), userData: tag}
	r.sqArray[i] = i
	atomic.StoreUint32(r.sqTail, tail+1)
}

// enter submits toSubmit entries and waits for at least minComplete
// completions.
func (r *ring) enter(toSubmit, minComplete uint32) error {
	for {
		_, _, e := syscall.Syscall6(sysIOURingEnter, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), enterGetEvents, 0, 0)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return fmt.Errorf("io_uring_enter: %w", e)
	}
}

// reap calls fn on every completion available and returns how many.
func (r *ring) reap(fn func(c cqe)) int {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	n := 0
	for ; head != tail; head++ {
		fn(r.cqes[head&r.cqMask])
		n++
	}
	atomic.StoreUint32(r.cqHead, head)
	return n
}

// getRing takes an idle ring, setting one up when none is idle.
func (r *Reader) getRing() (*ring, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("diskio: reader is closed")
	}
	if n := len(r.rings); n > 0 {
		rg := r.rings[n-1]
		r.rings = r.rings[:n-1]
		return rg, nil
	}
	rg, err := newRing(r.depth)
	if err != nil {
		return nil, fmt.Errorf("diskio: %w (%w)", err, errs.ErrIO)
	}
	r.allR = append(r.allR, rg)
	return rg, nil
}

func (r *Reader) putRing(rg *ring) {
	r.mu.Lock()
	r.rings = append(r.rings, rg)
	r.mu.Unlock()
}

// readURing keeps up to the queue depth of requests in flight on one ring,
// from the calling goroutine: submit, wait for a completion, copy its rows
// out, reuse its buffer for the next request. A short read at the end of
// a direct read is the end of the file; a buffered one is resubmitted for
// the rest.
func (b *batch) readURing() error {
	rg, err := b.r.getRing()
	if err != nil {
		return err
	}
	depth := min(b.r.depth, int(rg.entries), len(b.reqs))
	bufs, err := b.r.getBuffers(depth, b.bufSize)
	if err != nil {
		b.r.putRing(rg)
		return err
	}
	// slot s holds request inflight[s] (-1: free) with got[s] bytes read
	// into buf[s] (fixed[s]: the ring's registered buffer).
	inflight := make([]int, depth)
	got := make([]int, depth)
	buf := make([][]byte, depth)
	fixed := make([]bool, depth)
	free := make([]int, 0, depth)
	for s := range depth {
		free = append(free, s)
	}
	next, pending, submitted := 0, 0, uint32(0)
	var first error
	for next < len(b.reqs) || pending > 0 {
		for first == nil && next < len(b.reqs) && len(free) > 0 {
			s := free[len(free)-1]
			free = free[:len(free)-1]
			q := b.reqs[next]
			inflight[s], got[s] = next, 0
			buf[s], fixed[s] = rg.slotBuffer(s, q.n, bufs[s])
			rg.submitRead(b.r.fd, buf[s], q.off, uint64(s), fixed[s])
			next++
			pending++
			submitted++
		}
		if pending == 0 {
			break
		}
		if err := rg.enter(submitted, 1); err != nil {
			// The ring's state is unknown: neither it nor the buffers the
			// kernel may still write to are reused (Close releases them).
			return fmt.Errorf("diskio: reading %s: %w (%w)", b.r.path, err, errs.ErrIO)
		}
		submitted = 0
		rg.reap(func(c cqe) {
			s := int(c.userData)
			q := b.reqs[inflight[s]]
			switch {
			case c.res < 0:
				if first == nil {
					first = fmt.Errorf("diskio: reading %s at byte %d: %w (%w)", b.r.path, q.off, syscall.Errno(-c.res), errs.ErrIO)
				}
			case c.res > 0 && !b.r.direct && got[s]+int(c.res) < q.n:
				got[s] += int(c.res) // buffered short read: read on
				rg.submitRead(b.r.fd, buf[s][got[s]:], q.off+int64(got[s]), uint64(s), fixed[s])
				submitted++
				return
			default:
				got[s] += int(c.res)
				if err := b.deliver(q, buf[s], got[s]); err != nil && first == nil {
					first = err
				}
			}
			pending--
			free = append(free, s)
		})
	}
	b.r.putRing(rg)
	b.r.putBuffers(bufs)
	return first
}
