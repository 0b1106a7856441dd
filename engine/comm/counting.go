package comm

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/graphferry/graphferry/engine/mem"
)

// Traffic is what ranks sent through a Counting communicator.
type Traffic struct {
	// Calls counts AllToAll calls (one per rank per collective).
	Calls int64
	// Bytes is the bytes sent to other ranks: what would cross the wire.
	Bytes int64
	// Messages counts the non-empty buffers sent to other ranks.
	Messages int64
	// SelfBytes is the bytes a rank addressed to itself, which an
	// implementation hands back without moving them.
	SelfBytes int64
}

// Add returns the sum of t and u.
func (t Traffic) Add(u Traffic) Traffic {
	return Traffic{Calls: t.Calls + u.Calls, Bytes: t.Bytes + u.Bytes, Messages: t.Messages + u.Messages,
		SelfBytes: t.SelfBytes + u.SelfBytes}
}

// PhaseFunc names the phase of one AllToAll call: call is the 0-based
// index of rank's call on the communicator (counted per rank, from the
// communicator's creation or its last Reset). The traffic of calls with
// the same name adds up.
type PhaseFunc func(rank int, call int64) string

// Counting is a Comm that passes every call to another Comm and counts the
// bytes each rank sends, by rank and phase, without changing what is sent
// or received. A benchmark wraps the communicator of a runtime with it to
// measure an exchange's volume; the wrapped collective is unchanged (the
// counts are taken before the call, so a failed call is counted too).
//
// A Counting is safe for the concurrent use its inner Comm allows.
type Counting struct {
	inner Comm
	phase PhaseFunc

	mu    sync.Mutex
	calls []int64              // per rank: calls since creation or Reset
	byKey map[countKey]Traffic // per (rank, phase)
	dups  []*Counting          // communicators from Dup, counted apart
}

type countKey struct {
	rank  int
	phase string
}

var _ Comm = (*Counting)(nil)

// NewCounting wraps inner. phase names each call's phase; nil puts every
// call in the phase "".
func NewCounting(inner Comm, phase PhaseFunc) (*Counting, error) {
	if inner == nil {
		return nil, errors.New("comm: NewCounting: the inner comm is nil")
	}
	if phase == nil {
		phase = func(int, int64) string { return "" }
	}
	return &Counting{inner: inner, phase: phase, calls: make([]int64, max(inner.Size(), 0)), byKey: map[countKey]Traffic{}}, nil
}

// Inner returns the wrapped communicator.
func (c *Counting) Inner() Comm { return c.inner }

// Size implements Comm.
func (c *Counting) Size() int { return c.inner.Size() }

// LocalRanks implements Comm.
func (c *Counting) LocalRanks() []int { return c.inner.LocalRanks() }

// AllToAll implements Comm: it counts send on behalf of rank, then passes
// the call on. A rank out of range is left to the inner Comm to refuse
// (and is not counted).
func (c *Counting) AllToAll(ctx context.Context, rank int, send []mem.Buffer, s mem.Stream) ([]mem.Buffer, error) {
	if c == nil {
		return nil, errors.New("comm: AllToAll on a nil *Counting")
	}
	if rank >= 0 && rank < len(c.calls) {
		var t Traffic
		t.Calls = 1
		for j, b := range send {
			n := int64(b.Len())
			switch {
			case j == rank:
				t.SelfBytes += n
			case n > 0:
				t.Bytes += n
				t.Messages++
			}
		}
		c.mu.Lock()
		k := c.calls[rank]
		c.calls[rank]++
		c.mu.Unlock()
		// The phase function runs outside the lock: it is the caller's code.
		key := countKey{rank, c.phase(rank, k)}
		c.mu.Lock()
		c.byKey[key] = c.byKey[key].Add(t)
		c.mu.Unlock()
	}
	return c.inner.AllToAll(ctx, rank, send, s)
}

// Dup implements Comm: a Counting over inner's Dup with the same phase
// function and its own call numbering. Its traffic is included in c's
// Traffic and RankTraffic, and Reset resets it too.
func (c *Counting) Dup() (Comm, error) {
	in, err := c.inner.Dup()
	if err != nil {
		return nil, err
	}
	d, err := NewCounting(in, c.phase)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.dups = append(c.dups, d)
	c.mu.Unlock()
	return d, nil
}

// RankTraffic returns, per phase, what rank sent (through c and its Dups).
func (c *Counting) RankTraffic(rank int) map[string]Traffic {
	out := map[string]Traffic{}
	c.collect(func(k countKey, t Traffic) {
		if k.rank == rank {
			out[k.phase] = out[k.phase].Add(t)
		}
	})
	return out
}

// Traffic returns, per phase, what all ranks sent together (through c and
// its Dups).
func (c *Counting) Traffic() map[string]Traffic {
	out := map[string]Traffic{}
	c.collect(func(k countKey, t Traffic) { out[k.phase] = out[k.phase].Add(t) })
	return out
}

// Total returns the traffic of every rank and phase together.
func (c *Counting) Total() Traffic {
	var sum Traffic
	c.collect(func(_ countKey, t Traffic) { sum = sum.Add(t) })
	return sum
}

func (c *Counting) collect(fn func(countKey, Traffic)) {
	c.mu.Lock()
	tally := maps.Clone(c.byKey)
	dups := append([]*Counting(nil), c.dups...)
	c.mu.Unlock()
	for k, t := range tally {
		fn(k, t)
	}
	for _, d := range dups {
		d.collect(fn)
	}
}

// Reset clears the counts and restarts the call numbering of every rank
// (of c and its Dups). Call it between collectives, when no rank is inside
// AllToAll, so that the numbering stays aligned across ranks.
func (c *Counting) Reset() {
	c.mu.Lock()
	clear(c.calls)
	clear(c.byKey)
	dups := append([]*Counting(nil), c.dups...)
	c.mu.Unlock()
	for _, d := range dups {
		d.Reset()
	}
}
