package coordinator

import (
	"context"
	"fmt"
	"sync"
)

// fakeNet is a collective that behaves like NCCL's where deadlocks are
// concerned:
//   - each stage has its own communicator, whose k-th calls on all ranks
//     pair up into round k; a round completes when every rank has entered
//     it. Ranks whose k-th calls name different exchanges are refused with
//     an error (NCCL would silently pair them);
//   - with slotted set, each rank has one execution slot that a collective
//     holds from the moment it starts until it completes, as a communication
//     kernel holds the SMs it was given: a second collective on that rank
//     cannot start meanwhile.
//
// Each rank contributes a value and receives every rank's value for the same
// round, so a test can check that the right exchanges paired.
type fakeNet struct {
	size    int
	slotted bool

	slots []chan struct{} // per rank, capacity 1, when slotted

	mu      sync.Mutex
	calls   map[[2]int]int // (stage, rank) -> calls so far
	rounds  map[[2]int]*fakeRound
	holding []*fakeRound // per rank: the round holding its slot, or nil
}

type fakeRound struct {
	id      ID
	vals    []uint64
	entered []bool
	arrived int
	taken   int
	done    chan struct{}
}

func newFakeNet(size int, slotted bool) *fakeNet {
	f := &fakeNet{size: size, slotted: slotted, calls: map[[2]int]int{}, rounds: map[[2]int]*fakeRound{}, holding: make([]*fakeRound, size)}
	if slotted {
		f.slots = make([]chan struct{}, size)
		for i := range f.slots {
			f.slots[i] = make(chan struct{}, 1)
		}
	}
	return f
}

// payload is what rank contributes to exchange id.
func payload(rank int, id ID) uint64 { return uint64(rank)<<48 | uint64(id.Stage)<<32 | id.Seq }

// exchange is rank's part of collective id: it returns every rank's payload.
func (f *fakeNet) exchange(ctx context.Context, rank int, id ID) ([]uint64, error) {
	if f.slotted {
		select {
		case f.slots[rank] <- struct{}{}:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		defer func() { <-f.slots[rank] }()
	}

	f.mu.Lock()
	key := [2]int{int(id.Stage), rank}
	k := f.calls[key]
	f.calls[key]++
	rkey := [2]int{int(id.Stage), k}
	rd := f.rounds[rkey]
	if rd == nil {
		rd = &fakeRound{id: id, vals: make([]uint64, f.size), entered: make([]bool, f.size), done: make(chan struct{})}
		f.rounds[rkey] = rd
	}
	if rd.id != id {
		f.mu.Unlock()
		return nil, fmt.Errorf("fake collective: stage %d call %d: rank %d entered %v but another rank entered %v", id.Stage, k, rank, id, rd.id)
	}
	rd.vals[rank] = payload(rank, id)
	rd.entered[rank] = true
	rd.arrived++
	if rd.arrived == f.size {
		close(rd.done)
	}
	if f.slotted {
		f.holding[rank] = rd
	}
	f.mu.Unlock()

	var err error
	select {
	case <-rd.done:
	case <-ctx.Done():
		err = context.Cause(ctx)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.slotted {
		f.holding[rank] = nil
	}
	if err != nil {
		return nil, err
	}
	rd.taken++
	if rd.taken == f.size {
		delete(f.rounds, rkey)
	}
	return append([]uint64(nil), rd.vals...), nil
}

// holds reports whether rank's slot is held by exchange id.
func (f *fakeNet) holds(rank int, id ID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.holding[rank] != nil && f.holding[rank].id == id
}

// deadlock returns a description of a cycle of ranks whose slots are held by
// collectives that can never complete, or "" if there is none. Rank r waits
// for rank q when the collective holding r's slot lacks q and q's slot is
// held by another collective: that one must complete before q can enter.
// Slots are released only on completion, so a cycle of waits is permanent.
func (f *fakeNet) deadlock() string {
	if !f.slotted {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	next := make([]int, f.size) // one wait edge per rank is enough to find a cycle
	for r := range next {
		next[r] = -1
		rd := f.holding[r]
		if rd == nil || rd.arrived == f.size {
			continue
		}
		for q := 0; q < f.size; q++ {
			if !rd.entered[q] && f.holding[q] != nil && f.holding[q] != rd {
				next[r] = q
				break
			}
		}
	}
	for start := range next {
		seen := map[int]bool{}
		for r := start; r >= 0 && !seen[r]; r = next[r] {
			seen[r] = true
			if next[r] == start {
				desc := ""
				for q := start; ; {
					desc += fmt.Sprintf("rank %d holds %v and waits for rank %d; ", q, f.holding[q].id, next[q])
					if q = next[q]; q == start {
						return desc
					}
				}
			}
		}
	}
	return ""
}
