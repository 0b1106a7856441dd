package sample

import "github.com/graphferry/graphferry/engine/rng"

// LABOR-0 (Scheme Labor) in the owner stage. The owner of destination s
// walks s's candidates (the edges that are not excluded) and keeps
// neighbour t iff r_t < fanout / d_s, where r_t is the first Unit of t's
// task stream (rng.go) for (seed, batch key, hop, original id of t): the
// variate depends on t and the batch, never on s, the patch that owns s or
// the thread, so every destination of the batch compares against the same
// r_t wherever it is sampled. With LayerDependency the hop is 0 for every
// hop. How many neighbours s keeps is random, so the owner stage counts
// them in its first pass (one variate per candidate) and evaluates the same
// variates again when it writes them: both passes are a function of the
// task alone.

// laborHop is the hop that keys hop's variates.
func (s *call) laborHop(hop int) uint64 {
	if s.req.LayerDependency {
		return 0
	}
	return uint64(hop)
}

// laborPrefix is streamState(seed, key, hop, ·) up to the node: the part
// shared by every variate of one (batch, hop).
func laborPrefix(seed, key, hop uint64) uint64 {
	h := rng.Mix(seed + rng.Golden)
	h = rng.Mix(h ^ (key + 0x6a09e667f3bcc909))
	return rng.Mix(h ^ (hop + 0xbb67ae8584caa73b))
}

// laborVariate is r_t for the node with original id node under prefix:
// the first Unit of taskStream(seed, key, hop, node).
func laborVariate(prefix, node uint64) float64 {
	r := rng.SplitMix64{State: rng.Mix(prefix ^ (node + 0x3c6ef372fe94f82b))}
	return r.Unit()
}

// laborTask samples destination v (an internal id) of a Labor hop for the
// batch key: with nb == nil it only returns the number of neighbours kept;
// otherwise it also writes their source ids to nb and their edge ids to eb
// (both at least that long), in list order.
func (s *call) laborTask(key uint64, hop int, v int64, fanout int, nb, eb []int64) int64 {
	g := s.g
	prefix := laborPrefix(s.seed, key, s.laborHop(hop))
	lo, hi := g.Span(v)
	return s.laborSegment(prefix, lo, hi, fanout, 0, nb, eb)
}

// laborSegment is laborTask over the positions [lo, hi) (a whole list, or
// one relation's segment of it) for a task with cutoff cut (temporal
// requests), with the variates of prefix (laborPrefix).
func (s *call) laborSegment(prefix uint64, lo, hi int64, fanout int, cut int64, nb, eb []int64) int64 {
	g := s.g
	d := hi - lo
	check := s.filtered || s.req.Temporal != TemporalNone
	if check {
		d = s.candidatesIn(lo, hi, cut)
	}
	if fanout == 0 || d == 0 {
		return 0
	}
	// Below fan-out every candidate is kept (r_t < 1 <= fanout/d), without
	// evaluating variates.
	all := fanout < 0 || d <= int64(fanout)
	// p is rounded once, and r < fl(k1/d1) <= fl(k2/d2) whenever
	// k1/d1 <= k2/d2, so a neighbour kept by one destination is kept by
	// every destination with a larger ratio, exactly.
	p := float64(fanout) / float64(d)
	var n int64
	ex := s.exclusionsFrom(lo)
	for q := lo; q < hi; q++ {
		if check && (ex.excluded(q) || !s.admitted(q, cut)) {
			continue
		}
		var u int64
		if !all || nb != nil {
			u = g.Source(q)
		}
		if !all && laborVariate(prefix, uint64(s.orig(u))) >= p {
			continue
		}
		if nb != nil {
			nb[n], eb[n] = u, g.EdgeID(q)
		}
		n++
	}
	return n
}

// laborChunk writes the answers of the Labor tasks [a, b) of the sample
// stage (see sampleStage for the layout of in, outs, counts and offs).
func (s *call) laborChunk(in []inbox, outs [][]int64, counts, offs []int64, a, b, hop, fanout int) {
	j := 0
	for t := a; t < b; t++ {
		j = inboxOf(in, j, t)
		c := counts[t]
		if c == 0 {
			continue
		}
		nb, eb := answerSlots(outs[j], len(in[j].tasks), offs[t], c)
		v, f := in[j].task(t, fanout)
		s.laborTask(in[j].key, hop, v, f, nb, eb)
	}
}
