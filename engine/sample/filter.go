package sample

import (
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/rng"
)

// Biased sampling and excluded edges ("filtered" sampling). A neighbour list
// position is a candidate when its edge is not excluded and, when biased,
// its weight is positive. Everything a task does is a function of its
// candidates in list order, and lists keep their order across renumbering,
// so the result does not depend on the layout. The unfiltered path
// (sampleChunk in owner.go) is untouched by this file.

// filterState is what the filter fields of requests (Biased,
// ExcludeEdges) derive from the graph: the excluded-edge bitmap and, for
// layer-wise requests, every node's total candidate weight. A runtime and
// its forks keep the states of the last maxFilters distinct filters, so
// that a pipeline's workers, or repeated one-off calls with the same
// options, build them once.
type filterState struct {
	biased  bool
	exclude []int64 // the request's list (a copy): with biased, the key
	excluded

	nodeOnce sync.Once
	nodeW    []float64
}

// maxFilters bounds the filter states a runtime keeps.
const maxFilters = 4

// filterFor returns the filter state of (biased, exclude), building it
// with threads goroutines when it is not cached.
func (s *shared) filterFor(biased bool, exclude []int64, threads int) *filterState {
	s.filterMu.Lock()
	defer s.filterMu.Unlock()
	for i, f := range s.filters {
		if f.biased == biased && slices.Equal(f.exclude, exclude) {
			copy(s.filters[1:i+1], s.filters[:i])
			s.filters[0] = f
			return f
		}
	}
	f := &filterState{biased: biased, exclude: slices.Clone(exclude), excluded: s.buildExcluded(exclude, threads)}
	if len(s.filters) < maxFilters {
		s.filters = append(s.filters, nil)
	}
	copy(s.filters[1:], s.filters[:len(s.filters)-1])
	s.filters[0] = f
	return f
}

// nodeWeights returns W_v for every node under f, computing it on first use
// for c, a call whose request has f's filter.
func (f *filterState) nodeWeights(c *call) []float64 {
	f.nodeOnce.Do(func() { f.nodeW = c.nodeWeights() })
	return f.nodeW
}

// excluded is the set of excluded CSC positions of a filter: a bitmap over
// every position (excl) when the list is long, or the sorted positions
// (pos) when it is short, as link prediction's per-batch lists (a batch's
// seed edges and their reverses) are: a bitmap would cost each batch a
// pass over the whole graph. Both nil: no edge is excluded.
type excluded struct {
	excl []uint64
	pos  []int64
}

// any reports whether some position is excluded.
func (x excluded) any() bool { return x.excl != nil || x.pos != nil }

// sparseExclusion reports whether n excluded ids of a graph of e edges are
// kept as sorted positions: when they take less memory than the bitmap.
// A variable, so that the tests can compare both forms.
var sparseExclusion = func(n, e int64) bool { return n*64 < e }

// buildExcluded returns the excluded positions of s's graph whose edge ids
// are in ids, with threads goroutines.
func (s *shared) buildExcluded(ids []int64, threads int) excluded {
	if len(ids) == 0 {
		return excluded{}
	}
	g := s.g
	e := g.NumEdges()
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	if sparseExclusion(int64(len(sorted)), e) {
		if pos, ok := s.positionsOf(sorted, threads); ok {
			if len(pos) == 0 {
				return excluded{}
			}
			return excluded{pos: pos}
		}
	}
	return excluded{excl: buildBitmap(g, sorted, threads)}
}

// positionsOf returns the sorted CSC positions of the edge ids sorted (ids
// that are no edge of the graph are left out), or false when the graph's
// edge ids are too sparse to invert densely (see edgePositions).
func (s *shared) positionsOf(sorted []int64, threads int) ([]int64, bool) {
	g := s.g
	e := g.NumEdges()
	var pos []int64
	if g.EdgeIDs == nil { // id == position
		for _, id := range sorted {
			if id >= 0 && id < e {
				pos = append(pos, id)
			}
		}
		return pos, true
	}
	inv := s.edgePositions(threads)
	if inv == nil {
		return nil, false
	}
	for _, id := range sorted {
		if id >= 0 && id < int64(len(inv)) && inv[id] >= 0 {
			pos = append(pos, int64(inv[id]))
		}
	}
	slices.Sort(pos)
	return pos, true
}

