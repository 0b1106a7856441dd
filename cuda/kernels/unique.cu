// Append-unique on the device: the node table maps node id -> position in
// the batch's node list, an open-addressing hash table (linear probing,
// keys claimed by atomicCAS) that lives for one batch.
//
// The CPU engine numbers a hop's new nodes in order of FIRST APPEARANCE in
// the hop's sampled list (in frontier order). Threads insert in any order,
// so the table first records, per new node, the smallest list index k at
// which it appears, and only then are the new nodes numbered:
//
//   gf_au_insert  per k: find or claim u = nbrs[k]'s slot; atomicMin the
//                 slot's value with PROV+k. An older value below PROV is a
//                 final position (seed or earlier hop): indices[k] takes it.
//   gf_au_flag    per k: flags[k] = 1 when k is the slot's minimum, i.e.
//                 k is u's first appearance in this hop.
//   scan          the flags' exclusive prefix sums, starting at the number
//                 of nodes before the hop, number the new nodes in k order,
//                 which is the CPU's first-reached order; the scan's total
//                 is the number of nodes after the hop.
//   gf_au_assign  per first appearance: append u at its rank, make the
//                 slot's value that final position.
//   gf_au_resolve per other pending k: indices[k] = the slot's final value.
//
// The hop's list length (total) is read on the device (*total), as every
// size of a batch is: the host sizes grids from upper bounds.
//
// Values: a final position p is p (< PROV); PROV+k is provisional; an unused
// slot holds GF_EMPTY_VAL, larger than both, so atomicMin needs no
// initialisation race handling. The table is reset by memset between
// batches (keys to all ones = -1, values to 0x7f bytes).
#include "common.cuh"

#define GF_EMPTY_KEY (-1LL)
#define GF_PROV (1LL << 62)
#define GF_EMPTY_VAL 0x7f7f7f7f7f7f7f7fLL

// u's slot, claimed if new; -1 (reported as code) when every slot is taken
// by other keys, which the table's sizing (at least twice the nodes) rules
// out unless the host is wrong.
__device__ __forceinline__ gf_i64 gf_table_slot(gf_i64 *tkeys, gf_u64 mask, gf_i64 u, gf_u64 *status, gf_u64 code) {
    gf_u64 s = gf_mix64((gf_u64)u) & mask;
    for (gf_u64 probes = 0; probes <= mask; probes++) {
        gf_i64 k = ((volatile gf_i64 *)tkeys)[s];  // written by other threads
        GF_SCHED();  // another thread may claim the slot right now
        if (k == u) return (gf_i64)s;
        if (k == GF_EMPTY_KEY) {
            gf_i64 old = (gf_i64)atomicCAS((gf_u64 *)&tkeys[s], (gf_u64)GF_EMPTY_KEY, (gf_u64)u);
            if (old == GF_EMPTY_KEY || old == u) return (gf_i64)s;
        }
        s = (s + 1) & mask;
    }
    gf_report(status, code, u);
    return -1;
}

// Inserts nodes[0:n) with final positions 0..n-1 (a batch's seeds, or the
// nodes so far when the table is rebuilt larger). The nodes are distinct.
extern "C" __global__ void gf_table_insert(gf_i64 *tkeys, gf_i64 *tvals, gf_u64 mask, const gf_i64 *nodes, gf_i64 n,
                                           gf_u64 *status) {
    GF_FOR(i, n) {
        gf_i64 s = gf_table_slot(tkeys, mask, nodes[i], status, GF_ST_TABLE_FULL);
        if (s >= 0) tvals[s] = i;
    }
}

extern "C" __global__ void gf_au_insert(gf_i64 *tkeys, gf_i64 *tvals, gf_u64 mask, const gf_i64 *nbrs,
                                        const gf_i64 *total, gf_i64 *slots, gf_i64 *indices, gf_u64 *status) {
    const gf_i64 n = *total;
    GF_FOR(k, n) {
        gf_i64 s = gf_table_slot(tkeys, mask, nbrs[k], status, GF_ST_AU_FULL);
        if (s < 0) {
            slots[k] = -1;
            indices[k] = -1;
            continue;
        }
        gf_i64 old = atomicMin((long long *)&tvals[s], (long long)(GF_PROV + k));
        if (old < GF_PROV) {
            indices[k] = old;
            slots[k] = -1;
        } else {
            slots[k] = s;
        }
    }
}

extern "C" __global__ void gf_au_flag(const gf_i64 *tvals, const gf_i64 *slots, const gf_i64 *total, gf_i64 *flags) {
    const gf_i64 n = *total;
    GF_FOR(k, n) {
        gf_i64 s = slots[k];
        flags[k] = (s >= 0 && tvals[s] == GF_PROV + k) ? 1 : 0;
    }
}

// rank has total+1 entries: the flags' exclusive prefix sums, starting at
// the number of nodes before the hop (so rank[k] is k's final position).
extern "C" __global__ void gf_au_assign(gf_i64 *tvals, const gf_i64 *slots, const gf_i64 *nbrs, const gf_i64 *rank,
                                        const gf_i64 *total, gf_i64 *nodes, gf_i64 *indices) {
    const gf_i64 n = *total;
    GF_FOR(k, n) {
        if (rank[k + 1] == rank[k]) continue;
        gf_i64 p = rank[k];
        nodes[p] = nbrs[k];
        tvals[slots[k]] = p;
        indices[k] = p;
    }
}

extern "C" __global__ void gf_au_resolve(const gf_i64 *tvals, const gf_i64 *slots, const gf_i64 *rank,
                                         const gf_i64 *total, gf_i64 *indices) {
    const gf_i64 n = *total;
    GF_FOR(k, n) {
        gf_i64 s = slots[k];
        if (s < 0 || rank[k + 1] != rank[k]) continue;
        indices[k] = tvals[s];
    }
}
