package diskio

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"

	"github.com/graphferry/graphferry/engine/errs"
)

// Backend says how a Reader keeps requests in flight.
type Backend int

const (
	// Auto picks io_uring where the kernel allows it, else Pread.
	Auto Backend = iota
	// URing uses io_uring.
	URing
	// Pread uses a pool of goroutines calling pread(2).
	Pread
)

// String returns "auto", "io_uring" or "pread".
func (b Backend) String() string {
	switch b {
	case URing:
		return "io_uring"
	case Pread:
		return "pread"
	}
	return "auto"
}

// Options configure a Reader.
type Options struct {
	// Backend picks the way requests are kept in flight (Auto: io_uring
	// where available).
	Backend Backend
	// Buffered reads through the page cache instead of O_DIRECT (a file
	// system that refuses O_DIRECT, tmpfs say, is read so anyway).
	Buffered bool
	// QueueDepth is the number of requests in flight per batch (<= 0: 64).
	QueueDepth int
	// MaxRequest caps a coalesced request, in bytes (<= 0: 128 KiB; at
	// least one aligned row).
	MaxRequest int
	// Check, when set, is called with every request's bytes as read
	// (data, from file byte off, a multiple of Align: requests are then
	// aligned even when reads are buffered) before any row is copied out
	// of them; an error fails the batch. The disk tier checks page sums
	// with it.
	Check func(off int64, data []byte) error
}

// Align is the alignment of direct reads: offsets, lengths and buffers.
// 4096 covers the logical block sizes of common devices.
const Align = 4096

// Counts say what reading a batch cost.
type Counts struct {
	// Requests is the number of read requests issued (after coalescing).
	Requests int64
	// Bytes is the number of bytes read from the file (aligned, so more
	// than the rows' bytes).
	Bytes int64
}

// Add adds o to c.
func (c *Counts) Add(o Counts) { c.Requests += o.Requests; c.Bytes += o.Bytes }

// ShortReadError is a read that ended before the bytes of a row: the file
// is shorter than when it was opened.
type ShortReadError struct {
	Path   string
	Offset int64 // the first byte of the row that could not be read
}

func (e *ShortReadError) Error() string {
	return fmt.Sprintf("%s: byte %d is past the end of the file", e.Path, e.Offset)
}

// Unwrap makes the error an errs.ErrIO.
func (e *ShortReadError) Unwrap() error { return errs.ErrIO }

// Reader reads rows of one file. Safe for concurrent use.
type Reader struct {
	path    string
	f       *os.File
	fd      int
	direct  bool
	backend Backend
	depth   int
	maxReq  int
	check   func(off int64, data []byte) error

	mu      sync.Mutex
	buffers [][]byte // free request buffers, maxReq bytes each
	rings   []*ring  // idle rings (URing)
	all     [][]byte // every buffer, unmapped by Close
	allR    []*ring
	closed  bool
}

// Open opens path for row reads.
func Open(path string, opt Options) (*Reader, error) {
	r := &Reader{path: path, depth: opt.QueueDepth, maxReq: opt.MaxRequest, check: opt.Check}
	if r.depth <= 0 {
		r.depth = 64
	}
	if r.maxReq <= 0 {
		r.maxReq = 128 << 10
	}
	r.maxReq = roundUp(r.maxReq, Align)
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC
	fd := -1
	var err error
	if !opt.Buffered && oDirect != 0 {
		fd, err = syscall.Open(path, flags|oDirect, 0)
		if err == nil {
			r.direct = true
		}
	}
	if fd < 0 {
		if fd, err = syscall.Open(path, flags, 0); err != nil {
			return nil, fmt.Errorf("diskio: open %s: %w (%w)", path, err, errs.ErrIO)
		}
		fadviseRandom(fd)
	}
	r.fd = fd
	r.f = os.NewFile(uintptr(fd), path)
	r.backend = opt.Backend
	if r.backend == Auto || r.backend == URing {
		rg, err := newRing(r.depth)
		switch {
		case err == nil:
			r.backend = URing
			r.rings = append(r.rings, rg)
			r.allR = append(r.allR, rg)
		case r.backend == URing:
			r.f.Close()
			return nil, fmt.Errorf("diskio: io_uring: %w", err)
		default:
			r.backend = Pread
		}
	}
	return r, nil
}

