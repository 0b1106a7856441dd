package sample

import (
	"fmt"
	"unsafe"

	"github.com/graphferry/graphferry/engine/mem"
)

// Messages are little arrays of int64 carried by comm.Comm as mem.Buffers.
// This (host) implementation keeps them in host memory and reads what it
// receives through byte views, without copies; a device stage would keep
// its messages on the device and read them there, with the same layouts:
//
// shuffle (requester -> owner), one per owner with tasks:
//
//	[key, v_0, ..., v_{n-1}]                 node-wise sampling
//	[key, v_0, ..., v_{n-1}, c_0, ..., c_{n-1}]  layer-wise: c_i draws for v_i
//	[key, v_0, ..., v_{n-1}, w_0, ..., w_{n-1}]  walks: w_i the walker's index
//
// where the v are internal ids owned by the receiver.
//
// reshuffle (owner -> requester), answering the tasks in the order received:
//
//	[c_0, ..., c_{n-1}, u_0, ..., u_{m-1}, e_0, ..., e_{m-1}]  sampling
//	[u_0, ..., u_{n-1}, e_0, ..., e_{n-1}]                     walks
//
// where c_i is the number of neighbours sampled for v_i, m = sum c_i, u the
// sampled neighbours (internal ids; -1 for a walker without a step) and e
// their edge ids, task after task. An empty message (no tasks) is an empty
// buffer.

// message returns s as a host buffer (no copy).
func message(s []int64) mem.Buffer { return mem.HostBuffer(int64Bytes(s)) }

// messageInt64s views a received message as int64s (see bytesInt64); a
// message in memory the host cannot read is an error.
func messageInt64s(b mem.Buffer) ([]int64, error) {
	raw, err := b.HostBytes("the message")
	if err != nil {
		return nil, err
	}
	return bytesInt64(raw)
}

// int64Bytes views s as bytes (no copy).
func int64Bytes(s []int64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*8)
}

// bytesInt64 views b as int64s, copying only when b is not 8-byte aligned.
func bytesInt64(b []byte) ([]int64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("sample: received a message of %d bytes (want a multiple of 8)", len(b))
	}
	if len(b) == 0 {
		return nil, nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%8 == 0 {
		return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8), nil
	}
	s := make([]int64, len(b)/8)
	copy(int64Bytes(s), b)
	return s, nil
}

// shuffleMessages groups the frontier by owning patch. owners[i] is the
// owner of frontier[i] (nil when there is a single patch). The messages
// live in ws. Each of extras (len(frontier) values each: LayerWise's
// per-task counts, RandomWalk's walker indices, Disjoint's subgraph indices
// and temporal cutoffs) is a column: each message carries its tasks' values
// of every column after the tasks, column after column, in task order.
func (s *call) shuffleMessages(ws *workspace, frontier []int64, key uint64, extras ...[]int64) ([]mem.Buffer, []int32) {
	size := s.c.Size()
	send := ws.shufSend
	clear(send)
	if len(frontier) == 0 {
		return send, nil
	}
	cols := len(extras)
	if size == 1 {
		n := len(frontier)
		buf := grow64(ws.shuf[0], 1+n*(1+cols))
		ws.shuf[0] = buf
		buf[0] = int64(key)
		copy(buf[1:], frontier)
		for c, x := range extras {
			copy(buf[1+n*(1+c):], x)
		}
		send[0] = message(buf)
		return send, nil
	}
	owners := grow32(ws.owners, len(frontier))
	ws.owners = owners
	if ws.ownerCount == nil {
		ws.ownerCount = make([]int, size)
	}
	count := ws.ownerCount
	clear(count)
	for i, v := range frontier {
		o := s.owner(v)
		owners[i] = int32(o)
		count[o]++
	}
	if cols > 0 {
		if ws.ownerTasks == nil {
			ws.ownerTasks = make([]int, size)
		}
		copy(ws.ownerTasks, count)
	}
	for o, c := range count {
		if c > 0 {
			b := grow64(ws.shuf[o], 1+c*(1+cols))
			ws.shuf[o] = b
			b[0] = int64(key)
			count[o] = 1 // next free slot
		}
	}
	for i, v := range frontier {
		o := owners[i]
		b := ws.shuf[o]
		b[count[o]] = v
		for c, x := range extras {
			b[count[o]+(c+1)*ws.ownerTasks[o]] = x[i]
		}
		count[o]++
	}
	for o, c := range count {
		if c > 0 {
			if cols > 0 {
				c += cols * ws.ownerTasks[o]
			}
			send[o] = message(ws.shuf[o][:c])
		}
	}
	return send, owners
}

// inbox is the tasks one rank received from one requester.
type inbox struct {
	key   uint64
	tasks []int64
	fans  []int64 // LayerWise: per-task fanouts (nil: the hop's fanout); walks: walker indices
	subs  []int64 // Disjoint: per-task subgraph index (position of its root in the batch)
	cuts  []int64 // temporal: per-task cutoff time (its root's seed time)
	base  int     // index of tasks[0] in the flattened task list
}

// answerSlots returns the neighbour and edge-id slots [off, off+c) of an
// answer out to ntasks tasks (laid out as counts, neighbours, edge ids).
func answerSlots(out []int64, ntasks int, off, c int64) (nb, eb []int64) {
	n := int64(ntasks)
	m := (int64(len(out)) - n) / 2
	return out[n+off : n+off+c], out[n+m+off : n+m+off+c]
}

// readInboxes parses the task messages recv (recv[j] from rank j: the
// batch key, then the tasks, then cols columns of one value per task) into
// in, and returns the number of tasks. The columns go to fans, subs and
// cuts as lay says. where ("hop 2") and kind ("a layer-wise") name the
// round and the message in errors.
func readInboxes(in []inbox, recv []mem.Buffer, lay layout, where, kind string) (int, error) {
	cols := lay.cols()
	total := 0
	for j, b := range recv {
		m, err := messageInt64s(b)
		if err != nil {
			return 0, fmt.Errorf("sample: %s: from rank %d: %w", where, j, err)
		}
		in[j] = inbox{base: total}
		if len(m) == 0 {
			continue
		}
		in[j].key = uint64(m[0])
		if (len(m)-1)%(1+cols) != 0 {
			return 0, fmt.Errorf("sample: %s: from rank %d: %s message of %d values", where, j, kind, len(m))
		}
		k := (len(m) - 1) / (1 + cols)
		in[j].tasks = m[1 : 1+k]
		c := 1 + k
		if lay.fans {
			in[j].fans, c = m[c:c+k], c+k
		}
		if lay.subs {
			in[j].subs, c = m[c:c+k], c+k
		}
		if lay.cuts {
			in[j].cuts = m[c : c+k]
		}
		total += k
	}
	return total, nil
}

// layout says which columns a shuffle message carries after its tasks, in
// this order.
type layout struct{ fans, subs, cuts bool }

func (l layout) cols() int {
	n := 0
	for _, b := range []bool{l.fans, l.subs, l.cuts} {
		if b {
			n++
		}
	}
	return n
}

// inboxOf returns the index of the inbox holding task t (an index into the
// flattened task list), searching from inbox j on: passes visit tasks in
// increasing order.
func inboxOf(in []inbox, j, t int) int {
	for t >= in[j].base+len(in[j].tasks) {
		j++
	}
	return j
}

// task returns task t's node and fan-out: its own count when the inbox
// carries counts (LayerWise), else fanout.
func (ib *inbox) task(t, fanout int) (int64, int) {
	i := t - ib.base
	if ib.fans != nil {
		return ib.tasks[i], int(ib.fans[i])
	}
	return ib.tasks[i], fanout
}
