/* Tests of the fake CUDA driver (cuda/fakedriver): the driver semantics it
 * models, through the driver API as a real program calls it (cuda.h, -lcuda
 * against the fake's directory). Run by cuda/fakedriver/test.sh, once per
 * mode, since the fake reads its configuration at cuInit:
 *
 *   test_fakecuda basic K80 K70 KNEW K90 KERNELS   default configuration
 *   test_fakecuda initerror                        GF_FAKECUDA_INIT_ERROR=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
 *   test_fakecuda nodevice                         GF_FAKECUDA_DEVICES=0
 *   test_fakecuda olddriver K80 K70                GF_FAKECUDA_DRIVER=12000
 *   test_fakecuda multi K80 K70                    GF_FAKECUDA_DEVICES=2 GF_FAKECUDA_CC=7.0,9.0
 *   test_fakecuda oom                              GF_FAKECUDA_MEM=1M
 *   test_fakecuda concurrent K80                   GF_FAKECUDA_THREADS=8 GF_FAKECUDA_SEED=...
 *
 * K80: NVRTC's PTX for compute_80 (.version 8.1, .target sm_80); K70: for
 * compute_70; KNEW: K80 with .version 8.5 (needs driver 12050); K90: K80
 * with .target sm_90; KERNELS: the PTX whose every .entry must be found. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

static int failures;

static void check_name(CUresult r) {
    const char *name = NULL, *text = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name || cuGetErrorString(r, &text) != CUDA_SUCCESS || !text) {
        fprintf(stderr, "FAIL: cuGetErrorName/String do not know %d\n", (int)r);
        failures++;
    }
}

/* EXPECT(call, code): call returns code (and the code has a name). */
#define EXPECT(call, code) expect((call), (code), #call, __LINE__)
static void expect(CUresult got, CUresult want, const char *what, int line) {
    check_name(got);
    if (got != want) {
        const char *g = "?", *w = "?";
        cuGetErrorName(got, &g);
        cuGetErrorName(want, &w);
        fprintf(stderr, "FAIL line %d: %s = %s (%d), want %s (%d)%s%s\n", line, what, g, (int)got, w, (int)want,
                got == CUDA_SUCCESS ? "" : "; fake: ", got == CUDA_SUCCESS ? "" : gf_fakecuda_last_reason());
        failures++;
    }
}
#define OK(call) EXPECT(call, CUDA_SUCCESS)
#define TRUE(cond) truth((cond), #cond, __LINE__)
static void truth(int cond, const char *what, int line) {
    if (!cond) {
        fprintf(stderr, "FAIL line %d: %s\n", line, what);
        failures++;
    }
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) exit(2);
    s[n] = 0;
    fclose(f);
    return s;
}

static gf_fakecuda_stats_t stats(int dev) {
    gf_fakecuda_stats_t s;
    memset(&s, 0, sizeof s);
    TRUE(gf_fakecuda_stats(dev, &s) == 0);
    return s;
}

static CUcontext current(void) {
    CUcontext c = (CUcontext)(uintptr_t)0xdead;
    OK(cuCtxGetCurrent(&c));
    return c;
}

/* The .entry names of a PTX text and their parameter counts. */
#define MAX_ENTRIES 64
struct entry {
    char name[128];
    int nparams;
};
static int ptx_entries(const char *ptx, struct entry *out) {
    int n = 0;
    for (const char *p = strstr(ptx, ".entry "); p && n < MAX_ENTRIES; p = strstr(p + 1, ".entry ")) {
        const char *b = p + 7, *e = b;
        while (*e && *e != '(' && *e != ' ' && *e != '\n' && *e != '{') e++;
        size_t len = (size_t)(e - b) < sizeof out[n].name - 1 ? (size_t)(e - b) : sizeof out[n].name - 1;
        memcpy(out[n].name, b, len);
        out[n].name[len] = 0;
        out[n].nparams = 0;
        const char *close = strchr(e, ')');
        for (const char *q = strstr(e, ".param"); q && close && q < close; q = strstr(q + 1, ".param")) out[n].nparams++;
        n++;
    }
    return n;
}

static int nparams(const char *ptx, const char *name) {
    struct entry es[MAX_ENTRIES];
    int n = ptx_entries(ptx, es);
    for (int i = 0; i < n; i++) {
        if (strcmp(es[i].name, name) == 0) return es[i].nparams;
    }
    return -1;
}

/* launch: a 1-D launch of f with 8-byte words as parameters. */
static CUresult launch(CUfunction f, unsigned grid, unsigned block, CUstream s, uint64_t *args, int nargs) {
    void *params[16];
    for (int i = 0; i < nargs; i++) params[i] = &args[i];
    return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, params, NULL);
}

static CUdeviceptr dalloc(size_t bytes) {
    CUdeviceptr p = 0;
    OK(cuMemAlloc(&p, bytes));
    return p;
}

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* scan runs the three scan kernels on n random values and checks the
 * exclusive prefix sums against the host's. The kernels read n (hi - lo)
 * and the initial value from device memory and write the total there. */
