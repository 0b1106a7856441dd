// Exclusive prefix sums in three launches, without shared memory or block
// barriers (so the host emulator runs them exactly): gf_scan_chunks sums
// each chunk of `chunk` values, gf_scan_partials (one thread) scans the chunk
// sums, gf_scan_apply rewrites each chunk. out has n+1 entries: out[i] is
// init plus the sum of in[0:i], out[n] the total; out may be in.
#include "common.cuh"

extern "C" __global__ void gf_scan_chunks(const gf_i64 *in, gf_i64 n, gf_i64 chunk, gf_i64 *partial) {
    gf_i64 nchunks = (n + chunk - 1) / chunk;
    GF_FOR(c, nchunks) {
        gf_i64 lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
        gf_i64 s = 0;
        for (gf_i64 i = lo; i < hi; i++) s += in[i];
        partial[c] = s;
    }
}

// partial has nchunks+1 entries; afterwards partial[c] is the offset of chunk
// c and partial[nchunks] the total (both including init).
extern "C" __global__ void gf_scan_partials(gf_i64 *partial, gf_i64 nchunks, gf_i64 init) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    gf_i64 run = init;
    for (gf_i64 c = 0; c < nchunks; c++) {
        gf_i64 x = partial[c];
        partial[c] = run;
        run += x;
    }
    partial[nchunks] = run;
}

extern "C" __global__ void gf_scan_apply(const gf_i64 *in, gf_i64 n, gf_i64 chunk, const gf_i64 *partial,
                                         gf_i64 *out) {
    gf_i64 nchunks = (n + chunk - 1) / chunk;
    GF_FOR(c, nchunks) {
        gf_i64 lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
        gf_i64 run = partial[c];
        for (gf_i64 i = lo; i < hi; i++) {
            gf_i64 x = in[i];
            out[i] = run;
            run += x;
        }
        if (c == nchunks - 1) out[n] = partial[nchunks];
    }
}
