// Exclusive prefix sums in three launches, without shared memory or block
// barriers (so the host emulator runs them exactly): gf_scan_chunks sums
// each chunk of `chunk` values, gf_scan_partials (one thread) scans the chunk
// sums, gf_scan_apply rewrites each chunk. The input is in[0:n) with
// n = *hi - (lo ? *lo : 0), read on the device (the host sizes the grid and
// the chunk from an upper bound of n). out has n+1 entries: out[i] is the
// initial value plus the sum of in[0:i], out[n] the total; out may be in.
// The initial value is *init (init null: 0); the total is also written to
// *total when total is not null, so that later kernels read it in place.
#include "common.cuh"

extern "C" __global__ void gf_scan_chunks(const gf_i64 *in, const gf_i64 *lo, const gf_i64 *hi, gf_i64 chunk,
                                          gf_i64 *partial) {
    const gf_i64 n = *hi - gf_lo(lo);
    const gf_i64 nchunks = (n + chunk - 1) / chunk;
    GF_FOR(c, nchunks) {
        gf_i64 a = c * chunk, b = a + chunk < n ? a + chunk : n;
        gf_i64 s = 0;
        for (gf_i64 i = a; i < b; i++) s += in[i];
        partial[c] = s;
    }
}

// partial has nchunks+1 entries; afterwards partial[c] is the offset of chunk
// c and partial[nchunks] the total (both including the initial value).
extern "C" __global__ void gf_scan_partials(gf_i64 *partial, const gf_i64 *lo, const gf_i64 *hi, gf_i64 chunk,
                                            const gf_i64 *init, gf_i64 *total) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const gf_i64 n = *hi - gf_lo(lo);
    const gf_i64 nchunks = (n + chunk - 1) / chunk;
    gf_i64 run = init ? *init : 0;
    for (gf_i64 c = 0; c < nchunks; c++) {
        gf_i64 x = partial[c];
        partial[c] = run;
        run += x;
    }
    partial[nchunks] = run;
    if (total) *total = run;
}

extern "C" __global__ void gf_scan_apply(const gf_i64 *in, const gf_i64 *lo, const gf_i64 *hi, gf_i64 chunk,
                                         const gf_i64 *partial, gf_i64 *out) {
    const gf_i64 n = *hi - gf_lo(lo);
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
