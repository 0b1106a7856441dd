package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/graphferry/graphferry/engine/rankpart"
)

// scaleReport is ranks_fit.json: the rows, the graph, and the fitted
// model rss_per_rank = PerOwned x owned + PerHalo x halo + PerRank.
type scaleReport struct {
	Graph    graphSpec `json:"graph"`
	Edges    int64     `json:"edges"`
	Rows     []rankRow `json:"rows"`
	PerOwned float64   `json:"bytes_per_owned_node"`
	PerHalo  float64   `json:"bytes_per_halo_node"`
	PerRank  float64   `json:"bytes_per_rank"`
	// Residuals are measured minus fitted, per row.
	Residuals []float64 `json:"residuals"`
	// PlanPerOwned and PlanPerHalo fit the memory plan the same way
	// (PlanPerRank its constant).
	PlanPerOwned float64 `json:"plan_bytes_per_owned_node"`
	PlanPerHalo  float64 `json:"plan_bytes_per_halo_node"`
	PlanPerRank  float64 `json:"plan_bytes_per_rank"`
}

// runScale writes the graph and its partitions under cache and measures
// every rank count in a child process of this program.
func runScale(spec graphSpec, counts []int, cache string) (scaleReport, error) {
	rep := scaleReport{Graph: spec}
	src := filepath.Join(cache, fmt.Sprintf("graph-%d-%g-%d", spec.Nodes, spec.EdgeFactor, spec.FeatDim))
	if err := writeGraph(spec, src); err != nil {
		return rep, err
	}
	exe, err := os.Executable()
	if err != nil {
		return rep, err
	}
	for _, p := range counts {
		dst := filepath.Join(src+"-parts", fmt.Sprint(p))
		if err := partitionInto(src, dst, p); err != nil {
			return rep, err
		}
		if rep.Edges == 0 {
			meta, err := readPartMeta(dst)
			if err != nil {
				return rep, err
			}
			rep.Edges = meta.NumEdges
		}
		row, err := measureRanks(exe, nil, childArgs{Dst: dst, Parts: p, Seeds: 16384, BatchSize: 512, Fanouts: []int{10, 5}})
		if err != nil {
			return rep, err
		}
		fmt.Printf("%d ranks: %.1f MB a rank measured (anon %.1f, file %.1f), plan %.1f MB, owned %.0f, halo %.0f\n", p,
			float64(row.RSSBytesPerRank)/1e6, float64(row.RSSAnonBytesPerRank)/1e6, float64(row.RSSFileBytesPerRank)/1e6,
			float64(row.PlanBytesPerRank)/1e6, row.OwnedPerRank, row.HaloPerRank)
		rep.Rows = append(rep.Rows, row)
	}
	rep.fit()
	return rep, nil
}

// readPartMeta reads dst's partition.json.
func readPartMeta(dst string) (rankpart.PartMeta, error) {
	var m rankpart.PartMeta
	raw, err := os.ReadFile(filepath.Join(dst, rankpart.PartMetaFile))
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	return m, err
}

// fit fits the rows by least squares (three unknowns, normal equations).
func (rep *scaleReport) fit() {
	x := make([][3]float64, len(rep.Rows))
	y, plan := make([]float64, len(rep.Rows)), make([]float64, len(rep.Rows))
	for i, r := range rep.Rows {
		x[i] = [3]float64{r.OwnedPerRank, r.HaloPerRank, 1}
		y[i], plan[i] = float64(r.RSSBytesPerRank), float64(r.PlanBytesPerRank)
	}
	c := leastSquares(x, y)
	rep.PerOwned, rep.PerHalo, rep.PerRank = c[0], c[1], c[2]
	rep.Residuals = make([]float64, len(y))
	for i := range y {
		rep.Residuals[i] = y[i] - (c[0]*x[i][0] + c[1]*x[i][1] + c[2])
	}
	c = leastSquares(x, plan)
	rep.PlanPerOwned, rep.PlanPerHalo, rep.PlanPerRank = c[0], c[1], c[2]
}

// leastSquares solves min |X c - y| for three unknowns (NaN when the rows
// do not determine them).
func leastSquares(x [][3]float64, y []float64) [3]float64 {
	var a [3][4]float64
	for i, row := range x {
		for j := range 3 {
			for k := range 3 {
				a[j][k] += row[j] * row[k]
			}
			a[j][3] += row[j] * y[i]
		}
	}
	for col := range 3 {
		piv := col
		for r := col + 1; r < 3; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		a[col], a[piv] = a[piv], a[col]
		if a[col][col] == 0 {
			return [3]float64{math.NaN(), math.NaN(), math.NaN()}
		}
		for r := range 3 {
			if r != col {
				f := a[r][col] / a[col][col]
				for k := col; k < 4; k++ {
					a[r][k] -= f * a[col][k]
				}
			}
		}
	}
	return [3]float64{a[0][3] / a[0][0], a[1][3] / a[1][1], a[2][3] / a[2][2]}
}
