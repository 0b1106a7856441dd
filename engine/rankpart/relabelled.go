package rankpart

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// The relabelling of the dsp and hybrid layouts (see NewIDsFile): what the
// writer adds to a partition and what a rank reads of it, so that nothing a
// rank holds grows with the whole graph's node count. DST/new_to_old.npy and
// old_to_new.npy hold the whole permutation for whoever wants original ids
// of the whole graph; a rank reads its slice of old_to_new.npy alone.

// relabelled says whether the layout numbers the nodes into the ranks'
// consecutive ranges (dsp, hybrid).
func (p *Partitioner) relabelled() bool { return p.opt.Layout != LayoutSelfReliant }

// newIDs numbers the nodes rank by rank (owned[r] increasing): the new id
// of owned[r][i] is the count of the ranks before r's nodes plus i.
func newIDs(owned [][]int64, n int64) []int64 {
	out := make([]int64, n)
	next := int64(0)
	for _, vs := range owned {
		for _, v := range vs {
			out[v] = next
			next++
		}
	}
	return out
}

// gatherIDs returns ids[at[i]] for every i.
func gatherIDs(ids, at []int64) []int64 {
	out := make([]int64, len(at))
	for i, v := range at {
		out[i] = ids[v]
	}
	return out
}

// writeRelabel writes DST/new_to_old.npy and DST/old_to_new.npy (dsp,
// hybrid; removing those of an earlier run otherwise) and returns the
// names written.
func (p *Partitioner) writeRelabel(dst string) ([]string, error) {
	if !p.relabelled() {
		for _, name := range []string{NewToOldFile, OldToNewFile} {
			if err := os.Remove(filepath.Join(dst, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("dataset: %w", err)
			}
		}
		return nil, nil
	}
	newToOld := make([]int64, 0, len(p.newID))
	for _, vs := range p.owned {
		newToOld = append(newToOld, vs...)
	}
	if err := fileformat.WriteNPY(filepath.Join(dst, NewToOldFile), int64Tensor(newToOld)); err != nil {
		return nil, err
	}
	if err := fileformat.WriteNPY(filepath.Join(dst, OldToNewFile), int64Tensor(p.newID)); err != nil {
		return nil, err
	}
	return []string{NewToOldFile, OldToNewFile}, nil
}

// Relabel is what a rank of a dsp or hybrid partition holds of the
// relabelling: the ranks' ranges (O(P)), the new id of each of its local
// nodes (O(N/P + halo)), and its slice of the directory of new ids by
// original id (O(N/P)). The whole maps stay on disk, unread by the ranks.
type Relabel struct {
	// Offsets: rank q owns the new ids [Offsets[q], Offsets[q+1]).
	Offsets []int64
	// NewIDs holds the new id of every local node of the rank.
	NewIDs []int64
	// Directory holds the new ids of the original ids [DirectoryOffsets
	// [rank], DirectoryOffsets[rank+1]) (DST/old_to_new.npy's slice), so
	// that any node's new id is one question to the rank whose slice holds
	// it. DirectoryOffsets are the same on every rank (DirectoryRange).
	Directory        []int64
	DirectoryOffsets []int64
}

// DirectoryRange returns the offsets of the directory's slices: rank q
// holds the new ids of the original ids [off[q], off[q+1]) of n nodes over
// parts ranks (about n/parts each).
func DirectoryRange(n int64, parts int) []int64 {
	off := make([]int64, parts+1)
	for q := range off {
		off[q] = int64((uint64(n) * uint64(q)) / uint64(parts)) // n < 2^40, parts <= 2^16
	}
	return off
}

// openRelabel reads the rank's relabelling (dsp, hybrid) and checks it
// against partition.json and the rank's folder: its owned nodes hold the
// rank's range in order, its other nodes lie outside it, its directory
// slice of DST/old_to_new.npy (read alone: the rest of the file is not
// touched) holds new ids in [0, N) and maps those of its owned nodes that
// fall in it to their new ids.
func (p *Part) openRelabel(dst, dir string, opt dataset.OpenOptions) error {
	m, info := &p.Meta, &p.Info
	r := &Relabel{Offsets: make([]int64, m.Parts+1), DirectoryOffsets: DirectoryRange(m.NumNodes, m.Parts)}
	p.Relabel = r
	for q := range m.Parts {
		own := m.Ranks[q].NumOwned
		if own < 0 || own > m.NumNodes-r.Offsets[q] {
			return fmt.Errorf("dataset: %s: rank %d owns %d nodes, more than the %d the ranks before it leave", PartMetaFile, q, own, m.NumNodes-r.Offsets[q])
		}
		r.Offsets[q+1] = r.Offsets[q] + own
	}
	if r.Offsets[m.Parts] != m.NumNodes {
		return fmt.Errorf("dataset: %s: the ranks own %d nodes, the graph has %d", PartMetaFile, r.Offsets[m.Parts], m.NumNodes)
	}
	var err error
	if r.NewIDs, err = readIDs(dir, NewIDsFile, info.Files, info.NumNodes, m.NumNodes); err != nil {
		return err
	}
	lo, hi := r.Offsets[info.Rank], r.Offsets[info.Rank+1]
	for l, v := range r.NewIDs {
		if own := int64(l) < info.NumOwned; own != (v >= lo && v < hi) || own && v != lo+int64(l) {
			return fmt.Errorf("dataset: %s/%s[%d] = %d, but rank %d owns the new ids [%d, %d) as its first %d local nodes",
				dir, NewIDsFile, l, v, info.Rank, lo, hi, info.NumOwned)
		}
	}
	path, err := fileio.Confine(dst, "relabelling map", OldToNewFile)
	if err != nil {
		return err
	}
	if err := checkRecorded(path, OldToNewFile, m.Files, opt); err != nil {
		return err
	}
	a, err := fileformat.ReadNPY(path) // mapped: only the slice copied below is read
	if err != nil {
		return err
	}
	defer a.Close()
	if a.DType != mem.Int64 || len(a.Shape) != 1 || a.Shape[0] != m.NumNodes {
		return fmt.Errorf("dataset: %s is %s %v, want int64 [%d]", path, a.DType, a.Shape, m.NumNodes)
	}
	dlo, dhi := r.DirectoryOffsets[info.Rank], r.DirectoryOffsets[info.Rank+1]
	r.Directory = make([]int64, dhi-dlo)
	if err := feature.Copy(mem.Bytes(r.Directory), a.Data[8*dlo:8*dhi]); err != nil { // a fault on the mapping is an error
		return fmt.Errorf("dataset: %s: %w", path, err)
	}
	for i, v := range r.Directory {
		if v < 0 || v >= m.NumNodes {
			return fmt.Errorf("dataset: %s[%d] = %d is outside [0, %d)", path, dlo+int64(i), v, m.NumNodes)
		}
	}
	for i, v := range p.GlobalIDs[:info.NumOwned] {
		if v >= dlo && v < dhi && r.Directory[v-dlo] != lo+int64(i) {
			return fmt.Errorf("dataset: %s does not map rank %d's owned node %d (local %d) to new id %d",
				OldToNewFile, info.Rank, v, i, lo+int64(i))
		}
	}
	return nil
}
