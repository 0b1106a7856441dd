package comm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/mem"
)

// Exchanger is one rank's side of an all-to-all that the host process
// provides (torch.distributed, MPI, NCCL, threads in a test), driven by
// Host. Every rank runs its own process (or thread) and calls the
// Exchanger's methods in the same order as every other rank: one
// ExchangeSizes then one Exchange per collective.
//
// Implementations need not be safe for concurrent use (Host serialises its
// calls) and must not keep send or recv after returning.
//
// ctx is done when the Host stops waiting: its time-out (HostOptions) or
// the caller's cancellation (a loader being closed). An implementation
// should then return ctx's error promptly, even when it cannot interrupt
// the host's call (a C callback): it leaves that call to finish in the
// background, touching neither send nor recv after it returned, and the
// Host fails for good (the ranks are out of step). An implementation that
// ignores ctx blocks its Host until the host's own call returns.
type Exchanger interface {
	// ExchangeSizes sends sendSizes[j] (the bytes this rank will send to
	// rank j in the following Exchange) to rank j and sets recvSizes[j] to
	// the bytes rank j will send here. Both have one entry per rank.
	ExchangeSizes(ctx context.Context, sendSizes, recvSizes []int64) error
	// Exchange sends send[j] to rank j and fills recv[j], whose length is
	// what ExchangeSizes announced, with what rank j sent; send[rank] goes
	// to recv[rank].
	Exchange(ctx context.Context, send, recv [][]byte) error
}

// ErrHost is wrapped by the errors of a Host whose host exchange failed
// (the host's callback returned an error, a peer announced a negative
// size); it matches errs.ErrIO.
var ErrHost = fmt.Errorf("comm: host exchange failed: %w", errs.ErrIO)

// ErrTimeout is wrapped (with ErrHost) by the error of a Host whose host
// exchange did not complete within HostOptions.Timeout.
var ErrTimeout = errors.New("comm: no answer within the time-out")

// HostOptions configures a Host.
type HostOptions struct {
	// Timeout, when > 0, bounds each of the two host exchanges of an
	// AllToAll: one that has not completed after Timeout fails the Host
	// (ErrTimeout, ErrHost), naming the ranks it was waiting for, and the
	// Exchanger's call is left to finish in the background. 0 waits as
	// long as the host's call takes.
	Timeout time.Duration
}

// Host is a Comm for one rank of a process-per-rank group whose exchange
// the host provides (an Exchanger): LocalRanks is {rank}. Each AllToAll is
// two host collectives: the sizes, then the bytes.
//
// A failure is final: once an exchange fails, times out or is cancelled
// while the host runs it (or a call is cancelled between the two phases),
// every later call returns the same error, since the ranks' collectives no
// longer pair up. Cancelling ctx before an AllToAll starts leaves the
// group in step.
type Host struct {
	rank, size int
	x          Exchanger
	timeout    time.Duration

	mu  sync.Mutex // serialises the collectives; guards err
	err error      // sticky failure
}

var _ Comm = (*Host)(nil)

// maxMessage bounds the size a peer may announce (1 TiB): a larger one is a
// corrupt size exchange, not a message to allocate.
const maxMessage = 1 << 40

// NewHost returns the Comm of rank rank in a group of size ranks whose
// exchanges x runs, with no time-out.
func NewHost(rank, size int, x Exchanger) (*Host, error) {
	return NewHostWith(rank, size, x, HostOptions{})
}

// NewHostWith is NewHost with options.
func NewHostWith(rank, size int, x Exchanger, opt HostOptions) (*Host, error) {
	if x == nil {
		return nil, errors.New("comm: host exchanger is nil")
	}
	if size < 1 {
		return nil, fmt.Errorf("comm: host communicator size = %d (want >= 1)", size)
	}
	if rank < 0 || rank >= size {
		return nil, fmt.Errorf("comm: host communicator rank = %d is out of range [0, %d)", rank, size)
	}
	if opt.Timeout < 0 {
		return nil, fmt.Errorf("comm: host communicator time-out = %v is negative (want 0 for none, or > 0)", opt.Timeout)
	}
	return &Host{rank: rank, size: size, x: x, timeout: opt.Timeout}, nil
}

// Timeout returns the bound on each host exchange (0: none).
func (h *Host) Timeout() time.Duration { return h.timeout }

// Size implements Comm.
func (h *Host) Size() int { return h.size }

// Rank returns the rank this process runs.
func (h *Host) Rank() int { return h.rank }

// LocalRanks implements Comm: this process's rank.
func (h *Host) LocalRanks() []int { return []int{h.rank} }

// Dup implements Comm by refusing: the host provides one channel, and two
// communicators over it could pair one stage's rounds with another's on a
// different rank. Callers that exchange from several stages at once must
// order them (engine/coordinator) over one Host; a loader over a Host
// samples with a single worker.
func (h *Host) Dup() (Comm, error) {
	return nil, fmt.Errorf("comm: a host communicator cannot be duplicated (one exchange channel per process): %w", errs.ErrNotSupported)
}

// Err returns the error that ended the communicator, nil while it works.
func (h *Host) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// fail records err as final and returns it.
func (h *Host) fail(err error) error {
	if h.err == nil {
		h.err = err
	}
	return h.err
}

