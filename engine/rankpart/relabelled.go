package rankpart

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// The relabelling of the dsp and hybrid layouts (see NewIDsFile): what the
// writer adds to a partition and what a rank reads of it, so that nothing a
// rank holds grows with the whole graph's node count but the two maps it
// maps from disk.

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
// nodes (O(N/P + halo)), and the two whole maps mapped from disk.
type Relabel struct {
	// Offsets: rank q owns the new ids [Offsets[q], Offsets[q+1]).
	Offsets []int64
	// NewIDs holds the new id of every local node of the rank.
	NewIDs []int64
	// NewToOld and OldToNew are DST/new_to_old.npy and old_to_new.npy,
	// memory-mapped (read-only, paged in where read) until Close.
	NewToOld, OldToNew *fileformat.NPY
}

// Maps returns the mapped maps as int64 slices.
func (r *Relabel) Maps() (newToOld, oldToNew []int64) {
	return mem.Int64s(r.NewToOld.Data), mem.Int64s(r.OldToNew.Data)
}

// Close unmaps the maps. Idempotent.
func (r *Relabel) Close() error {
	var err error
	if r.NewToOld != nil {
		err = r.NewToOld.Close()
	}
	if r.OldToNew != nil {
		err = errors.Join(err, r.OldToNew.Close())
	}
	return err
}

// openRelabel reads the rank's relabelling (dsp, hybrid) and checks it
// against partition.json and the rank's folder: its owned nodes hold the
// rank's range in order, its other nodes lie outside it, the maps have N
// entries, each in [0, N) (read through a small buffer, not the mapping,
// so that a rank maps no more of them than it reads later), and they map
// the rank's owned nodes both ways.
func (p *Part) openRelabel(dst, dir string, opt dataset.OpenOptions) error {
	m, info := &p.Meta, &p.Info
	r := &Relabel{Offsets: make([]int64, m.Parts+1)}
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
	for _, f := range []struct {
		name string
		npy  **fileformat.NPY
	}{{NewToOldFile, &r.NewToOld}, {OldToNewFile, &r.OldToNew}} {
		path, err := fileio.Confine(dst, "relabelling map", f.name)
		if err != nil {
			return err
		}
		if err := checkRecorded(path, f.name, m.Files, opt); err != nil {
			return err
		}
		if err := checkRange(path, m.NumNodes); err != nil {
			return err
		}
		if *f.npy, err = fileformat.ReadNPY(path); err != nil {
			return err
		}
		if a := *f.npy; a.DType != mem.Int64 || len(a.Shape) != 1 || a.Shape[0] != m.NumNodes {
			return fmt.Errorf("dataset: %s is %s %v, want int64 [%d]", path, a.DType, a.Shape, m.NumNodes)
		}
	}
	newToOld, oldToNew := r.Maps()
	for i, v := range p.GlobalIDs[:info.NumOwned] {
		if newToOld[lo+int64(i)] != v || oldToNew[v] != lo+int64(i) {
			return fmt.Errorf("dataset: %s and %s do not map rank %d's owned node %d (local %d) to new id %d and back",
				NewToOldFile, OldToNewFile, info.Rank, v, i, lo+int64(i))
		}
	}
	return nil
}

// checkRange reads the int64 .npy at path through a small buffer and
// checks every entry lies in [0, n).
func checkRange(path string, n int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	head := st.Size() - 8*n
	if head < 0 {
		return fmt.Errorf("dataset: %s has %d bytes, too few for %d int64 entries", path, st.Size(), n)
	}
	if _, err := f.Seek(head, io.SeekStart); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	rd := bufio.NewReaderSize(f, 1<<16)
	var b [8]byte
	for i := range n {
		if _, err := io.ReadFull(rd, b[:]); err != nil {
			return fmt.Errorf("dataset: %s: %w", path, err)
		}
		if v := int64(binary.LittleEndian.Uint64(b[:])); v < 0 || v >= n {
			return fmt.Errorf("dataset: %s[%d] = %d is outside [0, %d)", path, i, v, n)
		}
	}
	return nil
}
