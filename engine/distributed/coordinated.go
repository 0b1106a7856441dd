package distributed

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/coordinator"
	"github.com/graphferry/graphferry/engine/mem"
)

// CoordinatedComm returns a Comm over c (one rank per process, such as a
// comm.Host) whose collectives coord launches in its global order (DSP's
// CCC, engine/coordinator): every AllToAll is one exchange of a stage, and Dup gives
// a new stage over the SAME channel c. Because coord starts the exchanges of
// all stages in one order on every rank, one after the other (Window 1),
// stages that exchange concurrently (the sampler workers of a loader) can
// share a host's single channel without their rounds pairing up across
// stages. Stages are numbered in the order of Dup calls (the original is
// stage 0): every rank must Dup in the same order, as a loader's workers do.
//
// coord's Window must be 1 (the exchanges share c), and its transport must
// not be c. The returned Comm is an io.Closer that closes coord: a loader
// opened on it (OpenLoader, Part.OpenLoader) closes it with itself.
func CoordinatedComm(c comm.Comm, coord *coordinator.Coordinator) (comm.Comm, error) {
	if c == nil || coord == nil {
		return nil, errors.New("distributed: CoordinatedComm needs a communicator and a coordinator")
	}
	return &coordComm{c: c, coord: coord, stages: new(atomic.Uint32)}, nil
}

type coordComm struct {
	c      comm.Comm
	coord  *coordinator.Coordinator
	stages *atomic.Uint32 // stages handed out by Dup, shared by the dups
	stage  uint32

	mu  sync.Mutex // one exchange of a stage at a time (the coordinator's rule)
	seq uint64
}

// Close closes the coordinator (a loader opened on the comm does it when it
// is closed).
func (k *coordComm) Close() error { return k.coord.Close() }

func (k *coordComm) Size() int         { return k.c.Size() }
func (k *coordComm) LocalRanks() []int { return k.c.LocalRanks() }

func (k *coordComm) Dup() (comm.Comm, error) {
	return &coordComm{c: k.c, coord: k.coord, stages: k.stages, stage: k.stages.Add(1)}, nil
}

func (k *coordComm) AllToAll(ctx context.Context, rank int, send []mem.Buffer, s mem.Stream) ([]mem.Buffer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	id := coordinator.ID{Stage: k.stage, Seq: k.seq}
	k.seq++
	var recv []mem.Buffer
	err := k.coord.Run(ctx, id, func(ctx context.Context) error {
		var err error
		recv, err = k.c.AllToAll(ctx, rank, send, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return recv, nil
}
