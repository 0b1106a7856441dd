package gen

import (
	"fmt"
	"math"

	"github.com/graphferry/graphferry/engine/mem"
)

// Feature noise model: class centroids have i.i.d. (approximately) standard
// normal entries scaled by CentroidStd, and a node's features are its class
// centroid plus i.i.d. normal noise of standard deviation NoiseStd.
const (
	CentroidStd = 1.0
	NoiseStd    = 2.0
)

// Features describes random node features and labels that a model can
// learn: node v gets a label drawn uniformly from [0, NumClasses) and the
// features centroid[label] + noise (see CentroidStd, NoiseStd), so the label
// is (nearly always) that of the nearest centroid and a linear classifier
// does well, better with more dimensions. Labels are independent of the
// graph structure.
type Features struct {
	// Dim is the feature width (>= 1).
	Dim int
	// NumClasses is the number of labels (>= 1).
	NumClasses int
	// DType is the feature type: Float32 (the default, also for Invalid),
	// Float64, Float16 or BFloat16 (rounded to nearest even from float32).
	DType mem.DType
	// Seed selects the centroids, labels and noise.
	Seed uint64
	// Threads is the parallelism; <= 0 means GOMAXPROCS. It does not change
	// the result: node v's values depend only on (Seed, v).
	Threads int
}

// Generate returns the [numNodes, Dim] feature matrix and the labels (in
// [0, NumClasses)) of numNodes nodes.
func (f Features) Generate(numNodes int64) (feat mem.Tensor, labels []int64, err error) {
	return f.GenerateRange(0, numNodes)
}

// GenerateRange returns rows [first, first+numNodes) of the feature matrix
// Generate would return for more nodes, and their labels (node v's values
// depend only on (Seed, v)): a writer can produce a large matrix in pieces.
func (f Features) GenerateRange(first, numNodes int64) (feat mem.Tensor, labels []int64, err error) {
	dt := f.DType
	if dt == mem.Invalid {
		dt = mem.Float32
	}
	switch {
	case f.Dim < 1:
		return feat, nil, fmt.Errorf("gen: Features.Dim=%d must be >= 1", f.Dim)
	case f.NumClasses < 1:
		return feat, nil, fmt.Errorf("gen: Features.NumClasses=%d must be >= 1", f.NumClasses)
	case numNodes < 0 || first < 0:
		return feat, nil, fmt.Errorf("gen: numNodes=%d and first=%d must be >= 0", numNodes, first)
	case dt != mem.Float32 && dt != mem.Float64 && dt != mem.Float16 && dt != mem.BFloat16:
		return feat, nil, fmt.Errorf("gen: Features.DType=%v is not supported (float32, float64, float16, bfloat16)", dt)
	case numNodes > 0 && int64(f.Dim) > math.MaxInt/8/numNodes:
		return feat, nil, fmt.Errorf("gen: %d nodes x %d features is too large", numNodes, f.Dim)
	}
	dim, nc := int64(f.Dim), uint64(f.NumClasses)
	cent := make([]float32, int64(nc)*dim)
	cr := stream(f.Seed, tagCentroid, 0)
	for i := range cent {
		cent[i] = CentroidStd * normal(&cr)
	}

	total := numNodes * dim
	var f32 []float32
	var f64 []uint64
	var f16 []uint16
	switch dt {
	case mem.Float32:
		f32 = make([]float32, total)
		feat.Data = mem.Bytes(f32)
	case mem.Float64:
		f64 = make([]uint64, total)
		feat.Data = mem.Bytes(f64)
	default:
		f16 = make([]uint16, total)
		feat.Data = mem.Bytes(f16)
	}
	if feat.Data == nil {
		feat.Data = []byte{}
	}
	feat.DType, feat.Shape = dt, []int64{numNodes, dim}
	labels = make([]int64, numNodes)

	err = parallelFor(numNodes, f.Threads, func(lo, hi int64) error {
		row := make([]float32, dim)
		for v := lo; v < hi; v++ {
			r := stream(f.Seed, tagNode, uint64(first+v))
			c := r.BelowFast(nc)
			labels[v] = int64(c)
			cen := cent[int64(c)*dim : int64(c+1)*dim]
			for j := range row {
				row[j] = cen[j] + NoiseStd*normal(&r)
			}
			off := v * dim
			switch dt {
			case mem.Float32:
				copy(f32[off:off+dim], row)
			case mem.Float64:
				for j, x := range row {
					f64[off+int64(j)] = math.Float64bits(float64(x))
				}
			case mem.Float16:
				for j, x := range row {
					f16[off+int64(j)] = toFloat16(x)
				}
			case mem.BFloat16:
				for j, x := range row {
					f16[off+int64(j)] = toBFloat16(x)
				}
			}
		}
		return nil
	})
	return feat, labels, err
}

// toBFloat16 rounds x to bfloat16 (nearest, ties to even).
func toBFloat16(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it a (quiet) NaN
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b >> 16 & 1)
	return uint16(b >> 16)
}

// toFloat16 rounds x to IEEE half precision (nearest, ties to even),
// including subnormals, overflow to infinity and NaN.
func toFloat16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	if b&0x7fffffff > 0x7f800000 {
		return sign | 0x7e00
	}
	exp := int(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	if exp >= 31 {
		return sign | 0x7c00
	}
	var q, rem, half uint32
	if exp <= 0 {
		if exp < -10 {
			return sign
		}
		m := mant | 0x800000
		sh := uint(14 - exp)
		q, rem, half = m>>sh, m&(1<<sh-1), 1<<(sh-1)
	} else {
		q, rem, half = uint32(exp)<<10|mant>>13, mant&0x1fff, 0x1000
	}
	if rem > half || (rem == half && q&1 == 1) {
		q++ // a carry into the exponent (up to infinity) is correct
	}
	return sign | uint16(q)
}
