package comm

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/graphferry/graphferry/engine/mem"
)

// Comm is an all-to-all exchange of variable-sized buffers among Size()
// ranks.
//
// A process runs some of the ranks: all of them with Local (ranks are
// goroutines), or one with a communicator over torch.distributed or MPI
// (one process per rank). Buffers are tagged with their memory kind
// (mem.Buffer), so that an implementation over device memory (NCCL) and one
// over host memory (Local, a host's callbacks through the C API) are the
// same interface; an implementation refuses, with an error, a kind it cannot
// move.
type Comm interface {
	// Size returns the number of ranks.
	Size() int
	// LocalRanks returns the ranks this process runs, in increasing order:
	// every rank for Local, one for a process-per-rank communicator. A
	// caller runs each of them (concurrently) in every collective.
	LocalRanks() []int
	// AllToAll sends send[j] to rank j and returns recv where recv[j] came
	// from rank j, on behalf of rank (one of LocalRanks). len(send) must be
	// Size(); send[j] may be empty.
	//
	// Collective: every rank calls it the same number of times, in the same
	// order. ctx cancellation unblocks it with ctx.Err().
	//
	// Streams: a device implementation runs the exchange in stream s's
	// order (the send buffers are complete in that order, and recv is
	// complete in that order once AllToAll returns); host implementations
	// ignore s (pass mem.NoStream).
	//
	// Ownership: the caller must not modify the buffers in send until its
	// next call to AllToAll on the same Comm has returned, and must treat
	// recv as read-only and stop using it when it next calls AllToAll
	// (implementations may hand out the sender's memory without a copy).
	AllToAll(ctx context.Context, rank int, send []mem.Buffer, s mem.Stream) ([]mem.Buffer, error)
	// Dup returns a new communicator over the same ranks whose rounds are
	// independent of this one's (MPI_Comm_dup): two stages exchanging
	// concurrently each use their own, so their rounds never pair up.
	Dup() (Comm, error)
}

// ErrAborted is wrapped by the errors a Local returns after one of its ranks
// aborted the collective (cancelled context or invalid arguments).
var ErrAborted = errors.New("comm: collective aborted")

// Local is an in-process Comm for ranks that are goroutines of one process.
// It is safe for concurrent use by its ranks (one outstanding call per rank)
// and reusable for any number of rounds until it is aborted.
type Local struct {
	size int

	mu       sync.Mutex
	calls    []uint64          // per rank: calls started so far
	rounds   map[uint64]*round // rounds not yet collected by every rank
	abortErr error
	aborted  chan struct{} // closed on abort
}

type round struct {
	send      [][]mem.Buffer // send[from]
	arrived   int
	collected int
	done      chan struct{} // closed when every rank has arrived
}

var _ Comm = (*Local)(nil)

// NewLocal returns a Local for size ranks. A size < 1 gives a Local whose
// calls all fail (NewLocal itself never panics).
func NewLocal(size int) *Local {
	l := &Local{size: size, rounds: map[uint64]*round{}, aborted: make(chan struct{})}
	if size > 0 {
		l.calls = make([]uint64, size)
	}
	return l
}

// Size implements Comm.
func (l *Local) Size() int { return l.size }

// LocalRanks implements Comm: every rank [0, Size()).
func (l *Local) LocalRanks() []int {
	r := make([]int, max(l.size, 0))
	for i := range r {
		r[i] = i
	}
	return r
}

// Dup implements Comm: a fresh Local of the same size (usable even when l
// has been aborted).
func (l *Local) Dup() (Comm, error) { return NewLocal(l.size), nil }

// abort records cause (the first one wins) and wakes every pending call.
func (l *Local) abort(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.abortLocked(cause)
}

func (l *Local) abortLocked(cause error) {
	if l.abortErr == nil {
		l.abortErr = fmt.Errorf("%w: %w", ErrAborted, cause)
		close(l.aborted)
	}
}

// AllToAll implements Comm for host and pinned buffers (a device buffer is
// an invalid argument); s is ignored. See the package documentation for how
// a cancellation on one rank propagates to the others.
func (l *Local) AllToAll(ctx context.Context, rank int, send []mem.Buffer, _ mem.Stream) ([]mem.Buffer, error) {
	if l == nil {
		return nil, errors.New("comm: AllToAll on a nil *Local")
	}
	if l.size < 1 {
		return nil, fmt.Errorf("comm: Local has size %d (want >= 1)", l.size)
	}
	if rank < 0 || rank >= l.size {
		err := fmt.Errorf("comm: rank = %d is out of range [0, %d)", rank, l.size)
		l.abort(err)
		return nil, err
	}
	if len(send) != l.size {
		err := fmt.Errorf("comm: rank %d: len(send) = %d (want %d, one buffer per rank)", rank, len(send), l.size)
		l.abort(err)
		return nil, err
	}
	for j, b := range send {
		if !b.Device().Kind.HostAccessible() {
			err := fmt.Errorf("comm: rank %d: send[%d] is %s memory; Local moves host memory only", rank, j, b.Device())
			l.abort(err)
			return nil, err
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		l.abort(fmt.Errorf("rank %d: %w", rank, err))
		return nil, err
	}

	l.mu.Lock()
	if l.abortErr != nil {
		err := l.abortErr
		l.mu.Unlock()
		return nil, err
	}
	k := l.calls[rank]
	l.calls[rank]++
	rd := l.rounds[k]
	if rd == nil {
		rd = &round{send: make([][]mem.Buffer, l.size), done: make(chan struct{})}
		l.rounds[k] = rd
	}
	rd.send[rank] = send
	rd.arrived++
	if rd.arrived == l.size {
		close(rd.done)
	}
	l.mu.Unlock()

	select {
	case <-rd.done:
	case <-ctx.Done():
		// Prefer a completed round over a late cancellation.
		select {
		case <-rd.done:
		default:
			l.abort(fmt.Errorf("rank %d: %w", rank, ctx.Err()))
			return nil, ctx.Err()
		}
	case <-l.aborted:
		select {
		case <-rd.done:
		default:
			l.mu.Lock()
			err := l.abortErr
			l.mu.Unlock()
			return nil, err
		}
	}

	// Every write to rd.send happened before close(rd.done).
	recv := make([]mem.Buffer, l.size)
	for j := range recv {
		recv[j] = rd.send[j][rank]
	}
	l.mu.Lock()
	rd.collected++
	if rd.collected == l.size {
		delete(l.rounds, k)
	}
	l.mu.Unlock()
	return recv, nil
}
