// Shared definitions of graphferry's CUDA kernels.
//
// These files compile three ways: with NVRTC to PTX for the device (no system
// headers are available there, hence the own integer types), and as plain
// C++ on the host through cuda/emu/shim.h, which defines __global__,
// __device__, the thread indices and the atomics for the emulator. Keep them
// free of anything neither side provides.
//
// Every kernel parameter is 8 bytes (a pointer, gf_i64, gf_u64 or double):
// the Go launcher and the emulator pass parameters as 8-byte words.
#ifndef GF_KERNELS_COMMON_CUH
#define GF_KERNELS_COMMON_CUH

typedef long long gf_i64;
typedef unsigned long long gf_u64;
typedef int gf_i32;

// The graph as the kernels see it: one struct in device memory, written by
// the Go side as 11 little-endian 8-byte words in this order.
struct gf_graph {
    const gf_i64 *indptr;   // n+1 CSC offsets
    const gf_i64 *idx64;    // sources, int64 storage (or null)
    const gf_i32 *idx32;    // sources, int32 storage (or null)
    const gf_i64 *eids;     // edge ids by position (null: id = position)
    const float *weights;   // edge weights by position (null: unweighted)
    const gf_u64 *excl;     // bitmap of excluded positions (null: none)
    const gf_i64 *new2old;  // original id of each node (null: identity)
    gf_i64 num_nodes;
    gf_i64 replace;         // sample with replacement
    gf_i64 biased;          // sample by edge weight
    gf_u64 *status;         // the device-side error report (gf_report)
};

// ---------------------------------------------------------------------------
// Device-side error reports. A kernel that finds its input inconsistent (a
// node outside the graph, a full hash table) does not fault: a fault is a
// sticky error that would end every CUDA call of the process, PyTorch's
// included. It records the first such finding in status[0:2] (code, detail)
// and skips the task; the host reads the words after the batch and reports
// an error naming the kernel (cuda/sampler.go, statusError).
// ---------------------------------------------------------------------------

#define GF_ST_COUNT_NODE 1   // gf_count: frontier node outside [0, num_nodes)
#define GF_ST_SAMPLE_NODE 2  // gf_sample: frontier node outside [0, num_nodes)
#define GF_ST_TABLE_FULL 3   // gf_table_insert: no free slot
#define GF_ST_AU_FULL 4      // gf_au_insert: no free slot
#define GF_ST_GATHER_NODE 5  // gf_gather: node outside [0, num_nodes)

__device__ __forceinline__ void gf_report(gf_u64 *status, gf_u64 code, gf_i64 detail) {
    if (atomicCAS(&status[0], 0ULL, code) == 0ULL) status[1] = (gf_u64)detail;
}

__device__ __forceinline__ bool gf_node_ok(const gf_graph *g, gf_i64 v) { return v >= 0 && v < g->num_nodes; }

// ---------------------------------------------------------------------------
// Counter-based random streams: a port of engine/sample/rng.go. A task's
// stream depends only on (seed, batch key, hop, original node id), which is
// what makes the GPU's batches equal the CPU engine's.
// ---------------------------------------------------------------------------

#define GF_GOLDEN 0x9e3779b97f4a7c15ULL

