// Exclusive prefix sums without shared memory or block barriers (so the
// host emulator runs them exactly), in levels: the input in[0:n) is level
// 0; level l+1 holds the sums of level l's chunks of `chunk` values
// (n_{l+1} = ceil(n_l / chunk)), until a level of at most chunk values,
// which one thread scans (gf_scan_partials); then each lower level is
// rewritten from the offsets of its chunks (gf_scan_apply), level 0 into
// out. Every pass is short (one chunk per thread) and parallel, however
// large n is.
//
// n = *hi - (lo ? *lo : 0) is read on the device; the host plans the levels
// and sizes the grids from an upper bound. out (and every level above 0)
// has n_l+1 entries: out[i] is the initial value plus the sum of in[0:i],
// out[n] the total; out may be in. The initial value is *init (init null:
// 0); the total is also written to *total when total is not null, so that
// later kernels read it in place.
#include "common.cuh"

// Level level's length for an input of n values.
__device__ __forceinline__ gf_i64 gf_scan_level(gf_i64 n, gf_i64 level, gf_i64 chunk) {
    for (gf_i64 l = 0; l < level; l++) n = (n + chunk - 1) / chunk;
    return n;
}

// gf_scan_chunks: partial[c] = the sum of chunk c of level `level` (in).
extern "C" __global__ void gf_scan_chunks(const gf_i64 *in, const gf_i64 *lo, const gf_i64 *hi, gf_i64 level,
                                          gf_i64 chunk, gf_i64 *partial) {
    const gf_i64 n = gf_scan_level(*hi - gf_lo(lo), level, chunk);
    const gf_i64 nchunks = (n + chunk - 1) / chunk;
    GF_FOR(c, nchunks) {
        gf_i64 a = c * chunk, b = a + chunk < n ? a + chunk : n;
        gf_i64 s = 0;
        for (gf_i64 i = a; i < b; i++) s += in[i];
        partial[c] = s;
    }
}

// gf_scan_partials scans the top level (`level`, at most chunk values) in
// place, one thread: afterwards partial[c] is the offset of its chunk c
// below and partial[n_level] the total (both including the initial value).
extern "C" __global__ void gf_scan_partials(gf_i64 *partial, const gf_i64 *lo, const gf_i64 *hi, gf_i64 level,
                                            gf_i64 chunk, const gf_i64 *init, gf_i64 *total) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const gf_i64 n = gf_scan_level(*hi - gf_lo(lo), level, chunk);
    gf_i64 run = init ? *init : 0;
    for (gf_i64 c = 0; c < n; c++) {
        gf_i64 x = partial[c];
        partial[c] = run;
        run += x;
    }
    partial[n] = run;
    if (total) *total = run;
}

// gf_scan_apply rewrites level `level` (in, into out) from the offsets of
// its chunks (partial: the level above, scanned).
extern "C" __global__ void gf_scan_apply(const gf_i64 *in, const gf_i64 *lo, const gf_i64 *hi, gf_i64 level,
                                         gf_i64 chunk, const gf_i64 *partial, gf_i64 *out) {
    const gf_i64 n = gf_scan_level(*hi - gf_lo(lo), level, chunk);
    const gf_i64 nchunks = (n + chunk - 1) / chunk;
    if (n == 0) {
        if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = partial[0];
        return;
    }
    GF_FOR(c, nchunks) {
        gf_i64 a = c * chunk, b = a + chunk < n ? a + chunk : n;
        gf_i64 run = partial[c];
        for (gf_i64 i = a; i < b; i++) {
            gf_i64 x = in[i];
            out[i] = run;
            run += x;
        }
        if (c == nchunks - 1) out[n] = partial[nchunks];
    }
}