// Path returns the file's path.
func (r *Reader) Path() string { return r.path }

// Direct reports whether reads bypass the page cache (O_DIRECT).
func (r *Reader) Direct() bool { return r.direct }

// Backend returns the backend in use (URing or Pread).
func (r *Reader) Backend() Backend { return r.backend }

// QueueDepth returns the requests kept in flight per batch.
func (r *Reader) QueueDepth() int { return r.depth }

// MaxRequest returns the largest coalesced request, in bytes.
func (r *Reader) MaxRequest() int { return r.maxReq }

// Close releases the file, the rings and the buffers. Reads must have
// returned. Idempotent.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var errList []error
	for _, rg := range r.allR {
		errList = append(errList, rg.close())
	}
	for _, b := range r.all {
		errList = append(errList, syscall.Munmap(b))
	}
	r.all, r.buffers, r.rings, r.allR = nil, nil, nil, nil
	errList = append(errList, r.f.Close())
	return errors.Join(errList...)
}

// request is one coalesced read: file bytes [off, off+n), serving the rows
// at order[lo:hi] of the batch.
type request struct {
	off    int64
	n      int
	lo, hi int
}

// plan sorts the rows' positions by offset into order and coalesces them
// into requests: a row joins the request before it when its aligned start
// is at most that request's end and the request stays within maxReq.
func (r *Reader) plan(rows []int64, rb int, base int64, order []int32, maxReq int) []request {
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch x, y := rows[a], rows[b]; {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	align := int64(1)
	if r.direct || r.check != nil {
		align = Align
	}
	var reqs []request
	for k, i := range order {
		start := base + rows[i]*int64(rb)
		lo := start &^ (align - 1)
		hi := (start + int64(rb) + align - 1) &^ (align - 1)
		if n := len(reqs); n > 0 {
			q := &reqs[n-1]
			if end := q.off + int64(q.n); lo <= end && max(hi, end)-q.off <= int64(maxReq) {
				q.n = int(max(hi, end) - q.off)
				q.hi = k + 1
				continue
			}
		}
		reqs = append(reqs, request{off: lo, n: int(hi - lo), lo: k, hi: k + 1})
	}
	return reqs
}

// ReadRows reads rows of rb bytes into dst: row i of dst is the file's
// bytes [base + rows[i]*rb, base + (rows[i]+1)*rb). Rows must be >= 0 and
// len(dst) == len(rows)*rb; ids may repeat.
func (r *Reader) ReadRows(dst []byte, rows []int64, rb int, base int64) (Counts, error) {
	if rb <= 0 || len(dst) != len(rows)*rb {
		return Counts{}, fmt.Errorf("diskio: %d bytes for %d rows of %d bytes", len(dst), len(rows), rb)
	}
	return r.read(dst, nil, rows, rb, base)
}

// ReadRowsAt is ReadRows into rows of dst at given positions: rows[k]
// goes to dst[pos[k]*rb:(pos[k]+1)*rb], straight from the request that
// read it (no batch-sized buffer in between). Positions must be distinct
// rows of dst (len(pos) == len(rows)).
func (r *Reader) ReadRowsAt(dst []byte, pos []int, rows []int64, rb int, base int64) (Counts, error) {
	if rb <= 0 || len(pos) != len(rows) {
		return Counts{}, fmt.Errorf("diskio: %d positions for %d rows of %d bytes", len(pos), len(rows), rb)
	}
	for k, p := range pos {
		if p < 0 || (p+1)*rb > len(dst) {
			return Counts{}, fmt.Errorf("diskio: pos[%d] = %d is not a row of %d bytes of %d", k, p, rb, len(dst))
		}
	}
	return r.read(dst, pos, rows, rb, base)
}

// read is ReadRows (pos nil: row i to dst row i) and ReadRowsAt.
func (r *Reader) read(dst []byte, pos []int, rows []int64, rb int, base int64) (Counts, error) {
	var c Counts
	if len(rows) == 0 {
		return c, nil
	}
	if base < 0 {
		return c, fmt.Errorf("diskio: base offset %d", base)
	}
	for i, v := range rows {
		if v < 0 {
			return c, fmt.Errorf("diskio: rows[%d] = %d", i, v)
		}
	}
	maxReq := max(r.maxReq, roundUp(rb, Align)+Align) // a row spans at most that many aligned bytes
	order := make([]int32, len(rows))
	reqs := r.plan(rows, rb, base, order, maxReq)
	c.Requests = int64(len(reqs))
	for _, q := range reqs {
		c.Bytes += int64(q.n)
	}
	b := batch{r: r, dst: dst, pos: pos, rows: rows, rb: rb, base: base, order: order, reqs: reqs, bufSize: maxReq}
	var err error
	if r.backend == URing {
		err = b.readURing()
	} else {
		err = b.readPread()
	}
	return c, err
}

// batch is one ReadRows call in progress.
type batch struct {
	r     *Reader
	dst   []byte
	pos   []int // row i goes to dst row pos[i] (nil: row i)
	rows  []int64
	rb    int
	base  int64
	order []int32
	reqs  []request
	// bufSize is the size of the request buffers (the largest request).
	bufSize int
}

// deliver copies the rows of request q out of buf, of which got bytes
// were read.
func (b *batch) deliver(q request, buf []byte, got int) error {
	if b.r.check != nil {
		if err := b.r.check(q.off, buf[:got]); err != nil {
			return err
		}
	}
	rb := int64(b.rb)
	for _, i := range b.order[q.lo:q.hi] {
		start := b.base + b.rows[i]*rb
		from := start - q.off
		if from+rb > int64(got) {
			return &ShortReadError{Path: b.r.path, Offset: start}
		}
		to := int64(i)
		if b.pos != nil {
			to = int64(b.pos[i])
		}
		copy(b.dst[to*rb:(to+1)*rb], buf[from:from+rb])
	}
	return nil
}

// getBuffers takes n request buffers of at least size bytes from the
// pool, mapping new ones as needed.
func (r *Reader) getBuffers(n, size int) ([][]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("diskio: reader is closed")
	}
	out := make([][]byte, 0, n)
	for i := len(r.buffers) - 1; i >= 0 && len(out) < n; i-- {
		if len(r.buffers[i]) >= size {
			out = append(out, r.buffers[i])
			r.buffers = slices.Delete(r.buffers, i, i+1)
		}
	}
	for len(out) < n {
		buf, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			r.buffers = append(r.buffers, out...)
			return nil, fmt.Errorf("diskio: mapping a %d-byte buffer: %w (%w)", size, err, errs.ErrNoMem)
		}
		r.all = append(r.all, buf)
		out = append(out, buf)
	}
	return out, nil
}