static void scan(CUmodule mod, int64_t n, int64_t chunk, unsigned block) {
    CUfunction fc, fp, fa;
    OK(cuModuleGetFunction(&fc, mod, "gf_scan_chunks"));
    OK(cuModuleGetFunction(&fp, mod, "gf_scan_partials"));
    OK(cuModuleGetFunction(&fa, mod, "gf_scan_apply"));
    int64_t *in = malloc((size_t)n * 8), *want = malloc((size_t)(n + 1) * 8), *got = malloc((size_t)(n + 1) * 8);
    int64_t init = 17, chunks = (n + chunk - 1) / chunk;
    want[0] = init;
    for (int64_t i = 0; i < n; i++) {
        in[i] = (int64_t)(next_rand() % 1000);
        want[i + 1] = want[i] + in[i];
    }
    CUdeviceptr din = dalloc((size_t)n * 8), dout = dalloc((size_t)(n + 1) * 8), dpart = dalloc((size_t)(chunks + 1) * 8),
                dw = dalloc(4 * 8);
    int64_t words[4] = {5, n + 5, init, -1}; /* lo, hi, init, total */
    OK(cuMemcpyHtoD(din, in, (size_t)n * 8));
    OK(cuMemcpyHtoD(dw, words, sizeof words));
    unsigned grid = (unsigned)((chunks + block - 1) / block);
    /* Two levels: the input's chunk sums (level 1) scanned by one thread. */
    uint64_t a1[] = {din, dw, dw + 8, 0, (uint64_t)chunk, dpart};
    OK(launch(fc, grid, block, NULL, a1, 6));
    uint64_t a2[] = {dpart, dw, dw + 8, 1, (uint64_t)chunk, dw + 16, dw + 24};
    OK(launch(fp, 1, 1, NULL, a2, 7));
    uint64_t a3[] = {din, dw, dw + 8, 0, (uint64_t)chunk, dpart, dout};
    OK(launch(fa, grid, block, NULL, a3, 7));
    OK(cuMemcpyDtoH(got, dout, (size_t)(n + 1) * 8));
    TRUE(memcmp(got, want, (size_t)(n + 1) * 8) == 0);
    OK(cuMemcpyDtoH(words, dw, sizeof words));
    TRUE(words[3] == want[n]);
    CUdeviceptr all[] = {din, dout, dpart, dw};
    for (int i = 0; i < 4; i++) OK(cuMemFree(all[i]));
    free(in);
    free(want);
    free(got);
}

/* count runs gf_count on a random graph of n nodes and checks each task's
 * count, min(degree, fanout), against the host's. */
static void count(CUmodule mod, int64_t n, int64_t fanout) {
    CUfunction f;
    OK(cuModuleGetFunction(&f, mod, "gf_count"));
    int64_t *indptr = malloc((size_t)(n + 1) * 8), *nodes = malloc((size_t)n * 8), *got = malloc((size_t)n * 8);
    indptr[0] = 0;
    for (int64_t v = 0; v < n; v++) indptr[v + 1] = indptr[v] + (int64_t)(next_rand() % 12);
    int64_t m = indptr[n];
    int64_t *idx = calloc((size_t)m + 1, 8);
    for (int64_t i = 0; i < n; i++) nodes[i] = (int64_t)(next_rand() % (uint64_t)n);
    CUdeviceptr dindptr = dalloc((size_t)(n + 1) * 8), didx = dalloc((size_t)(m + 1) * 8), dnodes = dalloc((size_t)n * 8),
                dcounts = dalloc((size_t)n * 8), dstatus = dalloc(16), dg = dalloc(11 * 8);
    OK(cuMemcpyHtoD(dindptr, indptr, (size_t)(n + 1) * 8));
    OK(cuMemcpyHtoD(didx, idx, (size_t)(m + 1) * 8));
    OK(cuMemcpyHtoD(dnodes, nodes, (size_t)n * 8));
    OK(cuMemsetD8(dstatus, 0, 16));
    /* struct gf_graph: indptr, idx64, idx32, eids, weights, excl, new2old,
     * num_nodes, replace, biased, and a last word (a status pointer in
     * newer kernels: a zeroed buffer suits both). */
    uint64_t g[11] = {dindptr, didx, 0, 0, 0, 0, 0, (uint64_t)n, 0, 0, dstatus};
    OK(cuMemcpyHtoD(dg, g, sizeof g));
    /* The frontier nodes[*lo, *hi), both read on the device. */
    int64_t start = 3, nd = n - 3, span[2] = {start, n};
    CUdeviceptr dspan = dalloc(16);
    OK(cuMemcpyHtoD(dspan, span, sizeof span));
    uint64_t args[] = {dg, dnodes, dspan, dspan + 8, (uint64_t)fanout, dcounts};
    OK(launch(f, (unsigned)((nd + 255) / 256), 256, NULL, args, 6));
    OK(cuMemcpyDtoH(got, dcounts, (size_t)nd * 8));
    int bad = 0;
    for (int64_t t = 0; t < nd; t++) {
        int64_t v = nodes[start + t], deg = indptr[v + 1] - indptr[v];
        if (got[t] != (deg < fanout ? deg : fanout)) bad++;
    }
    TRUE(bad == 0);
    CUdeviceptr all[] = {dindptr, didx, dnodes, dcounts, dstatus, dg, dspan};
    for (int i = 0; i < 7; i++) OK(cuMemFree(all[i]));
    free(indptr);
    free(nodes);
    free(got);
    free(idx);
}

/* last_writer inserts n copies of one node with gf_table_insert: every
 * thread writes its index into the node's one slot, so the value left is
 * the index of the thread that ran last; n-1 in the emulator's in-order
 * schedule. (The kernel's precondition is distinct nodes: this is the race
 * a kernel relying on thread order would have.) */
