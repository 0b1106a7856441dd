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
	off, n := p.dirOffsets, p.meta.NumNodes
	lo, hi := off[p.info.Rank], off[p.info.Rank+1]
	return ask(ctx, exchange, len(off)-1, orig, n, "new id",
		func(v int64) int { return ownerOf(off, v) },
		func(q int, v int64) (int64, error) {
			if v < lo || v >= hi {
				return 0, fmt.Errorf("rank %d asked rank %d for the new id of node %d, outside its directory [%d, %d)", q, p.info.Rank, v, lo, hi)
			}
			return p.directory[v-lo], nil
		}, func(q int, v int64) error {
			if v < 0 || v >= n {
				return fmt.Errorf("rank %d answered new id %d, out of range [0, %d)", q, v, n)
			}
			return nil
		})
}

// ask returns answer(q, ids[i]) of rank q = rankOf(ids[i]) for every i
// (each id in [0, n)): one exchange round over exchange among size ranks
// (two all-to-alls: the ids to each rank, which answers each rank q that
// asked; the answers back, each checked by check when not nil), which
// every rank runs, with or without ids. what names an answer in errors.
func ask(ctx context.Context, exchange exchangeFunc, size int, ids []int64, n int64, what string,
	rankOf func(int64) int, answer func(q int, v int64) (int64, error), check func(q int, v int64) error) ([]int64, error) {
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
	for q, b := range recv {
		if b.Len()%8 != 0 {
			return nil, fmt.Errorf("rank %d asked for %d bytes of node ids (want int64)", q, b.Len())
		}
		asks := mem.Int64s(b.Bytes()) // read before the next exchange
		out := make([]int64, len(asks))
		for k, v := range asks {
			if out[k], err = answer(q, v); err != nil {
				return nil, err
			}
		}
		answers[q] = mem.HostBuffer(mem.Bytes(out))
	}
	back, err := exchange(ctx, answers)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(ids))
	for q, b := range back {
		if b.Len() != 8*len(at[q]) {
			return nil, fmt.Errorf("rank %d answered %d bytes for the %ss of %d nodes", q, b.Len(), what, len(at[q]))
		}
		for k, v := range mem.Int64s(b.Bytes()) {
			if check != nil {
				if err := check(q, v); err != nil {
					return nil, err
				}
			}
			out[at[q][k]] = v
		}
	}
	return out, nil
}