func (r *Reader) putBuffers(bufs [][]byte) {
	r.mu.Lock()
	r.buffers = append(r.buffers, bufs...)
	r.mu.Unlock()
}

// readPread keeps the requests in flight on a pool of pread workers.
func (b *batch) readPread() error {
	workers := min(b.r.depth, len(b.reqs))
	bufs, err := b.r.getBuffers(workers, b.bufSize)
	if err != nil {
		return err
	}
	defer b.r.putBuffers(bufs)
	next := make(chan int, len(b.reqs))
	for i := range b.reqs {
		next <- i
	}
	close(next)
	errList := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := bufs[w]
			for i := range next {
				if errList[w] != nil {
					continue // drain
				}
				q := b.reqs[i]
				got, err := preadFull(b.r.fd, buf[:q.n], q.off, b.r.direct)
				if err != nil {
					errList[w] = fmt.Errorf("diskio: reading %s at byte %d: %w (%w)", b.r.path, q.off, err, errs.ErrIO)
					continue
				}
				errList[w] = b.deliver(q, buf, got)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errList...)
}

// preadFull reads len(buf) bytes at off, retrying short reads until the
// end of the file; it returns how many bytes it read. A direct read ends
// short only at the end of the file (and could not go on from an unaligned
// offset).
func preadFull(fd int, buf []byte, off int64, direct bool) (int, error) {
	got := 0
	for got < len(buf) {
		n, err := syscall.Pread(fd, buf[got:], off+int64(got))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return got, err
		}
		if n == 0 {
			break // end of file
		}
		got += n
		if direct && got < len(buf) {
			break
		}
	}
	return got, nil
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }
