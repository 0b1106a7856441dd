// Node data on the device: one gather kernel for every tier and dtype, and
// the small kernels a batch's outputs need.
//
// gf_gather writes out[i] = the row of node ids[i], i < n, in input order:
// from the hot tier (device memory) when slot[v] >= 0, where it is hot row
// slot[v]; else from the cold tier, the whole array in pinned or registered
// host memory read in place over the bus (zero-copy). Rows are row_bytes
// bytes of any dtype, moved untouched (float32, float16, bfloat16, int64
// labels ...) in words of `width` bytes: 16, 8, 4, 2 or 1, the widest that
// divides row_bytes and the three base addresses (the host picks it), so
// that aligned rows move as 128-bit vector loads and stores. One thread per
// word of the output: consecutive threads read consecutive words of a row.
#include "common.cuh"

// A 16-byte word (a 128-bit vector load and store where aligned).
struct alignas(16) gf_w16 {
    gf_u64 a, b;
};

template <typename W>
__device__ __forceinline__ void gf_gather_words(const gf_i64 *ids, gf_i64 n, const gf_i32 *slot, const char *hot,
                                                const char *cold, gf_i64 num_nodes, gf_i64 row_bytes, char *out,
                                                gf_u64 *status) {
    const gf_i64 per = row_bytes / (gf_i64)sizeof(W);  // words per row
    const gf_i64 total = n * per;
    const bool narrow = total <= 0xffffffffLL;  // 32-bit division: far cheaper on the device
    GF_FOR(q, total) {
        gf_i64 i;
        if (narrow) {
            i = (gf_i64)((unsigned)q / (unsigned)per);
        } else {
            i = q / per;
        }
        const gf_i64 j = q - i * per;
        const gf_i64 v = ids[i];
        if (!(v >= 0 && v < num_nodes)) {
            if (j == 0) gf_report(status, GF_ST_GATHER_NODE, v);
            continue;
        }
        const gf_i32 s = slot ? slot[v] : -1;
        const W *src = (const W *)(s >= 0 ? hot + (gf_i64)s * row_bytes : cold + v * row_bytes);
        ((W *)(out + i * row_bytes))[j] = src[j];
    }
}

// gf_gather: rows ids[0:*n) of the node data into out (see above). slot
// null: every row is cold.
extern "C" __global__ void gf_gather(const gf_i64 *ids, const gf_i64 *n, const gf_i32 *slot, const char *hot,
                                     const char *cold, gf_i64 num_nodes, gf_i64 row_bytes, gf_i64 width, char *out,
                                     gf_u64 *status) {
    const gf_i64 rows = *n;
    switch (width) {
    case 16:
        gf_gather_words<gf_w16>(ids, rows, slot, hot, cold, num_nodes, row_bytes, out, status);
        break;
    case 8:
        gf_gather_words<gf_u64>(ids, rows, slot, hot, cold, num_nodes, row_bytes, out, status);
        break;
    case 4:
        gf_gather_words<unsigned int>(ids, rows, slot, hot, cold, num_nodes, row_bytes, out, status);
        break;
    case 2:
        gf_gather_words<unsigned short>(ids, rows, slot, hot, cold, num_nodes, row_bytes, out, status);
        break;
    default:
        gf_gather_words<unsigned char>(ids, rows, slot, hot, cold, num_nodes, row_bytes, out, status);
        break;
    }
}

// gf_map_ids: out[i] = new2old[nodes[i]] (new2old null: nodes[i]), i < *n:
// a batch's nodes in original ids.
extern "C" __global__ void gf_map_ids(const gf_i64 *new2old, const gf_i64 *nodes, const gf_i64 *n, gf_i64 *out) {
    const gf_i64 rows = *n;
    GF_FOR(i, rows) {
        const gf_i64 v = nodes[i];
        out[i] = new2old ? new2old[v] : v;
    }
}

#define GF_HOT_COUNTERS 64

// gf_count_hot adds the number of nodes[0:*n) that are hot (slot >= 0) to
// counts[0:GF_HOT_COUNTERS), spread over the counters by block so that no
// single address takes every atomic; the host sums them.
extern "C" __global__ void gf_count_hot(const gf_i32 *slot, const gf_i64 *nodes, const gf_i64 *n, gf_u64 *counts) {
    const gf_i64 rows = *n;
    gf_u64 mine = 0;
    GF_FOR(i, rows) mine += slot[nodes[i]] >= 0 ? 1 : 0;
    if (mine) atomicAdd(&counts[blockIdx.x % GF_HOT_COUNTERS], mine);
}