static int64_t last_writer(CUmodule mod, const char *ptx, int64_t n) {
    CUfunction f;
    OK(cuModuleGetFunction(&f, mod, "gf_table_insert"));
    int64_t slots = 64;
    CUdeviceptr keys = dalloc((size_t)slots * 8), vals = dalloc((size_t)slots * 8), nodes = dalloc((size_t)n * 8),
                status = dalloc(16);
    OK(cuMemsetD8(keys, 0xff, (size_t)slots * 8));
    OK(cuMemsetD8(vals, 0x7f, (size_t)slots * 8));
    OK(cuMemsetD8(status, 0, 16));
    OK(cuMemsetD32(nodes, 7, (size_t)n * 2)); /* the int64 0x0000000700000007 */
    uint64_t args[] = {keys, vals, (uint64_t)(slots - 1), nodes, (uint64_t)n, status};
    int np = nparams(ptx, "gf_table_insert"); /* 6 when the kernels report to a status word */
    TRUE(np == 5 || np == 6);
    OK(launch(f, (unsigned)((n + 255) / 256), 256, NULL, args, np));
    int64_t host[64], last = -1, found = 0;
    OK(cuMemcpyDtoH(host, vals, sizeof host));
    for (int i = 0; i < 64; i++) {
        if (host[i] != 0x7f7f7f7f7f7f7f7fLL) {
            last = host[i];
            found++;
        }
    }
    TRUE(found == 1);
    CUdeviceptr all[] = {keys, vals, nodes, status};
    for (int i = 0; i < 4; i++) OK(cuMemFree(all[i]));
    return last;
}

/* claims inserts n distinct nodes with gf_table_insert into a table of
 * 2n slots (rounded to a power of two): every node must own exactly one
 * slot holding its position. Threads racing for a slot are told apart by
 * the kernel's atomicCAS; a plain check-then-write loses claims on a
 * concurrent schedule, and two nodes end up in one slot. Returns the nodes
 * misplaced. */
static int64_t claims(CUmodule mod, int64_t n) {
    CUfunction f;
    OK(cuModuleGetFunction(&f, mod, "gf_table_insert"));
    int64_t slots = 64;
    while (slots < 2 * n) slots <<= 1;
    int64_t *nodes = malloc((size_t)n * 8), *keys = malloc((size_t)slots * 8), *vals = malloc((size_t)slots * 8);
    for (int64_t i = 0; i < n; i++) nodes[i] = i * 7919 + 3; /* distinct */
    CUdeviceptr dk = dalloc((size_t)slots * 8), dv = dalloc((size_t)slots * 8), dn = dalloc((size_t)n * 8), ds = dalloc(16);
    OK(cuMemsetD8(dk, 0xff, (size_t)slots * 8));
    OK(cuMemsetD8(dv, 0x7f, (size_t)slots * 8));
    OK(cuMemsetD8(ds, 0, 16));
    OK(cuMemcpyHtoD(dn, nodes, (size_t)n * 8));
    uint64_t args[] = {dk, dv, (uint64_t)(slots - 1), dn, (uint64_t)n, ds};
    OK(launch(f, (unsigned)((n + 255) / 256), 256, NULL, args, 6));
    OK(cuMemcpyDtoH(keys, dk, (size_t)slots * 8));
    OK(cuMemcpyDtoH(vals, dv, (size_t)slots * 8));
    int64_t found = 0;
    for (int64_t s = 0; s < slots; s++) {
        if (keys[s] == -1) continue;
        int64_t i = vals[s];
        if (i >= 0 && i < n && nodes[i] == keys[s]) found++;
    }
    CUdeviceptr all[] = {dk, dv, dn, ds};
    for (int i = 0; i < 4; i++) OK(cuMemFree(all[i]));
    free(nodes);
    free(keys);
    free(vals);
    return n - found;
}

static CUmodule load(const char *ptx) {
    CUmodule m = NULL;
    OK(cuModuleLoadData(&m, ptx));
    return m;
}

/* ---- modes ---------------------------------------------------------------- */

struct thread_result {
    CUcontext cur;
    CUresult alloc;
};
static void *other_thread(void *arg) {
    struct thread_result *r = arg;
    CUdeviceptr p;
    r->cur = (CUcontext)(uintptr_t)1;
    cuCtxGetCurrent(&r->cur);
    r->alloc = cuMemAlloc(&p, 64);
    return NULL;
}

