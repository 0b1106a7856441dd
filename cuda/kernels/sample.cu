// Node-wise neighbour sampling, one thread per task (frontier node), ported
// from engine/sample (sampler.go: sampleStage, sampleChunk, drawPositions,
// floyd*; filter.go: sampleFiltered). A hop runs gf_count, a scan of the
// counts (the block's Indptr, scan.cu), then gf_sample, which writes each
// task's sampled sources and edge ids straight into its slots of the block
// (no COO intermediate, FastSample's fused layout). Append-unique (unique.cu)
// then turns the sources into the block's Indices.
//
// The hop's frontier is nodes[*lo, *hi) (lo null: from 0), read on the
// device: the host launches on a grid sized from an upper bound.
#include "common.cuh"

// Number of candidates of v (filter.go's effDegree).
__device__ gf_i64 gf_eff_degree(const gf_graph *g, gf_i64 v) {
    gf_i64 lo = g->indptr[v], hi = g->indptr[v + 1];
    if (!gf_filtered(g)) return hi - lo;
    gf_i64 d = 0;
    for (gf_i64 p = lo; p < hi; p++) d += gf_candidate(g, p) ? 1 : 0;
    return d;
}

// taskCount: how many neighbours a task with deg candidates yields.
__device__ __forceinline__ gf_i64 gf_task_count(const gf_graph *g, gf_i64 deg, gf_i64 fanout) {
    if (fanout < 0) return deg;
    if (g->replace) return deg == 0 ? 0 : fanout;
    return deg < fanout ? deg : fanout;
}

// gf_count: counts[t] for the tasks nodes[start+t], t < nd, where the
// frontier is nodes[start, start+nd) = nodes[*lo, *hi).
extern "C" __global__ void gf_count(const gf_graph *g, const gf_i64 *nodes, const gf_i64 *lo, const gf_i64 *hi,
                                    gf_i64 fanout, gf_i64 *counts) {
    const gf_i64 start = gf_lo(lo), nd = *hi - start;
    GF_FOR(t, nd) {
        gf_i64 v = nodes[start + t];
        if (!gf_node_ok(g, v)) {
            gf_report(g->status, GF_ST_COUNT_NODE, v);
            counts[t] = 0;
            continue;
        }
        counts[t] = gf_task_count(g, gf_eff_degree(g, v), fanout);
    }
}

// Floyd's algorithm keeping the picks sorted (floydSorted): k distinct
// positions of [0, n), ascending. The set equals that of every variant the
// CPU engine uses (same draws, same membership rule), so the output does too.
__device__ void gf_floyd_sorted(gf_stream *r, gf_i64 n, gf_i64 *out, gf_i64 k) {
    for (gf_i64 i = 0, j = n - k; j < n; i++, j++) {
        gf_i64 t = (gf_i64)gf_below(r, (gf_u64)(j + 1));
        gf_i64 p = i;
        while (p > 0 && out[p - 1] > t) p--;
        if (p > 0 && out[p - 1] == t) {
            out[i] = j;
            continue;
        }
        for (gf_i64 q = i; q > p; q--) out[q] = out[q - 1];
        out[p] = t;
    }
}

// drawPositions: k positions of [0, n) into out.
__device__ void gf_draw_positions(gf_stream *r, gf_i64 n, gf_i64 *out, gf_i64 k, bool replace) {
    if (replace) {
        for (gf_i64 i = 0; i < k; i++) out[i] = (gf_i64)gf_below(r, (gf_u64)n);
        return;
    }
    gf_floyd_sorted(r, n, out, k);
}

// Position (within v's list) of v's j-th candidate.
__device__ gf_i64 gf_select_candidate(const gf_graph *g, gf_i64 base, gf_i64 deg, gf_i64 j) {
    for (gf_i64 i = 0; i < deg; i++) {
        if (gf_candidate(g, base + i)) {
            if (j == 0) return i;
            j--;
        }
    }
    return deg - 1;  // unreachable: j < number of candidates
}

// Key order of the exponential keys: by key, then index (filter.go keyPos.less).
__device__ __forceinline__ bool gf_key_less(double ka, gf_i64 ia, double kb, gf_i64 ib) {
    return ka < kb || (ka == kb && ia < ib);
}

// Sorts a[0:k) ascending (insertion sort: samples are small).
__device__ void gf_sort_i64(gf_i64 *a, gf_i64 k) {
    for (gf_i64 i = 1; i < k; i++) {
        gf_i64 x = a[i], p = i;
        while (p > 0 && a[p - 1] > x) {
            a[p] = a[p - 1];
            p--;
        }
        a[p] = x;
    }
}