// AllToAll implements Comm for host and pinned buffers. rank must be
// h.Rank(). The returned buffers are fresh Go memory.
func (h *Host) AllToAll(ctx context.Context, rank int, send []mem.Buffer, _ mem.Stream) ([]mem.Buffer, error) {
	if h == nil {
		return nil, errors.New("comm: AllToAll on a nil *Host")
	}
	if rank != h.rank {
		return nil, fmt.Errorf("comm: host communicator of rank %d called for rank %d", h.rank, rank)
	}
	if len(send) != h.size {
		return nil, fmt.Errorf("comm: rank %d: len(send) = %d (want %d, one buffer per rank)", rank, len(send), h.size)
	}
	out := make([][]byte, h.size)
	sizes := make([]int64, 2*h.size)
	sendSizes, recvSizes := sizes[:h.size], sizes[h.size:]
	for j, b := range send {
		p, err := b.HostBytes(fmt.Sprintf("send[%d]", j))
		if err != nil {
			return nil, fmt.Errorf("comm: rank %d: %w; a host communicator moves host memory only", rank, err)
		}
		out[j] = p
		sendSizes[j] = int64(len(p))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	if err := ctx.Err(); err != nil {
		// Nothing started: the group is still in step.
		return nil, err
	}
	if err := h.exchange(ctx, "size exchange", func(ctx context.Context) error {
		return h.x.ExchangeSizes(ctx, sendSizes, recvSizes)
	}); err != nil {
		return nil, err
	}
	recv := make([][]byte, h.size)
	for j, n := range recvSizes {
		if n < 0 || n > maxMessage {
			return nil, h.fail(fmt.Errorf("%w: rank %d of %d: rank %d announced a message of %d bytes", ErrHost, h.rank, h.size, j, n))
		}
		recv[j] = make([]byte, n)
	}
	if err := ctx.Err(); err != nil {
		return nil, h.fail(fmt.Errorf("comm: rank %d of %d cancelled between the size and data exchanges (the group is out of step): %w", h.rank, h.size, err))
	}
	if err := h.exchange(ctx, "data exchange", func(ctx context.Context) error {
		return h.x.Exchange(ctx, out, recv)
	}); err != nil {
		return nil, err
	}
	bufs := make([]mem.Buffer, h.size)
	for j, p := range recv {
		bufs[j] = mem.HostBuffer(p)
	}
	return bufs, nil
}

// exchange runs one host exchange (phase names it) under ctx and the
// time-out, and fails the Host for good if it does not complete.
func (h *Host) exchange(ctx context.Context, phase string, run func(context.Context) error) error {
	xctx, cancel := ctx, context.CancelFunc(func() {})
	if h.timeout > 0 {
		xctx, cancel = context.WithTimeoutCause(ctx, h.timeout, ErrTimeout)
	}
	defer cancel()
	err := run(xctx)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return h.fail(fmt.Errorf("comm: rank %d of %d stopped waiting for the host's %s (the group is out of step): %w", h.rank, h.size, phase, ctx.Err()))
	case context.Cause(xctx) == ErrTimeout:
		return h.fail(fmt.Errorf("%w: rank %d of %d, %s: %w: %s within %v", ErrHost, h.rank, h.size, phase, ErrTimeout, h.silent(), h.timeout))
	}
	return h.fail(fmt.Errorf("%w: rank %d of %d, %s: %w", ErrHost, h.rank, h.size, phase, err))
}

// silent names the ranks a timed-out exchange was waiting for: the one
// other rank of a group of two; with more, which of them did not answer
// is the host's to say (its own, shorter time-out).
func (h *Host) silent() string {
	if h.size == 2 {
		return fmt.Sprintf("rank %d did not answer", 1-h.rank)
	}
	var others []int
	for r := range h.size {
		if r != h.rank {
			others = append(others, r)
		}
	}
	return fmt.Sprintf("not every one of ranks %v answered", others)
}

// Exchanger returns rank's side of an Exchanger whose exchanges are l's
// rounds: a Host group whose ranks are goroutines of one process, for tests
// of code written for one rank per process. Each rank's calls must come
// from its own goroutine, as with l.
func (l *Local) Exchanger(rank int) Exchanger { return localExchanger{l: l, rank: rank} }

type localExchanger struct {
	l    *Local
	rank int
}

func (x localExchanger) ExchangeSizes(ctx context.Context, sendSizes, recvSizes []int64) error {
	send := make([][]byte, len(sendSizes))
	for j, n := range sendSizes {
		send[j] = mem.Bytes([]int64{n})
	}
	recv, err := x.exchange(ctx, send)
	if err != nil {
		return err
	}
	for j, b := range recv {
		p := b.Bytes()
		if len(p) != 8 || j >= len(recvSizes) {
			return fmt.Errorf("comm: size message from rank %d has %d bytes", j, len(p))
		}
		recvSizes[j] = mem.Int64s(p)[0]
	}
	return nil
}

func (x localExchanger) Exchange(ctx context.Context, send, recv [][]byte) error {
	got, err := x.exchange(ctx, send)
	if err != nil {
		return err
	}
	for j, b := range got {
		if b.Len() != len(recv[j]) {
			return fmt.Errorf("comm: rank %d sent %d bytes, announced %d", j, b.Len(), len(recv[j]))
		}
		copy(recv[j], b.Bytes())
	}
	return nil
}

func (x localExchanger) exchange(ctx context.Context, send [][]byte) ([]mem.Buffer, error) {
	bufs := make([]mem.Buffer, len(send))
	for j, p := range send {
		bufs[j] = mem.HostBuffer(p)
	}
	return x.l.AllToAll(ctx, x.rank, bufs, mem.NoStream)
}