static void basic(char **ptx) {
    const char *k80 = ptx[0], *k70 = ptx[1], *knew = ptx[2], *k90 = ptx[3], *kernels = ptx[4];
    int n, v;
    CUdevice dev;

    /* Initialisation. */
    TRUE(gf_fakecuda_stats(0, &(gf_fakecuda_stats_t){0}) == -1);
    TRUE(gf_fakecuda_registrations(&(int64_t){0}, &(int64_t){0}) == -1);
    EXPECT(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(cuMemAlloc(&(CUdeviceptr){0}, 8), CUDA_ERROR_NOT_INITIALIZED);
    OK(cuDriverGetVersion(&v)); /* allowed before cuInit */
    TRUE(v == 12040);
    EXPECT(cuInit(1), CUDA_ERROR_INVALID_VALUE);
    OK(cuInit(0));
    OK(cuInit(0));

    /* Devices. */
    OK(cuDeviceGetCount(&n));
    TRUE(n == 1);
    EXPECT(cuDeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
    EXPECT(cuDeviceGet(&dev, -1), CUDA_ERROR_INVALID_DEVICE);
    OK(cuDeviceGet(&dev, 0));
    char name[128];
    OK(cuDeviceGetName(name, sizeof name, dev));
    TRUE(strcmp(name, "graphferry fake GPU 0 (sm_80)") == 0);
    int major, minor, threads, warp, ua, maph, sms, gridx;
    OK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    OK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    OK(cuDeviceGetAttribute(&threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev));
    OK(cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
    OK(cuDeviceGetAttribute(&ua, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, dev));
    OK(cuDeviceGetAttribute(&maph, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, dev));
    OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    OK(cuDeviceGetAttribute(&gridx, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, dev));
    TRUE(major == 8 && minor == 0 && threads == 1024 && warp == 32 && ua == 1 && maph == 1 && sms > 0 &&
         gridx == 0x7fffffff);
    EXPECT(cuDeviceGetAttribute(&v, (CUdevice_attribute)100000, dev), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuDeviceGetAttribute(&v, (CUdevice_attribute)0, dev), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 3), CUDA_ERROR_INVALID_DEVICE);
    size_t total;
    OK(cuDeviceTotalMem(&total, dev));
    TRUE(total == (size_t)1 << 30);
    CUuuid uuid;
    OK(cuDeviceGetUuid(&uuid, dev));

    /* Detectable as the fake. */
    int (*is_fake)(void) = (int (*)(void))(uintptr_t)dlsym(RTLD_DEFAULT, "gf_fakecuda_is_fake");
    TRUE(is_fake && is_fake() == 1);

    /* No context yet. */
    TRUE(current() == NULL);
    CUdeviceptr p;
    EXPECT(cuMemAlloc(&p, 64), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuCtxPopCurrent(NULL), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuModuleLoadData(&(CUmodule){0}, k80), CUDA_ERROR_INVALID_CONTEXT);
    OK(cuCtxSetCurrent(NULL)); /* popping an empty stack: a no-op */

    /* The primary context: one handle, refcounted. */
    CUcontext P, P2;
    unsigned flags;
    int active;
    OK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    TRUE(active == 0);
    OK(cuDevicePrimaryCtxRetain(&P, dev));
    OK(cuDevicePrimaryCtxRetain(&P2, dev));
    TRUE(P == P2 && P != NULL);
    TRUE(stats(0).primary_refcount == 2);
    OK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    TRUE(active == 1);
    TRUE(current() == NULL); /* retaining does not make it current */
    EXPECT(cuCtxDestroy(P), CUDA_ERROR_INVALID_CONTEXT);

    /* The context stack. */
    CUcontext A, popped;
    OK(cuCtxCreate(&A, 0, dev)); /* pushed */
    TRUE(current() == A);
    TRUE(stats(0).live_contexts == 2);
    OK(cuCtxPushCurrent(P));
    TRUE(current() == P);
    CUdevice cd = -1;
    OK(cuCtxGetDevice(&cd));
    TRUE(cd == dev);
    OK(cuCtxPopCurrent(&popped));
    TRUE(popped == P && current() == A); /* whatever was current is restored */
    OK(cuCtxSetCurrent(P));              /* replaces the top */
    TRUE(current() == P);
    OK(cuCtxPopCurrent(&popped));
    TRUE(popped == P && current() == NULL);
    OK(cuCtxPushCurrent(A));
    OK(cuCtxPushCurrent(P));
    OK(cuCtxSetCurrent(NULL)); /* NULL pops */
    TRUE(current() == A);
    OK(cuCtxSetCurrent(P)); /* stack: P */
    EXPECT(cuCtxPushCurrent(NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuCtxPushCurrent((CUcontext)(uintptr_t)0x1000), CUDA_ERROR_INVALID_CONTEXT);
    unsigned api;
    OK(cuCtxGetApiVersion(A, &api));
    OK(cuCtxSynchronize());

    /* Another thread has its own (empty) stack. */
    struct thread_result tr;
    pthread_t th;
    TRUE(pthread_create(&th, NULL, other_thread, &tr) == 0);
    pthread_join(th, NULL);
    TRUE(tr.cur == NULL && tr.alloc == CUDA_ERROR_INVALID_CONTEXT);

    /* Allocations. */
    gf_fakecuda_stats_t s0 = stats(0);
    CUdeviceptr a = dalloc(1000), b = dalloc(4096);
    TRUE(a % 256 == 0 && b % 256 == 0);
    gf_fakecuda_stats_t s1 = stats(0);
    TRUE(s1.live_allocs == s0.live_allocs + 2 && s1.live_alloc_bytes == s0.live_alloc_bytes + 1024 + 4096);
    size_t fr, tot;
    OK(cuMemGetInfo(&fr, &tot));
    TRUE(tot == (size_t)1 << 30 && fr == tot - (size_t)s1.live_alloc_bytes);
    CUdeviceptr base;
    size_t size;
    OK(cuMemGetAddressRange(&base, &size, a + 500));
    TRUE(base == a && size == 1000);
    EXPECT(cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemFree(a + 8), CUDA_ERROR_INVALID_VALUE); /* not the start */
    EXPECT(cuMemFree(0), CUDA_ERROR_INVALID_VALUE);
    OK(cuCtxPushCurrent(A));
    EXPECT(cuMemFree(a), CUDA_ERROR_INVALID_VALUE); /* another context's */
    EXPECT(cuMemGetAddressRange(&base, &size, a), CUDA_ERROR_NOT_FOUND);
    CUdeviceptr inA = dalloc(256);
    OK(cuCtxPopCurrent(NULL));

    /* Copies and memsets: device ranges inside one live allocation of the
     * current context; host pointers as given. */
    unsigned char host[4096], back[4096];
    for (int i = 0; i < 4096; i++) host[i] = (unsigned char)i;
    OK(cuMemcpyHtoD(a, host, 1000));
    OK(cuMemcpyDtoH(back, a, 1000));
    TRUE(memcmp(host, back, 1000) == 0);
    EXPECT(cuMemcpyHtoD(a + 990, host, 20), CUDA_ERROR_INVALID_VALUE); /* past the end (padding is not the allocation's) */
    EXPECT(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)host, host, 8), CUDA_ERROR_INVALID_VALUE); /* host memory as device */
    EXPECT(cuMemcpyDtoH(back, (CUdeviceptr)(uintptr_t)host, 8), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyHtoD(inA, host, 8), CUDA_ERROR_INVALID_VALUE); /* another context's allocation */
    OK(cuMemcpyDtoD(b + 100, a, 1000));
    EXPECT(cuMemcpyDtoD(b, a, 1001), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyDtoD(inA, a, 8), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemcpyDtoH(back, b + 100, 1000));
    TRUE(memcmp(host, back, 1000) == 0);
    OK(cuMemcpy((CUdeviceptr)(uintptr_t)back, a, 16)); /* unified: device to host */
    OK(cuMemcpy(b, (CUdeviceptr)(uintptr_t)host, 16)); /* host to device */
    EXPECT(cuMemcpy(b + 4090, a, 16), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemsetD8(b, 0xab, 4096));
    OK(cuMemsetD32(b + 8, 0x01020304u, 2));
    OK(cuMemsetD16(b + 16, 0xbeef, 1));
    OK(cuMemcpyDtoH(back, b, 32));
    uint32_t w;
    uint16_t h;
    memcpy(&w, back + 12, 4);
    memcpy(&h, back + 16, 2);
    TRUE(back[0] == 0xab && back[7] == 0xab && w == 0x01020304u && h == 0xbeef && back[18] == 0xab);
    EXPECT(cuMemsetD32(b + 2, 0, 1), CUDA_ERROR_INVALID_VALUE); /* misaligned */
    EXPECT(cuMemsetD8(b + 4000, 0, 97), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemcpyHtoD(a, host, 0)); /* nothing to copy */

    /* Streams. */
    CUstream st, stA;
    OK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    EXPECT(cuStreamCreate(&stA, 0x10), CUDA_ERROR_INVALID_VALUE);
    OK(cuStreamGetFlags(st, &flags));
    TRUE(flags == CU_STREAM_NON_BLOCKING);
    OK(cuMemcpyHtoDAsync(a, host, 1000, st));
    OK(cuMemcpyDtoHAsync(back, a, 1000, NULL));
    OK(cuMemcpyDtoDAsync(b, a, 8, CU_STREAM_LEGACY));
    OK(cuMemsetD8Async(b, 1, 8, CU_STREAM_PER_THREAD));
    OK(cuMemsetD16Async(b, 1, 4, st));
    OK(cuMemsetD32Async(b, 1, 2, st));
    OK(cuMemcpyAsync(b, a, 8, st));
    OK(cuStreamSynchronize(st));
    OK(cuStreamQuery(st));
    EXPECT(cuMemcpyHtoDAsync(b + 4095, host, 2, st), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamSynchronize((CUstream)(uintptr_t)0x1234), CUDA_ERROR_INVALID_HANDLE);
    OK(cuCtxPushCurrent(A));
    OK(cuStreamCreate(&stA, 0));
    EXPECT(cuStreamSynchronize(st), CUDA_ERROR_INVALID_HANDLE); /* P's stream, A current */
    OK(cuCtxPopCurrent(NULL));
    EXPECT(cuMemcpyHtoDAsync(a, host, 8, stA), CUDA_ERROR_INVALID_HANDLE); /* A's stream, P current */
    EXPECT(cuMemsetD8Async(a, 0, 8, stA), CUDA_ERROR_INVALID_HANDLE);
    TRUE(stats(0).live_streams == 2);

    /* Events. */
    CUevent e1, e2, notiming, never, eA;
    OK(cuEventCreate(&e1, 0));
    OK(cuEventCreate(&e2, CU_EVENT_DEFAULT));
    OK(cuEventCreate(&notiming, CU_EVENT_DISABLE_TIMING));
    OK(cuEventCreate(&never, 0));
    EXPECT(cuEventCreate(&eA, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
    OK(cuEventRecord(e1, st));
    OK(cuEventRecord(e2, st)); /* after e1 in st's order (the fake keeps no legacy-stream implicit sync) */
    OK(cuEventRecord(notiming, NULL));
    OK(cuEventSynchronize(e2));
    OK(cuEventQuery(e1));
    float ms = -1;
    OK(cuEventElapsedTime(&ms, e1, e2));
    TRUE(ms >= 0);
    EXPECT(cuEventElapsedTime(&ms, e1, notiming), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuEventElapsedTime(&ms, e1, never), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuEventRecord(e1, stA), CUDA_ERROR_INVALID_HANDLE);
    OK(cuStreamWaitEvent(st, e1, 0));
    OK(cuCtxPushCurrent(A));
    OK(cuEventCreate(&eA, 0));
    OK(cuStreamWaitEvent(stA, e1, 0)); /* waiting on another context's event is allowed */
    OK(cuCtxPopCurrent(NULL));
    EXPECT(cuEventRecord(eA, st), CUDA_ERROR_INVALID_HANDLE); /* A's event, P current */
    TRUE(stats(0).live_events == 5);
    OK(cuEventDestroy(never));
    EXPECT(cuEventDestroy(never), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuEventQuery(never), CUDA_ERROR_INVALID_HANDLE);

    /* Pinned and registered host memory: device-accessible, identity mapped. */
    void *pinned;
    CUdeviceptr mapped;
    OK(cuMemHostAlloc(&pinned, 8192, CU_MEMHOSTALLOC_DEVICEMAP));
    OK(cuMemHostGetDevicePointer(&mapped, pinned, 0));
    TRUE(mapped == (CUdeviceptr)(uintptr_t)pinned);
    OK(cuMemcpyDtoD(a, mapped + 100, 1000));
    EXPECT(cuMemcpyDtoD(a, mapped + 8000, 1000), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemHostGetDevicePointer(&mapped, host, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemHostGetDevicePointer(&mapped, pinned, 1), CUDA_ERROR_INVALID_VALUE);
    void *pinned2;
    OK(cuMemAllocHost(&pinned2, 100));
    char *reg = malloc(1 << 16);
    int64_t regs0, live0, regs, live;
    TRUE(gf_fakecuda_registrations(&regs0, &live0) == 0);
    TRUE(gf_fakecuda_registrations(NULL, &live0) == -1);
    OK(cuMemHostRegister(reg, 1 << 16, 0));
    EXPECT(cuMemHostRegister(reg + 100, 10, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    /* Registrations are recorded: counted (the refused one not), and the
     * ranges inside a registered one answer 1, pinned allocations 0. */
    TRUE(gf_fakecuda_registrations(&regs, &live) == 0 && regs == regs0 + 1 && live == live0 + 1);
    TRUE(gf_fakecuda_is_registered((uintptr_t)reg + 100, 1000) == 1);
    TRUE(gf_fakecuda_is_registered((uintptr_t)reg, (1 << 16) + 1) == 0);
    TRUE(gf_fakecuda_is_registered((uintptr_t)reg, 0) == 0);
    TRUE(gf_fakecuda_is_registered((uintptr_t)pinned, 8) == 0);
    TRUE(gf_fakecuda_is_registered((uintptr_t)host, 8) == 0);
    OK(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)reg, host, 4096));
    TRUE(stats(0).live_host_ranges == 3);
    EXPECT(cuMemHostUnregister(reg + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    OK(cuMemHostUnregister(reg));
    TRUE(gf_fakecuda_registrations(&regs, &live) == 0 && regs == regs0 + 1 && live == live0);
    TRUE(gf_fakecuda_is_registered((uintptr_t)reg + 100, 1000) == 0);
    EXPECT(cuMemHostUnregister(reg), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    EXPECT(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)reg, host, 8), CUDA_ERROR_INVALID_VALUE);
    free(reg);
    EXPECT(cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFreeHost(pinned2));
    EXPECT(cuMemFreeHost(pinned2), CUDA_ERROR_INVALID_VALUE);

    /* Modules: PTX version and target, entries. */
    CUmodule mod, mod70, bad;
    long long loads0 = stats(0).module_loads;
    mod = load(k80);
    mod70 = load(k70);
    EXPECT(cuModuleLoadData(&bad, knew), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    EXPECT(cuModuleLoadData(&bad, k90), CUDA_ERROR_NO_BINARY_FOR_GPU);
    EXPECT(cuModuleLoadData(&bad, "hello, world"), CUDA_ERROR_INVALID_IMAGE);
    EXPECT(cuModuleLoadData(&bad, "\x7f" "ELF\x02\x01\x01"), CUDA_ERROR_INVALID_IMAGE);
    EXPECT(cuModuleLoadData(&bad, ".version 8.1\n.address_size 64\n"), CUDA_ERROR_INVALID_PTX);
    EXPECT(cuModuleLoadData(&bad, NULL), CUDA_ERROR_INVALID_VALUE);
    char log[512] = "";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof log};
    EXPECT(cuModuleLoadDataEx(&bad, knew, 2, opts, vals), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    TRUE(strstr(log, "PTX ISA 8.5") != NULL);
    TRUE(stats(0).module_loads == loads0 + 2 && stats(0).live_modules == 2);

    CUfunction fcount, f70;
    OK(cuModuleGetFunction(&fcount, mod, "gf_count"));
    OK(cuModuleGetFunction(&f70, mod70, "gf_count"));
    EXPECT(cuModuleGetFunction(&f70, mod, "gf_nope"), CUDA_ERROR_NOT_FOUND);
    EXPECT(cuModuleGetFunction(&f70, mod, "gf_"), CUDA_ERROR_NOT_FOUND);
    EXPECT(cuModuleGetGlobal(&p, &size, mod, "nothing"), CUDA_ERROR_NOT_FOUND);
    struct entry es[MAX_ENTRIES];
    int ne = ptx_entries(kernels, es);
    TRUE(ne >= 10);
    CUmodule kmod = load(kernels);
    for (int i = 0; i < ne; i++) {
        CUfunction f;
        EXPECT(cuModuleGetFunction(&f, kmod, es[i].name), CUDA_SUCCESS);
    }
    OK(cuModuleUnload(kmod));
    OK(cuModuleUnload(mod70));
    EXPECT(cuModuleUnload(mod70), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuModuleGetFunction(&f70, mod70, "gf_count"), CUDA_ERROR_INVALID_HANDLE);

    /* Launch validation. */
    CUdeviceptr zero = dalloc(8);
    OK(cuMemsetD8(zero, 0, 8));
    uint64_t args[6] = {0, 0, 0, zero, 1, 0}; /* gf_count over nothing: nodes[0, *zero) */
    void *params[6];
    for (int i = 0; i < 6; i++) params[i] = &args[i];
    OK(cuLaunchKernel(fcount, 1, 1, 1, 32, 1, 1, 0, st, params, NULL));
    EXPECT(cuLaunchKernel(f70, 1, 1, 1, 32, 1, 1, 0, st, params, NULL), CUDA_ERROR_INVALID_HANDLE); /* unloaded */
    EXPECT(cuLaunchKernel(fcount, 0, 1, 1, 32, 1, 1, 0, st, params, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(fcount, 1, 1, 1, 0, 1, 1, 0, st, params, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(fcount, 1, 2, 1, 32, 1, 1, 0, st, params, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(fcount, 1, 1, 1, 32, 1, 2, 0, st, params, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(fcount, 1, 1, 1, 1025, 1, 1, 0, st, params, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuLaunchKernel(fcount, 1, 1, 1, 1024, 1, 1, 48 * 1024, st, params, NULL));
    EXPECT(cuLaunchKernel(fcount, 1, 1, 1, 32, 1, 1, 48 * 1024 + 1, st, params, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(fcount, 1, 1, 1, 32, 1, 1, 0, st, params, (void **)params), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(fcount, 1, 1, 1, 32, 1, 1, 0, st, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(fcount, 1, 1, 1, 32, 1, 1, 0, stA, params, NULL), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuLaunchKernel((CUfunction)(uintptr_t)0x40, 1, 1, 1, 32, 1, 1, 0, st, params, NULL), CUDA_ERROR_INVALID_HANDLE);
    OK(cuCtxPushCurrent(A));
    EXPECT(cuLaunchKernel(fcount, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_HANDLE); /* P's module */
    OK(cuCtxPopCurrent(NULL));
    long long launches0 = stats(0).kernel_launches;

    /* Kernels run: the scan and gf_count against the host. */
    scan(mod, 10007, 101, 64);
    scan(mod, 64, 64, 256);
    count(mod, 5000, 5);
    TRUE(last_writer(mod, k80, 4096) == 4095); /* the in-order schedule */
    TRUE(claims(mod, 3000) == 0);
    TRUE(stats(0).kernel_launches == launches0 + 3 + 3 + 1 + 1 + 1);
    OK(cuMemFree(zero));

    /* A pointer parameter outside the context's memory: the launch fails as
     * a faulting kernel would, and the context is unusable afterwards. */
    CUcontext C;
    CUmodule cmod;
    CUfunction cf;
    OK(cuCtxCreate(&C, 0, dev));
    cmod = load(k80);
    OK(cuModuleGetFunction(&cf, cmod, "gf_count"));
    uint64_t bad_args[6] = {(uint64_t)(uintptr_t)host, 0, 0, 1, 1, 0};
    for (int i = 0; i < 6; i++) params[i] = &bad_args[i];
    EXPECT(cuLaunchKernel(cf, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cuMemAlloc(&p, 8), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    OK(cuCtxDestroy(C)); /* pops it: P is current again */
    TRUE(current() == P);
    OK(cuCtxSynchronize());

    /* Destroying a context frees what it owns; its handle is dead. */
    gf_fakecuda_stats_t before = stats(0);
    OK(cuCtxDestroy(A));
    gf_fakecuda_stats_t after = stats(0);
    TRUE(after.live_contexts == before.live_contexts - 1);
    TRUE(after.live_allocs == before.live_allocs - 1 && after.live_streams == before.live_streams - 1 &&
         after.live_events == before.live_events - 1);
    EXPECT(cuCtxDestroy(A), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuCtxSetCurrent(A), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuCtxPushCurrent(A), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuCtxGetApiVersion(A, &api), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(cuStreamDestroy(stA), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuEventDestroy(eA), CUDA_ERROR_INVALID_HANDLE);

    /* A destroyed context still current: refused until replaced. */
    CUcontext D;
    OK(cuCtxCreate(&D, 0, dev));
    OK(cuCtxPushCurrent(P));
    OK(cuCtxDestroy(D)); /* not on top: stays on the stack below P */
    OK(cuCtxPopCurrent(NULL));
    TRUE(current() == D);
    EXPECT(cuMemAlloc(&p, 8), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    OK(cuCtxPopCurrent(&popped));
    TRUE(popped == D && current() == P);

    /* Releasing the primary context to zero destroys its resources, even
     * while it is current; the next retain starts afresh. */
    OK(cuStreamDestroy(st));
    EXPECT(cuStreamDestroy(st), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuStreamQuery(st), CUDA_ERROR_INVALID_HANDLE);
    OK(cuStreamCreate(&st, 0));
    TRUE(stats(0).live_allocs == 2 && stats(0).live_modules == 1 && stats(0).live_streams == 1 &&
         stats(0).live_events == 3);
    OK(cuDevicePrimaryCtxRelease(dev));
    TRUE(stats(0).primary_refcount == 1 && stats(0).live_allocs == 2);
    OK(cuDevicePrimaryCtxRelease(dev));
    gf_fakecuda_stats_t z = stats(0);
    TRUE(z.primary_refcount == 0 && z.live_allocs == 0 && z.live_alloc_bytes == 0 && z.live_modules == 0 &&
         z.live_streams == 0 && z.live_events == 0 && z.live_contexts == 0);
    EXPECT(cuDevicePrimaryCtxRelease(dev), CUDA_ERROR_INVALID_CONTEXT);
    OK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    TRUE(active == 0);
    TRUE(current() == P);
    EXPECT(cuMemAlloc(&p, 8), CUDA_ERROR_INVALID_CONTEXT);
    OK(cuDevicePrimaryCtxRetain(&P2, dev));
    TRUE(P2 == P && stats(0).primary_refcount == 1);
    OK(cuMemGetInfo(&fr, &tot));
    TRUE(fr == tot);
    EXPECT(cuMemFree(a), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuModuleGetFunction(&fcount, mod, "gf_count"), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuLaunchKernel(fcount, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuStreamSynchronize(st), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuEventRecord(e1, NULL), CUDA_ERROR_INVALID_HANDLE);
    p = dalloc(8);
    OK(cuMemFree(p));
    OK(cuDevicePrimaryCtxRelease(dev));
    OK(cuCtxSetCurrent(NULL));
    TRUE(current() == NULL);
    (void)b;
}

static void initerror(void) {
    int n;
    EXPECT(cuInit(0), CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
    EXPECT(cuInit(0), CUDA_ERROR_SYSTEM_DRIVER_MISMATCH); /* the failure is kept */
    EXPECT(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(cuDevicePrimaryCtxRetain(&(CUcontext){0}, 0), CUDA_ERROR_NOT_INITIALIZED);
    TRUE(gf_fakecuda_stats(0, &(gf_fakecuda_stats_t){0}) == -1);
}

static void nodevice(void) {
    int n;
    EXPECT(cuInit(0), CUDA_ERROR_NO_DEVICE); /* as the driver with no visible GPU */
    EXPECT(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(cuDeviceGet(&(CUdevice){0}, 0), CUDA_ERROR_NOT_INITIALIZED);
}

static void olddriver(char **ptx) {
    int v;
    CUcontext P;
    OK(cuInit(0));
    OK(cuDriverGetVersion(&v));
    TRUE(v == 12000);
    OK(cuDevicePrimaryCtxRetain(&P, 0));
    OK(cuCtxPushCurrent(P));
    CUmodule m;
    EXPECT(cuModuleLoadData(&m, ptx[0]), CUDA_ERROR_UNSUPPORTED_PTX_VERSION); /* ISA 8.1 needs 12010 */
    EXPECT(cuModuleLoadData(&m, ptx[1]), CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    OK(cuCtxPopCurrent(NULL));
    OK(cuDevicePrimaryCtxRelease(0));
}

static void multi(char **ptx) {
    int n;
    CUcontext P0, P1;
    CUmodule m;
    char name[64];
    OK(cuInit(0));
    OK(cuDeviceGetCount(&n));
    TRUE(n == 2);
    OK(cuDeviceGetName(name, sizeof name, 1));
    TRUE(strcmp(name, "graphferry fake GPU 1 (sm_90)") == 0);
    OK(cuDeviceGetName(name, 8, 1)); /* truncated */
    TRUE(strlen(name) == 7);
    OK(cuDevicePrimaryCtxRetain(&P0, 0));
    OK(cuDevicePrimaryCtxRetain(&P1, 1));
    TRUE(P0 != P1);
    OK(cuCtxPushCurrent(P0));
    EXPECT(cuModuleLoadData(&m, ptx[0]), CUDA_ERROR_NO_BINARY_FOR_GPU); /* sm_80 PTX on a 7.0 device */
    OK(cuModuleLoadData(&m, ptx[1]));
    CUdeviceptr p0 = dalloc(64);
    TRUE(stats(0).live_allocs == 1 && stats(1).live_allocs == 0);
    OK(cuCtxSetCurrent(P1));
    OK(cuModuleLoadData(&m, ptx[0]));
    EXPECT(cuMemsetD8(p0, 0, 64), CUDA_ERROR_INVALID_VALUE); /* device 0's memory */
    CUdevice d;
    OK(cuCtxGetDevice(&d));
    TRUE(d == 1);
    OK(cuCtxPopCurrent(NULL));
    OK(cuDevicePrimaryCtxRelease(0));
    OK(cuDevicePrimaryCtxRelease(1));
    TRUE(stats(0).live_allocs == 0 && stats(1).live_modules == 0);
    TRUE(gf_fakecuda_stats(2, &(gf_fakecuda_stats_t){0}) == -1);
}

static void oom(void) {
    CUcontext P;
    CUdeviceptr a, b, c;
    size_t fr, tot;
    OK(cuInit(0));
    OK(cuDevicePrimaryCtxRetain(&P, 0));
    OK(cuCtxPushCurrent(P));
    OK(cuMemGetInfo(&fr, &tot));
    TRUE(tot == 1 << 20 && fr == tot);
    OK(cuMemAlloc(&a, 600 << 10));
    EXPECT(cuMemAlloc(&b, 500 << 10), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemAlloc(&b, 424 << 10)); /* exactly the rest */
    EXPECT(cuMemAlloc(&c, 1), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT(cuMemAlloc(&c, (size_t)-1), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemFree(a));
    OK(cuMemAlloc(&c, 1));
    TRUE(stats(0).live_alloc_bytes == (424 << 10) + 256);
    OK(cuCtxPopCurrent(NULL));
    OK(cuDevicePrimaryCtxRelease(0));
    TRUE(stats(0).live_alloc_bytes == 0);
}

static void concurrent(char **ptx) {
    CUcontext P;
    OK(cuInit(0));
    OK(cuDevicePrimaryCtxRetain(&P, 0));
    OK(cuCtxPushCurrent(P));
    CUmodule mod = load(ptx[0]);
    /* Correct kernels give the same results on any schedule. */
    scan(mod, 100003, 317, 32);
    scan(mod, 5000, 64, 1);
    count(mod, 20000, 7);
    for (int i = 0; i < 4; i++) TRUE(claims(mod, 20000) == 0);
    /* An order-dependent kernel does not: the last writer is rarely n-1. */
    int differs = 0;
    for (int i = 0; i < 8; i++) differs += last_writer(mod, ptx[0], 4096) != 4095;
    TRUE(differs > 0);
    OK(cuCtxPopCurrent(NULL));
    OK(cuDevicePrimaryCtxRelease(0));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_fakecuda MODE [PTX...]\n");
        return 2;
    }
    const char *mode = argv[1];
    char *ptx[5] = {0};
    for (int i = 2; i < argc && i < 7; i++) ptx[i - 2] = read_file(argv[i]);
    int need = strcmp(mode, "basic") == 0 ? 5
               : strcmp(mode, "olddriver") == 0 || strcmp(mode, "multi") == 0 ? 2
               : strcmp(mode, "concurrent") == 0 ? 1
                                                 : 0;
    if (argc - 2 < need) {
        fprintf(stderr, "test_fakecuda %s: needs %d PTX files\n", mode, need);
        return 2;
    }
    if (strcmp(mode, "basic") == 0) {
        basic(ptx);
    } else if (strcmp(mode, "initerror") == 0) {
        initerror();
    } else if (strcmp(mode, "nodevice") == 0) {
        nodevice();
    } else if (strcmp(mode, "olddriver") == 0) {
        olddriver(ptx);
    } else if (strcmp(mode, "multi") == 0) {
        multi(ptx);
    } else if (strcmp(mode, "oom") == 0) {
        oom();
    } else if (strcmp(mode, "concurrent") == 0) {
        concurrent(ptx);
    } else {
        fprintf(stderr, "test_fakecuda: unknown mode %s\n", mode);
        return 2;
    }
    for (int i = 0; i < 5; i++) free(ptx[i]);
    printf("test_fakecuda %s: %s\n", mode, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
