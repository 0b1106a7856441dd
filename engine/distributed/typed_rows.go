package distributed

import (
	"context"
	"fmt"
	"sort"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
)

// Per-type node data on typed parts. A typed part's loaders accept
// per-type names ("<type>/<name>") among their feature and label names,
// which a replicated graph's loader refuses (there the caller gathers them
// from the whole arrays): NodeData[name] of a batch then holds one row per
// batch node of that type (label names: per seed of that type), in batch
// order, which is the order of that type's nodes in the batch's typed view
// (pipeline.TypedView). dsp and hybrid ranks fetch them from the owners in
// the batch's exchange round; a self-reliant rank gathers its own.

// typeAt returns the index t with start[t] <= r < start[t+1].
func typeAt(start []int64, r int64) int {
	return sort.Search(len(start)-1, func(i int) bool { return start[i+1] > r })
}

// typedTables computes what the loaders of a typed self-reliant part of d
// need to find per-type rows: typedRow, each local row's rank among the
// rank's nodes of its type (dsp and hybrid loaders ask the ranks:
// typeStarts).
func (p *Part) typedTables(d *rankpart.Part) {
	ty := d.Types
	if ty == nil || d.Layout != rankpart.LayoutSelfReliant {
		return
	}
	count := make([]int64, len(ty.NodeTypes))
	p.typedRow = make([]int64, len(d.GlobalIDs))
	for l, v := range d.GlobalIDs {
		t := typeAt(ty.NodeOffsets, v)
		p.typedRow[l] = count[t]
		count[t]++
	}
}

// typeStarts returns, for every rank q of a typed dsp or hybrid part's
// group, where q's owned nodes of each type start among its rows (T+1
// entries): q's range of new ids holds its nodes in increasing original
// id, and a type owns consecutive original ids, so they follow from the
// ranks' counts of owned nodes per type, which one all-to-all over c
// gives every rank (a collective of the loaders' open). nil on an untyped
// part.
func (p *Part) typeStarts(c comm.Comm) ([][]int64, error) {
	if p.types == nil || p.layout == rankpart.LayoutSelfReliant {
		return nil, nil
	}
	send := make([]mem.Buffer, c.Size())
	for j := range send {
		send[j] = mem.HostBuffer(mem.Bytes(p.typeOwned))
	}
	recv, err := c.AllToAll(context.Background(), p.info.Rank, send, mem.NoStream)
	if err != nil {
		return nil, err
	}
	T := len(p.typeOwned)
	out := make([][]int64, len(recv))
	for q, b := range recv {
		if b.Len() != 8*T {
			return nil, fmt.Errorf("rank %d sent %d bytes of per-type counts (want %d)", q, b.Len(), 8*T)
		}
		out[q] = make([]int64, T+1)
		for t, k := range mem.Int64s(b.Bytes()) {
			if k < 0 || k > p.meta.Ranks[q].NumOwned {
				return nil, fmt.Errorf("rank %d says it owns %d nodes of type %d (of its %d)", q, k, t, p.meta.Ranks[q].NumOwned)
			}
			out[q][t+1] = out[q][t] + k
		}
		if out[q][T] != p.meta.Ranks[q].NumOwned {
			return nil, fmt.Errorf("rank %d's per-type counts add up to %d, not its %d owned nodes", q, out[q][T], p.meta.Ranks[q].NumOwned)
		}
	}
	return out, nil
}

// nameType returns the node type of a per-type name of store (-1 for a
// global name, or on an untyped part).
func (p *Part) nameType(store *feature.Store) func(string) int {
	return func(name string) int {
		if p.types == nil || !store.IsLocal(name) {
			return -1
		}
		nt, _, ok := p.types.SplitName(name)
		if !ok {
			return -1
		}
		return nt
	}
}

// hasTyped says whether a list names per-type data.
func hasTyped(nameType func(string) int, lists ...[]string) bool {
	for _, list := range lists {
		for _, name := range list {
			if nameType(name) >= 0 {
				return true
			}
		}
	}
	return false
}

// typedRows returns, of rows (relative to rank q's patch), those of
// q's nodes of type nt, as rows of q's per-type arrays of that type.
func (x *rowExchange) typedRows(q, nt int, rows []int64) []int64 {
	start := x.typeStart[q]
	out := make([]int64, 0, len(rows))
	for _, r := range rows {
		if r >= start[nt] && r < start[nt+1] {
			out = append(out, r-start[nt])
		}
	}
	return out
}

// localRows is a typed self-reliant part's RowLoader: it gathers the
// global and per-type node data of a batch from the rank's own rows, with
// no exchange.
type localRows struct {
	p        *Part
	store    *feature.Store
	nameType func(string) int
}

var _ pipeline.RowLoader = (*localRows)(nil)

func (l *localRows) LoadRows(_ context.Context, _ int, b *pipeline.Batch, nodes []int64, numSeeds int, featureNames, labelNames []string, threads int) (feature.TierCounts, error) {
	var tc feature.TierCounts
	p := l.p
	for k, list := range [][]string{featureNames, labelNames} {
		ids := nodes
		if k == 1 {
			ids = nodes[:numSeeds]
		}
		for _, name := range list {
			src, ok := l.store.Get(name)
			if !ok {
				return tc, fmt.Errorf("no node data named %q on rank %d", name, p.info.Rank)
			}
			nt := l.nameType(name)
			rows := make([]int64, 0, len(ids))
			for _, v := range ids {
				if v < 0 || v >= int64(len(p.localRow)) || p.localRow[v] < 0 {
					return tc, fmt.Errorf("node %d is not held by rank %d", v, p.info.Rank)
				}
				lr := p.localRow[v]
				if nt < 0 {
					rows = append(rows, lr)
				} else if typeAt(p.types.NodeOffsets, v) == nt {
					rows = append(rows, p.typedRow[lr])
				}
			}
			t, err := b.AddNodeData(name, src.DType, len(rows), src.Shape[1:])
			if err != nil {
				return tc, err
			}
			if nt >= 0 {
				err = feature.Gather(t.Data, src, rows, threads)
			} else {
				err = l.store.Gather(name, t.Data, rows, threads)
			}
			if err != nil {
				return tc, err
			}
			tc.Add(feature.HostCounts(len(rows), src.RowBytes()))
		}
	}
	return tc, nil
}