// edgePositions returns the inverse of the graph's edge ids, built on first
// use: inv[id] is the position of edge id (-1: none). int32 positions: 4
// bytes per edge id. nil when the graph has 2^31 edges or more, ids much
// larger than its edge count (as after an edge subgraph), which a dense
// inverse would waste memory on, or an id at two positions (a caller's
// CSC may repeat one; the bitmap then excludes every position of it).
func (s *shared) edgePositions(threads int) []int32 {
	s.invOnce.Do(func() {
		g := s.g
		e := g.NumEdges()
		if e >= math.MaxInt32 {
			return
		}
		maxID := int64(-1)
		for _, id := range g.EdgeIDs {
			maxID = max(maxID, id)
		}
		if maxID >= 2*e+1024 {
			return
		}
		inv := make([]int32, maxID+1)
		par.For(len(inv), 1<<16, threads, func(_, a, b int) {
			for i := a; i < b; i++ {
				inv[i] = -1
			}
		})
		var repeated atomic.Bool
		par.For(int(e), 1<<16, threads, func(_, a, b int) {
			for p := a; p < b; p++ {
				if !atomic.CompareAndSwapInt32(&inv[g.EdgeIDs[p]], -1, int32(p)) {
					repeated.Store(true)
					return
				}
			}
		})
		if repeated.Load() {
			return
		}
		s.inv = inv
	})
	return s.inv
}

// buildBitmap returns a bitmap over g's edge positions marking the edges
// whose ids are in sorted (nil when none is), with threads goroutines.
func buildBitmap(g *graph.CSC, sorted []int64, threads int) []uint64 {
	e := g.NumEdges()
	words := int((e + 63) / 64)
	set := make([]uint64, words)
	if g.EdgeIDs == nil { // id == position
		found := false
		for _, id := range sorted {
			if id >= 0 && id < e {
				set[id>>6] |= 1 << (id & 63)
				found = true
			}
		}
		if !found {
			return nil
		}
		return set
	}
	counts := make([]int, words)
	par.For(words, 1024, threads, func(_, a, b int) {
		for w := a; w < b; w++ {
			var x uint64
			lo := int64(w) * 64
			hi := min(lo+64, e)
			for p := lo; p < hi; p++ {
				if _, ok := slices.BinarySearch(sorted, g.EdgeIDs[p]); ok {
					x |= 1 << (p & 63)
				}
			}
			set[w] = x
			counts[w] = bits.OnesCount64(x)
		}
	})
	for _, c := range counts {
		if c > 0 {
			return set
		}
	}
	return nil
}

// excluded reports whether the edge at position p is excluded.
func (s *call) excluded(p int64) bool {
	if s.excl != nil {
		return s.excl[p>>6]&(1<<(p&63)) != 0
	}
	if s.exclPos != nil {
		_, ok := slices.BinarySearch(s.exclPos, p)
		return ok
	}
	return false
}

// exclusionCursor answers excluded(p) for positions visited in increasing
// order (a scan of a list): with sorted positions it walks them alongside
// the scan rather than searching them for every position.
type exclusionCursor struct {
	s   *call
	pos []int64 // the sorted excluded positions not passed yet (sparse form)
}

// exclusionsFrom returns a cursor for a scan that starts at position lo.
func (s *call) exclusionsFrom(lo int64) exclusionCursor {
	c := exclusionCursor{s: s}
	if s.exclPos != nil {
		i, _ := slices.BinarySearch(s.exclPos, lo)
		c.pos = s.exclPos[i:]
	}
	return c
}

// excluded reports whether the edge at position p (at or after the last
// position asked) is excluded.
func (c *exclusionCursor) excluded(p int64) bool {
	if c.s.exclPos == nil {
		return c.s.excluded(p)
	}
	for len(c.pos) > 0 && c.pos[0] < p {
		c.pos = c.pos[1:]
	}
	return len(c.pos) > 0 && c.pos[0] == p
}

// candidate reports whether the edge at position p may be sampled (by a
// task without a time cutoff).
func (s *call) candidate(p int64) bool {
	if s.excluded(p) {
		return false
	}
	return !s.req.Biased || s.g.Weights[p] > 0
}

// candidateAt reports whether the edge at position p may be sampled by a
// task whose cutoff time is cut (ignored unless the request is temporal).
func (s *call) candidateAt(p, cut int64) bool {
	return !s.excluded(p) && s.admitted(p, cut)
}