__device__ __forceinline__ gf_u64 gf_mix64(gf_u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

__device__ __forceinline__ gf_u64 gf_stream_state(gf_u64 seed, gf_u64 key, gf_u64 hop, gf_u64 node) {
    gf_u64 h = gf_mix64(seed + GF_GOLDEN);
    h = gf_mix64(h ^ (key + 0x6a09e667f3bcc909ULL));
    h = gf_mix64(h ^ (hop + 0xbb67ae8584caa73bULL));
    h = gf_mix64(h ^ (node + 0x3c6ef372fe94f82bULL));
    return h;
}

struct gf_stream {
    gf_u64 s;
};

__device__ __forceinline__ gf_u64 gf_next(gf_stream *r) {
    r->s += GF_GOLDEN;
    return gf_mix64(r->s);
}

// gf_below: uniform in [0, n), n > 0, Lemire's method exactly as stream.below
// (same draws consumed, same rejections).
__device__ __forceinline__ gf_u64 gf_below(gf_stream *r, gf_u64 n) {
    gf_u64 x = gf_next(r);
    gf_u64 hi = __umul64hi(x, n);
    gf_u64 lo = x * n;
    if (lo < n) {
        gf_u64 thresh = (0ULL - n) % n;
        while (lo < thresh) {
            x = gf_next(r);
            hi = __umul64hi(x, n);
            lo = x * n;
        }
    }
    return hi;
}

// gf_unit: uniform double in [0, 1) from 53 bits, as stream.unit.
__device__ __forceinline__ double gf_unit(gf_stream *r) {
    return __dmul_rn((double)(gf_next(r) >> 11), 0x1p-53);
}

// gf_log is Go's math.Log for the positive normal doubles the exponential
// keys need, operation for operation as Go's amd64 assembly (archLog), with
// explicitly rounded operations so that no FMA contraction changes a bit.
// CUDA's log() is not correctly rounded and would give keys differing in the
// last place from the CPU engine's.
__device__ __forceinline__ double gf_log(double x) {
    const double HSqrt2 = 7.07106781186547524401e-01;
    const double Ln2Hi = 6.93147180369123816490e-01;
    const double Ln2Lo = 1.90821492927058770002e-10;
    const double L1 = 6.666666666666735130e-01;
    const double L2 = 3.999999999940941908e-01;
    const double L3 = 2.857142874366239149e-01;
    const double L4 = 2.222219843214978396e-01;
    const double L5 = 1.818357216161805012e-01;
    const double L6 = 1.531383769920937332e-01;
    const double L7 = 1.479819860511658591e-01;
    gf_u64 b = (gf_u64)__double_as_longlong(x);
    double f1 = __longlong_as_double((gf_i64)((b & 0x000FFFFFFFFFFFFFULL) | 0x3FE0000000000000ULL));
    double k = (double)((gf_i32)((b >> 52) & 0x7FF) - 0x3FE);
    // archLog doubles f1 when f1 <= sqrt(2)/2 (the portable Go code: <).
    if (f1 <= HSqrt2) {
        k = __dsub_rn(k, 1.0);
        f1 = __dmul_rn(f1, 2.0);
    }
    double f = __dsub_rn(f1, 1.0);
    double s = __ddiv_rn(f, __dadd_rn(2.0, f));
    double s2 = __dmul_rn(s, s);
    double s4 = __dmul_rn(s2, s2);
    double t1 = __dmul_rn(s2, __dadd_rn(L1, __dmul_rn(s4, __dadd_rn(L3, __dmul_rn(s4, __dadd_rn(L5, __dmul_rn(s4, L7)))))));
    double t2 = __dmul_rn(s4, __dadd_rn(L2, __dmul_rn(s4, __dadd_rn(L4, __dmul_rn(s4, L6)))));
    double R = __dadd_rn(t1, t2);
    double hfsq = __dmul_rn(__dmul_rn(0.5, f), f);
    double a = __dadd_rn(__dmul_rn(s, __dadd_rn(hfsq, R)), __dmul_rn(k, Ln2Lo));
    double c = __dsub_rn(__dsub_rn(hfsq, a), f);
    return __dsub_rn(__dmul_rn(k, Ln2Hi), c);
}

// gf_exp1: Exp(1) = -ln U, U uniform in (0, 1], as stream.exp1.
__device__ __forceinline__ double gf_exp1(gf_stream *r) {
    return -gf_log(__dmul_rn((double)((gf_next(r) >> 11) + 1), 0x1p-53));
}

// ---------------------------------------------------------------------------
// Graph access
// ---------------------------------------------------------------------------

__device__ __forceinline__ gf_i64 gf_source(const gf_graph *g, gf_i64 p) {
    return g->idx32 ? (gf_i64)g->idx32[p] : g->idx64[p];
}

__device__ __forceinline__ gf_i64 gf_edge_id(const gf_graph *g, gf_i64 p) {
    return g->eids ? g->eids[p] : p;
}

__device__ __forceinline__ gf_i64 gf_orig(const gf_graph *g, gf_i64 v) {
    return g->new2old ? g->new2old[v] : v;
}

__device__ __forceinline__ bool gf_excluded(const gf_graph *g, gf_i64 p) {
    return g->excl && ((g->excl[p >> 6] >> (p & 63)) & 1ULL);
}

// A position is a candidate when not excluded and, when biased, of positive
// weight (filter.go's candidate).
__device__ __forceinline__ bool gf_candidate(const gf_graph *g, gf_i64 p) {
    if (gf_excluded(g, p)) return false;
    return !g->biased || g->weights[p] > 0.0f;
}

__device__ __forceinline__ bool gf_filtered(const gf_graph *g) {
    return g->biased || g->excl;
}

// ---------------------------------------------------------------------------
// Sizes that live on the device. A batch is sampled without the host reading
// any size between its kernels (cuda/sampler.go): every kernel is launched on
// a grid sized from an upper bound the host knows, and reads the actual
// extent of its range from device memory, [lo ? *lo : 0, *hi).
// ---------------------------------------------------------------------------

__device__ __forceinline__ gf_i64 gf_lo(const gf_i64 *lo) { return lo ? *lo : 0; }

// Schedule points. On the device they are nothing. The fake driver and the
// emulator (cuda/emu/shim.h) define GF_SCHED to let the host thread running
// this GPU thread yield at that point when a launch runs on several host
// threads, so that code which relies on the window between a read and a
// write not being interleaved (a missing atomic) is interleaved there.
#ifndef GF_SCHED
#define GF_SCHED() ((void)0)
#endif

// Grid-stride loop over [0, n).
#define GF_FOR(i, n) \
    for (gf_i64 i = (gf_i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (gf_i64)gridDim.x * blockDim.x)

#endif
