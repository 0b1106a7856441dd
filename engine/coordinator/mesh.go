package coordinator

import (
	"context"
	"fmt"
	"sync"
)

// meshBuffer is the number of messages a link holds before Send blocks.
const meshBuffer = 256

// Mesh is an in-process Transport for ranks that are goroutines of one
// process: a buffered channel per ordered pair of ranks. Kill simulates a
// crashed rank.
type Mesh struct {
	size  int
	links [][]chan []byte // links[from][to]
	dead  []chan struct{} // closed by Kill
	once  []sync.Once
}

// NewMesh returns a Mesh for size ranks (size < 1 gives a Mesh whose
// endpoints all fail).
func NewMesh(size int) *Mesh {
	m := &Mesh{size: max(size, 0)}
	m.links = make([][]chan []byte, m.size)
	m.dead = make([]chan struct{}, m.size)
	m.once = make([]sync.Once, m.size)
	for i := range m.links {
		m.links[i] = make([]chan []byte, m.size)
		for j := range m.links[i] {
			if i != j {
				m.links[i][j] = make(chan []byte, meshBuffer)
			}
		}
		m.dead[i] = make(chan struct{})
	}
	return m
}

// Endpoint returns rank's end of the mesh. An out-of-range rank gives an
// endpoint whose calls all fail.
func (m *Mesh) Endpoint(rank int) Transport { return &meshEnd{m: m, rank: rank} }

// Kill marks rank as crashed: its pending and later calls, and every call of
// another rank that sends to it or receives from it (once the messages it
// sent before dying are read), fail with ErrPeerLost.
func (m *Mesh) Kill(rank int) {
	if rank >= 0 && rank < m.size {
		m.once[rank].Do(func() { close(m.dead[rank]) })
	}
}

type meshEnd struct {
	m    *Mesh
	rank int
}

func (e *meshEnd) check(peer int) error {
	if e.rank < 0 || e.rank >= e.m.size {
		return fmt.Errorf("ccc: mesh endpoint rank %d is out of range [0, %d)", e.rank, e.m.size)
	}
	if peer < 0 || peer >= e.m.size || peer == e.rank {
		return fmt.Errorf("ccc: mesh rank %d: peer %d is out of range [0, %d) or is itself", e.rank, peer, e.m.size)
	}
	select {
	case <-e.m.dead[e.rank]:
		return fmt.Errorf("%w: rank %d itself is dead", ErrPeerLost, e.rank)
	default:
	}
	return nil
}

// Send implements Transport.
func (e *meshEnd) Send(ctx context.Context, to int, msg []byte) error {
	if err := e.check(to); err != nil {
		return err
	}
	select {
	case <-e.m.dead[to]:
		return fmt.Errorf("%w: rank %d is dead", ErrPeerLost, to)
	default:
	}
	select {
	case e.m.links[e.rank][to] <- msg:
		return nil
	case <-e.m.dead[to]:
		return fmt.Errorf("%w: rank %d is dead", ErrPeerLost, to)
	case <-e.m.dead[e.rank]:
		return fmt.Errorf("%w: rank %d itself is dead", ErrPeerLost, e.rank)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Recv implements Transport.
func (e *meshEnd) Recv(ctx context.Context, from int) ([]byte, error) {
	if err := e.check(from); err != nil {
		return nil, err
	}
	link := e.m.links[from][e.rank]
	select {
	case msg := <-link: // what a dead rank sent before dying still arrives
		return msg, nil
	default:
	}
	select {
	case msg := <-link:
		return msg, nil
	case <-e.m.dead[from]:
		return nil, fmt.Errorf("%w: rank %d is dead", ErrPeerLost, from)
	case <-e.m.dead[e.rank]:
		return nil, fmt.Errorf("%w: rank %d itself is dead", ErrPeerLost, e.rank)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