// admitted reports whether the edge at position p passes the weight and
// time filters of a task whose cutoff time is cut (exclusion aside).
func (s *call) admitted(p, cut int64) bool {
	if s.req.Biased && s.g.Weights[p] <= 0 {
		return false
	}
	switch s.req.Temporal {
	case TemporalNode:
		return s.nodeTime[s.p.TimeSlot(s.g.Source(p))] <= cut
	case TemporalEdge:
		return s.edgeTime[s.g.EdgeID(p)] <= cut
	}
	return true
}

// timeAt is the time of the edge at position p for a temporal request: its
// source's time (TemporalNode) or its own (TemporalEdge).
func (s *call) timeAt(p int64) int64 {
	if s.req.Temporal == TemporalNode {
		return s.nodeTime[s.p.TimeSlot(s.g.Source(p))]
	}
	return s.edgeTime[s.g.EdgeID(p)]
}

// effDegree returns the number of candidates in v's list.
func (s *call) effDegree(v int64) int64 {
	g := s.g
	lo, hi := g.Span(v)
	return s.candidatesIn(lo, hi, 0)
}

// candidatesIn returns the number of candidates at the positions [lo, hi)
// for a task with cutoff cut.
func (s *call) candidatesIn(lo, hi, cut int64) int64 {
	if !s.req.Biased && s.req.Temporal == TemporalNone {
		return (hi - lo) - s.excludedIn(lo, hi)
	}
	var d int64
	ex := s.exclusionsFrom(lo)
	for p := lo; p < hi; p++ {
		if !ex.excluded(p) && s.admitted(p, cut) {
			d++
		}
	}
	return d
}

// excludedIn counts the excluded positions in [lo, hi).
func (s *call) excludedIn(lo, hi int64) int64 {
	if lo >= hi {
		return 0
	}
	if s.exclPos != nil {
		a, _ := slices.BinarySearch(s.exclPos, lo)
		b, _ := slices.BinarySearch(s.exclPos, hi)
		return int64(b - a)
	}
	if s.excl == nil {
		return 0
	}
	var n int
	for lo < hi {
		w := lo >> 6
		x := s.excl[w] >> (lo & 63)
		end := min((w+1)<<6, hi)
		if end-lo < 64 {
			x &= 1<<(end-lo) - 1
		}
		n += bits.OnesCount64(x)
		lo = end
	}
	return int64(n)
}

// totalWeight is W_v: the sum of v's candidate weights in list order
// (float64), or its candidate count when not biased.
func (s *call) totalWeight(v int64) float64 {
	if !s.req.Biased {
		return float64(s.effDegree(v))
	}
	g := s.g
	var t float64
	lo, hi := g.Span(v)
	for p := lo; p < hi; p++ {
		if s.candidate(p) {
			t += float64(g.Weights[p])
		}
	}
	return t
}

// filterScratch is one sampling thread's memory for filtered tasks.
type filterScratch struct {
	pos  []int64   // candidate positions within the list
	w    []float64 // their weights, then prefix sums
	heap []keyPos
	last []timePos // TemporalLast
}

type keyPos struct {
	key float64
	i   int64 // index among the candidates
}

// less orders by key, then index (ties are a measure-zero event, broken
// deterministically).
func (a keyPos) less(b keyPos) bool {
	return a.key < b.key || (a.key == b.key && a.i < b.i)
}

// smallestKeys keeps the k entries with the smallest keys among those pushed:
// a max-heap of size k.
type smallestKeys struct {
	h []keyPos
	k int
}

