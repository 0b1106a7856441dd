package device

import (
	"errors"
	"sync"

	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
)

// PerThread is the stream handle of a thread's own default stream (CUDA's
// CU_STREAM_PER_THREAD): the same handle names a different stream on every
// thread, so work ordered after it must be queued on the consumer's thread.
const PerThread mem.Stream = 2

// Session is a device loader's side of its batches' device memory: the
// batches open and the tensors taken out of them (each a user), the
// allocators that memory goes back to, the consumer's stream, and the
// device's teardown, which waits until the loader is closed and its last
// user is gone. Safe for concurrent use.
type Session struct {
	id       uint64
	ordinal  int
	consumer mem.Stream
	dev      Device
	teardown func() error

	mu          sync.Mutex
	allocs      []mem.BufferAllocator
	outstanding int
	closed      bool
	// deferred are frees after a consumer's per-thread stream, waiting for
	// a call on the thread that took the tensor.
	deferred []Freed
}

// Freed is a taken device tensor whose owner let go of it: its memory is
// reused after the work queued on Stream when it is given back (Stream
// PerThread: the per-thread stream of thread Thread).
type Freed struct {
	Alloc  int // Session.AllocIndex of the allocator
	Ptr    uintptr
	Stream mem.Stream
	Thread int64
}

var sessions = struct {
	sync.Mutex
	next uint64
	m    map[uint64]*Session
}{m: map[uint64]*Session{}}

// NewSession returns the session of a device loader over st (opened for
// o), registered for Find; it owns st from now on (the teardown).
func NewSession(o Options, st Stages) *Session {
	sessions.Lock()
	defer sessions.Unlock()
	sessions.next++
	s := &Session{id: sessions.next, ordinal: o.Ordinal, consumer: o.Stream, dev: st.Device, teardown: st.Close}
	sessions.m[s.id] = s
	return s
}

// Find returns the session of id (nil once it is torn down).
func Find(id uint64) *Session {
	sessions.Lock()
	defer sessions.Unlock()
	return sessions.m[id]
}

// ID is the session's id (Find).
func (s *Session) ID() uint64 { return s.id }

// Ordinal is the device's ordinal.
func (s *Session) Ordinal() int { return s.ordinal }

// Consumer is the consumer's stream of the loader's options.
func (s *Session) Consumer() mem.Stream { return s.consumer }

// Deliver makes batch b ready for the loader's consumer stream (its Ready
// event waited on by it, the host not waiting) and counts it as a user of
// the device; the caller ends it with Release.
func (s *Session) Deliver(b *pipeline.Batch) error {
	if s.consumer != mem.NoStream {
		if err := s.dev.WaitOn(s.consumer, b.Ready()); err != nil {
			return err
		}
	}
	s.hold()
	return nil
}

// WaitOn makes stream st wait for batch b (gf_batch_wait_stream).
func (s *Session) WaitOn(st mem.Stream, b *pipeline.Batch) error { return s.dev.WaitOn(st, b.Ready()) }

// Release releases a delivered batch, its device memory after the work
// queued on stream after (mem.NoStream: the batch's own stream), and ends
// its use of the device.
func (s *Session) Release(b *pipeline.Batch, after mem.Stream) error {
	if after != mem.NoStream {
		b.ReleaseAfter(after)
	} else {
		b.Release()
	}
	return s.drop()
}

// Take moves device tensor t of batch b out of the batch (its DevicePtr
// set to 0: the batch no longer frees it) and counts it as a user; its
// memory comes back through Give with the returned allocator index.
func (s *Session) Take(b *pipeline.Batch, t *mem.Tensor) (alloc int) {
	alloc = s.AllocIndex(b.DeviceAllocator())
	s.hold()
	t.DevicePtr = 0
	return alloc
}

// AllocIndex returns a's index among the session's allocators (adding it).
func (s *Session) AllocIndex(a mem.BufferAllocator) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, b := range s.allocs {
		if b == a {
			return i
		}
	}
	s.allocs = append(s.allocs, a)
	return len(s.allocs) - 1
}

// Give gives back the memory of taken tensors whose owners let go of them,
// each after its stream's work, on thread here (the caller's). A tensor
// released after a per-thread stream (PerThread) of another thread waits
// for a call on that thread (or the teardown, which quiesces the device).
func (s *Session) Give(here int64, freed ...Freed) error {
	s.mu.Lock()
	var keep []Freed
	todo := append(s.deferred, freed...)
	s.deferred = nil
	for _, f := range todo {
		if f.Stream == PerThread && f.Thread != here {
			keep = append(keep, f)
			continue
		}
		s.free(f, f.Stream)
	}
	s.deferred = keep
	s.outstanding -= len(todo) - len(keep)
	last := s.lastLocked()
	s.mu.Unlock()
	if last {
		return s.finish()
	}
	return nil
}

// lastLocked reports whether the loader is closed and every remaining user
// is a free waiting for its consumer's thread (s.mu held): the device can
// be torn down (after quiescing it).
func (s *Session) lastLocked() bool { return s.closed && s.outstanding == len(s.deferred) }

// free gives f's memory back after stream st (s.mu held).
func (s *Session) free(f Freed, st mem.Stream) {
	if f.Alloc >= 0 && f.Alloc < len(s.allocs) {
		s.allocs[f.Alloc].FreeBuffer(mem.DeviceBuffer(f.Ptr, 0, s.ordinal), st)
	}
}

// Close is the loader's end (after its pipeline closed): the device is
// torn down now, or when its last user is gone.
func (s *Session) Close() error {
	s.mu.Lock()
	s.closed = true
	last := s.lastLocked()
	s.mu.Unlock()
	if last {
		return s.finish()
	}
	return nil
}

func (s *Session) hold() {
	s.mu.Lock()
	s.outstanding++
	s.mu.Unlock()
}

// drop ends one user, tearing the device down when it was the last of a
// closed loader.
func (s *Session) drop() error {
	s.mu.Lock()
	s.outstanding--
	last := s.lastLocked()
	s.mu.Unlock()
	if last {
		return s.finish()
	}
	return nil
}

// Discard tears down the stages of a session whose loader never opened.
func (s *Session) Discard() error { return s.finish() }

// finish forgets s and tears its device down (once). Frees still waiting
// for their consumer's thread are given back after the device quiesced.
func (s *Session) finish() error {
	sessions.Lock()
	_, ok := sessions.m[s.id]
	delete(sessions.m, s.id)
	sessions.Unlock()
	if !ok {
		return nil
	}
	var errs []error
	s.mu.Lock()
	if len(s.deferred) > 0 {
		errs = append(errs, s.dev.Quiesce())
		for _, f := range s.deferred {
			s.free(f, mem.NoStream)
		}
		s.outstanding -= len(s.deferred)
		s.deferred = nil
	}
	s.mu.Unlock()
	return errors.Join(append(errs, s.teardown())...)
}