// Efraimidis-Spirakis: the k candidates (indices among the candidates) with
// the smallest keys Exp(1)/w, drawn in list order, into idx (a max-heap on
// (key, index) kept in idx/keys while drawing), then sorted ascending.
__device__ void gf_weighted_no_replace(const gf_graph *g, gf_stream *r, gf_i64 base, gf_i64 deg, gf_i64 *idx,
                                       double *keys, gf_i64 k) {
    gf_i64 size = 0, ci = 0;
    for (gf_i64 i = 0; i < deg; i++) {
        gf_i64 p = base + i;
        if (!gf_candidate(g, p)) continue;
        double key = __ddiv_rn(gf_exp1(r), (double)g->weights[p]);
        gf_i64 c = ci++;
        if (size < k) {
            gf_i64 q = size++;
            idx[q] = c;
            keys[q] = key;
            while (q > 0) {
                gf_i64 par = (q - 1) / 2;
                if (!gf_key_less(keys[par], idx[par], keys[q], idx[q])) break;
                double tk = keys[par]; keys[par] = keys[q]; keys[q] = tk;
                gf_i64 ti = idx[par]; idx[par] = idx[q]; idx[q] = ti;
                q = par;
            }
            continue;
        }
        if (!gf_key_less(key, c, keys[0], idx[0])) continue;
        keys[0] = key;
        idx[0] = c;
        gf_i64 q = 0;
        for (;;) {
            gf_i64 l = 2 * q + 1, big = q;
            if (l < size && gf_key_less(keys[big], idx[big], keys[l], idx[l])) big = l;
            if (l + 1 < size && gf_key_less(keys[big], idx[big], keys[l + 1], idx[l + 1])) big = l + 1;
            if (big == q) break;
            double tk = keys[big]; keys[big] = keys[q]; keys[q] = tk;
            gf_i64 ti = idx[big]; idx[big] = idx[q]; idx[q] = ti;
            q = big;
        }
    }
    gf_sort_i64(idx, k);
}

// gf_sample: every task t < nd writes its indptr[t+1]-indptr[t] sampled
// neighbours: sources into nbrs, edge ids into eids, at [indptr[t],
// indptr[t+1]). keys is scratch of the same length (biased sampling without
// replacement only). The frontier is nodes[*lo, *hi), as gf_count's.
extern "C" __global__ void gf_sample(const gf_graph *g, const gf_i64 *nodes, const gf_i64 *lo, const gf_i64 *hi,
                                     gf_i64 fanout, gf_u64 seed, gf_u64 key, gf_u64 hop, const gf_i64 *indptr,
                                     gf_i64 *nbrs, gf_i64 *eids, double *keys) {
    const gf_i64 start = gf_lo(lo), nd = *hi - start;
    GF_FOR(t, nd) {
        gf_i64 off = indptr[t];
        gf_i64 c = indptr[t + 1] - off;
        if (c == 0) continue;
        gf_i64 v = nodes[start + t];
        if (!gf_node_ok(g, v)) {
            gf_report(g->status, GF_ST_SAMPLE_NODE, v);
            continue;
        }
        gf_i64 base = g->indptr[v];
        gf_i64 deg = g->indptr[v + 1] - base;
        gf_i64 *nb = nbrs + off;  // positions within v's list, then sources
        bool replace = g->replace != 0;
        if (!gf_filtered(g)) {
            if (fanout < 0 || (!replace && c == deg)) {
                for (gf_i64 i = 0; i < c; i++) nb[i] = i;
            } else {
                gf_stream r = {gf_stream_state(seed, key, hop, (gf_u64)gf_orig(g, v))};
                gf_draw_positions(&r, deg, nb, c, replace);
            }
        } else {
            gf_i64 d = gf_eff_degree(g, v);
            if (fanout < 0 || (!replace && c == d)) {
                gf_i64 i = 0;
                for (gf_i64 q = 0; q < deg; q++)
                    if (gf_candidate(g, base + q)) nb[i++] = q;
            } else if (!g->biased) {
                // Uniform over the candidates: the unfiltered draws over [0, d).
                gf_stream r = {gf_stream_state(seed, key, hop, (gf_u64)gf_orig(g, v))};
                gf_draw_positions(&r, d, nb, c, replace);
                for (gf_i64 i = 0; i < c; i++) nb[i] = gf_select_candidate(g, base, deg, nb[i]);
            } else if (replace) {
                // Independent weighted draws: the first candidate whose
                // prefix sum (float64, list order) exceeds U * total.
                double total = 0, prev = 0;
                gf_i64 lastChange = -1;  // first index of the final prefix value
                gf_i64 ci = 0;
                for (gf_i64 q = 0; q < deg; q++) {
                    if (!gf_candidate(g, base + q)) continue;
                    total = __dadd_rn(total, (double)g->weights[base + q]);
                    if (ci == 0 || total != prev) lastChange = ci;
                    prev = total;
                    ci++;
                }
                gf_stream r = {gf_stream_state(seed, key, hop, (gf_u64)gf_orig(g, v))};
                for (gf_i64 i = 0; i < c; i++) {
                    double u = __dmul_rn(gf_unit(&r), total);
                    double run = 0;
                    gf_i64 pick = lastChange;  // rounding: u*total reached total
                    gf_i64 k = 0;
                    for (gf_i64 q = 0; q < deg; q++) {
                        if (!gf_candidate(g, base + q)) continue;
                        run = __dadd_rn(run, (double)g->weights[base + q]);
                        if (run > u) {
                            pick = k;
                            break;
                        }
                        k++;
                    }
                    nb[i] = pick;
                }
                for (gf_i64 i = 0; i < c; i++) nb[i] = gf_select_candidate(g, base, deg, nb[i]);
            } else {
                gf_stream r = {gf_stream_state(seed, key, hop, (gf_u64)gf_orig(g, v))};
                gf_weighted_no_replace(g, &r, base, deg, nb, keys + off, c);
                gf_i64 q = 0, ci = 0;  // one merge pass: the picks are ascending
                for (gf_i64 i = 0; i < c; i++) {
                    for (;; q++) {
                        if (!gf_candidate(g, base + q)) continue;
                        if (ci == nb[i]) break;
                        ci++;
                    }
                    nb[i] = q;
                }
            }
        }
        gf_i64 *eb = eids + off;
        for (gf_i64 i = 0; i < c; i++) {
            gf_i64 p = base + nb[i];
            eb[i] = gf_edge_id(g, p);
            nb[i] = gf_source(g, p);
        }
    }
}