func (sk *smallestKeys) push(x keyPos) {
	h := sk.h
	if len(h) < sk.k {
		h = append(h, x)
		i := len(h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !h[p].less(h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		sk.h = h
		return
	}
	if !x.less(h[0]) {
		return
	}
	h[0] = x
	i := 0
	for {
		l, big := 2*i+1, i
		if l < len(h) && h[big].less(h[l]) {
			big = l
		}
		if r := l + 1; r < len(h) && h[big].less(h[r]) {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// searchPrefix returns the first index i with pre[i] > u, clamped to the
// last index whose weight is positive (u < pre[len-1] up to rounding).
func searchPrefix(pre []float64, u float64) int {
	lo, hi := 0, len(pre)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pre[m] > u {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == len(pre) { // rounding: u*total reached total
		lo = len(pre) - 1
		for lo > 0 && pre[lo-1] == pre[lo] {
			lo--
		}
	}
	return lo
}

// sampleFiltered samples one task of a hop with biased sampling or excluded
// edges (sampleChunk samples the unfiltered ones): len(nb) neighbours of v,
// written to nb, and their edge ids to eb.
func (s *call) sampleFiltered(key, hop uint64, v int64, fanout int, nb, eb []int64, sc *filterScratch, scratch *[]uint64) {
	g := s.g
	st := streamState(s.seed, key, hop, uint64(s.orig(v)))
	lo, hi := g.Span(v)
	s.sampleSegment(st, lo, hi, fanout, 0, nb, eb, true, sc, scratch)
}

// sampleSegment samples the candidates among the positions [lo, hi) (a
// whole neighbour list, or one relation's segment of it) for a task with
// fan-out fanout and cutoff cut (temporal requests), drawing from the
// stream whose state is st. It writes as many neighbours as taskCount
// gives for the candidates to nb, their edge ids to eb, and returns that
// count; with resolve false it writes their CSC positions to nb instead
// (and nothing to eb), for the caller to resolve (resolvePositions).
func (s *call) sampleSegment(st uint64, lo, hi int64, fanout int, cut int64, nb, eb []int64, resolve bool, sc *filterScratch, scratch *[]uint64) int64 {
	g := s.g
	if s.req.Temporal == TemporalNone && (!s.filtered || (!s.req.Biased && s.excludedIn(lo, hi) == 0)) {
		// Every position is a candidate: draw over [0, hi-lo) directly,
		// as the loop below would over the identity candidate list.
		k := s.drawUniform(st, hi-lo, fanout, nb, scratch)
		finishSegment(g, lo, nb[:k], eb[:k], resolve)
		return k
	}
	if s.exclPos != nil && !s.req.Biased && s.req.Temporal == TemporalNone {
		return s.sampleAround(st, lo, hi, fanout, nb, eb, resolve, scratch)
	}
	biased := s.req.Biased
	cand := sc.pos[:0]
	w := sc.w[:0]
	ex := s.exclusionsFrom(lo)
	for p := lo; p < hi; p++ {
		if ex.excluded(p) || !s.admitted(p, cut) {
			continue
		}
		cand = append(cand, p-lo)
		if biased {
			w = append(w, float64(g.Weights[p]))
		}
	}
	sc.pos, sc.w = cand, w
	d := int64(len(cand))
	k := s.taskCount(d, fanout)
	nb, eb = nb[:k], eb[:k]
	if k == 0 {
		return 0
	}
	switch {
	case fanout < 0 || (!s.req.Replace && k == d):
		copy(nb, cand)
	case s.req.TemporalStrategy == TemporalLast:
		s.takeLast(lo, cand, nb, sc)
	case !biased:
		// Uniform over the candidates: the unfiltered draws over [0, d),
		// so a list without excluded edges samples as sampleChunk does.
		r := rng.SplitMix64{State: st}
		drawPositions(&r, d, nb, s.req.Replace, scratch)
		for i, j := range nb {
			nb[i] = cand[j]
		}
	case s.req.Replace:
		// Independent weighted draws: prefix sums and binary search.
		var t float64
		for i, x := range w {
			t += x
			w[i] = t
		}
		r := rng.SplitMix64{State: st}
		for i := range nb {
			nb[i] = cand[searchPrefix(w, r.Unit()*t)]
		}
	default:
		// Weighted without replacement (Efraimidis-Spirakis): key_i =
		// Exp(1)/w_i, keep the k smallest, emit in list order.
		r := rng.SplitMix64{State: st}
		sk := smallestKeys{h: sc.heap[:0], k: int(k)}
		for i, x := range w {
			sk.push(keyPos{r.Exp1() / x, int64(i)})
		}
		sc.heap = sk.h
		for i, e := range sk.h {
			nb[i] = e.i
		}
		slices.Sort(nb)
		for i, j := range nb {
			nb[i] = cand[j]
		}
	}
	finishSegment(g, lo, nb, eb, resolve)
	return k
}

// sampleAround is sampleSegment's uniform draw for the sorted excluded
// positions (exclPos) of a short list: the candidates of [lo, hi) are its
// positions but the few excluded ones, so the draws over [0, d) (d
// candidates) are mapped to positions by stepping over the excluded ones
// (cost: the draws times the excluded positions in the list) rather than
// listing every candidate of the list, which for a hub is the whole list.
// It draws and returns what the candidate loop would.
func (s *call) sampleAround(st uint64, lo, hi int64, fanout int, nb, eb []int64, resolve bool, scratch *[]uint64) int64 {
	a, _ := slices.BinarySearch(s.exclPos, lo)
	b, _ := slices.BinarySearch(s.exclPos, hi)
	ex := s.exclPos[a:b]
	k := s.drawUniform(st, (hi-lo)-int64(len(ex)), fanout, nb, scratch)
	nb, eb = nb[:k], eb[:k]
	// Candidate j is at relative position j + (the excluded positions at
	// or before it).
	for i, j := range nb {
		p := j
		for _, e := range ex {
			if e-lo > p {
				break
			}
			p++
		}
		nb[i] = p
	}
	finishSegment(s.g, lo, nb, eb, resolve)
	return k
}

// drawUniform writes the uniform draws of a task with fan-out fanout over
// d candidates, as indices in [0, d), to nb and returns their count
// (taskCount's): every candidate in order when the task takes them all.
func (s *call) drawUniform(st uint64, d int64, fanout int, nb []int64, scratch *[]uint64) int64 {
	k := s.taskCount(d, fanout)
	nb = nb[:k]
	if k == 0 {
		return 0
	}
	if fanout < 0 || (!s.req.Replace && k == d) {
		for i := range nb {
			nb[i] = int64(i)
		}
	} else {
		r := rng.SplitMix64{State: st}
		drawPositions(&r, d, nb, s.req.Replace, scratch)
	}
	return k
}

// finishSegment turns nb, positions within the segment that starts at CSC
// position lo, into source ids (and their edge ids into eb) when resolve is
// set, into CSC positions otherwise.
func finishSegment(g *graph.CSC, lo int64, nb, eb []int64, resolve bool) {
	if resolve {
		positionsToIDs(g, lo, nb, eb)
		return
	}
	for i := range nb {
		nb[i] += lo
	}
}

// takeLast writes to nb the len(nb) candidates (positions relative to lo)
// with the largest times, in list order: TemporalLast. Of candidates with
// equal times, the later list position is taken first, so in a list
// sorted by time the last len(nb) candidates are taken (pyg-lib's "last").
func (s *call) takeLast(lo int64, cand, nb []int64, sc *filterScratch) {
	sc.last = sc.last[:0]
	for i, c := range cand {
		sc.last = append(sc.last, timePos{s.timeAt(lo + c), int64(i)})
	}
	// Largest times first, ties by larger index first.
	slices.SortFunc(sc.last, func(a, b timePos) int {
		if a.t != b.t {
			if a.t > b.t {
				return -1
			}
			return 1
		}
		if a.i > b.i {
			return -1
		}
		if a.i < b.i {
			return 1
		}
		return 0
	})
	for i := range nb {
		nb[i] = sc.last[i].i
	}
	slices.Sort(nb)
	for i, j := range nb {
		nb[i] = cand[j]
	}
}

// timePos is a candidate's time and index, for TemporalLast.
type timePos struct{ t, i int64 }

// chooseOne draws one neighbour of v with r (uniform over the candidates, or
// by weight when biased) and returns its position in the CSC, or -1 when v
// has no candidate.
func (s *call) chooseOne(v int64, r *rng.SplitMix64) int64 {
	g := s.g
	lo, hi := g.Span(v)
	if !s.filtered {
		if hi == lo {
			return -1
		}
		return lo + int64(r.Below(uint64(hi-lo)))
	}
	if !s.req.Biased {
		d := s.effDegree(v)
		if d == 0 {
			return -1
		}
		j := int64(r.Below(uint64(d)))
		for p := lo; p < hi; p++ {
			if !s.excluded(p) {
				if j == 0 {
					return p
				}
				j--
			}
		}
		return -1 // unreachable
	}
	var t float64
	last := int64(-1)
	for p := lo; p < hi; p++ {
		if s.candidate(p) {
			t += float64(g.Weights[p])
			last = p
		}
	}
	if last < 0 {
		return -1
	}
	u := r.Unit() * t
	var c float64
	for p := lo; p < hi; p++ {
		if s.candidate(p) {
			c += float64(g.Weights[p])
			if c > u {
				return p
			}
		}
	}
	return last // rounding
}
