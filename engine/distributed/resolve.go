package distributed

import (
	"context"
	"fmt"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/mem"
)

// Original and new ids on a dsp part, which holds no map of the whole
// graph (see Part): a node's original id is its owner's to give (it holds
// its owned nodes' ids), and a node's new id is in the directory, N/P
// entries of DST/old_to_new.npy per rank by ranges of original ids
// (rankpart.DirectoryRange). A batch's nodes get their original ids with
// their rows (rowExchange); a loader's seeds, and an edge batch's
// negatives, get their new ids from the directory (resolve).

// exchangeFunc is one all-to-all of this rank's group: send[j] to rank j,
// recv[j] from rank j (valid until the next exchange on the same channel).
type exchangeFunc func(ctx context.Context, send []mem.Buffer) ([]mem.Buffer, error)

// commExchange is exchangeFunc over c, as rank.
func commExchange(c comm.Comm, rank int) exchangeFunc {
	return func(ctx context.Context, send []mem.Buffer) ([]mem.Buffer, error) {
		return c.AllToAll(ctx, rank, send, mem.NoStream)
	}
}

// resolve returns the new ids of the original ids orig (each in [0, N)),
// asking the ranks whose directory slices hold them (ask), which every
// rank runs, with or without ids.
func (p *Part) resolve(ctx context.Context, exchange exchangeFunc, orig []int64) ([]int64, error) {
	off := p.dirOffsets
	lo, hi := off[p.info.Rank], off[p.info.Rank+1]
	internal, err := ask(ctx, exchange, len(off)-1, orig, p.meta.NumNodes, "new id",
		func(v int64) int { return ownerOf(off, v) },
		func(v int64) (int64, error) {
			if v < lo || v >= hi {
				return 0, fmt.Errorf("the new id of node %d is outside rank %d's directory [%d, %d)", v, p.info.Rank, lo, hi)
			}
			return p.directory[v-lo], nil
		})
	if err != nil {
		return nil, err
	}
	for i, v := range internal {
		if v < 0 || v >= p.meta.NumNodes {
			return nil, fmt.Errorf("node %d was answered new id %d, out of range [0, %d)", orig[i], v, p.meta.NumNodes)
		}
	}
	return internal, nil
}

// ask returns answer(ids[i]) of rank rankOf(ids[i]) for every i (each id
// in [0, n)): one exchange round over exchange among size ranks (two
// all-to-alls: the ids to each rank, the answers back), which every rank
// runs, with or without ids. what names an answer in errors. A rank whose
// answer fails still takes part in the second all-to-all (answering
// nothing, so that the ranks that asked it fail too).
func ask(ctx context.Context, exchange exchangeFunc, size int, ids []int64, n int64, what string,
	rankOf func(int64) int, answer func(int64) (int64, error)) ([]int64, error) {
	asked := make([][]int64, size)
	at := make([][]int, size)
	for i, v := range ids {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("node %d at position %d is out of range [0, %d)", v, i, n)
		}
		q := rankOf(v)
		asked[q] = append(asked[q], v)
		at[q] = append(at[q], i)
	}
	send := make([]mem.Buffer, size)
	for q := range send {
		send[q] = mem.HostBuffer(mem.Bytes(asked[q]))
	}
	recv, err := exchange(ctx, send)
	if err != nil {
		return nil, err
	}
	answers := make([]mem.Buffer, size)
	var failed error
	for q, b := range recv {
		if b.Len()%8 != 0 {
			failed = fmt.Errorf("rank %d asked for %d bytes of node ids (want int64)", q, b.Len())
			break
		}
		asks := mem.Int64s(b.Bytes()) // read before the next exchange
		out := make([]int64, len(asks))
		for k, v := range asks {
			if out[k], failed = answer(v); failed != nil {
				break
			}
		}
		if failed != nil {
			break
		}
		answers[q] = mem.HostBuffer(mem.Bytes(out))
	}
	if failed != nil {
		answers = make([]mem.Buffer, size)
		for q := range answers {
			answers[q] = mem.HostBuffer(nil)
		}
	}
	back, err := exchange(ctx, answers)
	if err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, failed
	}
	out := make([]int64, len(ids))
	for q, b := range back {
		if b.Len() != 8*len(at[q]) {
			return nil, fmt.Errorf("rank %d answered %d bytes for the %ss of %d nodes", q, b.Len(), what, len(at[q]))
		}
		for k, v := range mem.Int64s(b.Bytes()) {
			out[at[q][k]] = v
		}
	}
	return out, nil
}
