// A fake CUDA driver: the subset of the CUDA driver API (libcuda.so.1) that
// graphferry's GPU backend uses (cuda/gpu.go over gorgonia.org/cu),
// implemented on the host, so that the real GPU code runs on a machine
// without a GPU in tests. "Device" memory is host memory; kernels are the
// kernels of cuda/kernels compiled as host C++ (cuda/emu/kernels.h), looked
// up by the .entry names of the PTX a module is loaded from.
//
// It is a strict test double: it refuses what the driver refuses (no
// current context, handles of another or a destroyed context, device ranges
// outside the current context's allocations, bad launch configurations, PTX
// too new for the configured driver or targeting a newer GPU), so that the
// caller's discipline is checked here. Never shipped. See README.md.
//
// Configuration, read at cuInit from the environment: GF_FAKECUDA_DRIVER,
// GF_FAKECUDA_DEVICES, GF_FAKECUDA_CC, GF_FAKECUDA_INIT_ERROR,
// GF_FAKECUDA_MEM, GF_FAKECUDA_THREADS, GF_FAKECUDA_SEED,
// GF_FAKECUDA_VERBOSE (failures to stderr).
//
// Every entry point takes one mutex over all driver state. Streams are
// asynchronous as on a GPU: each stream (a created one, a context's legacy
// NULL stream, a thread's per-thread stream) has a host thread of its own
// that runs its work in order after a delay (GF_FAKECUDA_DELAY_US, or
// gf_fakecuda_set_delay_us), outside the mutex: copies land, kernels run
// and events complete late, in stream order, so that reading before
// waiting shows stale bytes. Handles (contexts, modules, functions, streams, events) are
// objects that are never freed once created: a destroyed one stays known as
// destroyed, so a stale handle is refused and never reused.
#include <cuda.h>

#include "fakecuda.h"

// The kernels and their host launcher (defines the thread indices).
#include "../emu/kernels.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

// cuda.h maps cuGetProcAddress to cuGetProcAddress_v2; the fake also
// defines the original (CUDA 11.3) symbol.
#undef cuGetProcAddress
extern "C" CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

namespace {

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

struct ErrorText {
    CUresult code;
    const char *name, *text;
};

#define E(code, text) {code, #code, text}
const ErrorText kErrors[] = {
    E(CUDA_SUCCESS, "no error"),
    E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    E(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    E(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
    E(CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable"),
    E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    E(CUDA_ERROR_DEVICE_NOT_LICENSED, "device doesn't have valid Grid license"),
    E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    E(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
    E(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
    E(CUDA_ERROR_UNSUPPORTED_LIMIT, "limit is not supported on this architecture"),
    E(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
    E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain."),
    E(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler library not found"),
    E(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
    E(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    E(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS"),
    E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    E(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"),
    E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    E(CUDA_ERROR_NOT_READY, "device not ready"),
    E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
    E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    E(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "primary context active"),
    E(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
    E(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped"),
    E(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region"),
    E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
    E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    E(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"),
    E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display driver / cuda driver combination"),
    E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "forward compatibility was attempted on non supported HW"),
    E(CUDA_ERROR_UNKNOWN, "unknown error"),
};
#undef E

const ErrorText *errorText(CUresult code) {
    for (const auto &e : kErrors) {
        if (e.code == code) return &e;
    }
    return nullptr;
}

bool verbose = false;
thread_local std::string lastReason;

// fail records why the calling thread's call failed and returns code.
CUresult fail(CUresult code, const char *fn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
CUresult fail(CUresult code, const char *fn, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const ErrorText *e = errorText(code);
    lastReason = std::string(fn) + ": " + (e ? e->name : "CUresult " + std::to_string((int)code)) + ": " + buf;
    if (verbose) std::fprintf(stderr, "fakecuda: %s\n", lastReason.c_str());
    return code;
}
#define FAIL(code, ...) fail(code, __func__, __VA_ARGS__)

// ---------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------

constexpr size_t kAlign = 256;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxSharedPerBlock = 48 * 1024;
constexpr int kMultiprocessors = 8;
constexpr int kLeastPriority = 0, kGreatestPriority = -5;
constexpr unsigned char kFill = 0xA5;  // fresh device memory is not zero

struct Worker;

struct Ctx {
    int dev;
    bool primary;
    bool alive;  // the primary: active (retained); others: not destroyed
    unsigned flags;
    CUresult sticky;  // a "kernel fault" poisons the context, as on a GPU
    Worker *legacy = nullptr;  // the NULL (legacy default) stream's worker
};

// gf_fakecuda_fail: after inject.skip more calls of inject.fn, inject.n
// calls fail with inject.code.
struct {
    std::string fn;
    int skip = 0, n = 0;
    CUresult code = CUDA_SUCCESS;
} inject;

// Delay before each queued operation runs (microseconds).
std::atomic<long long> delayUs{0};

// Worker runs one stream's work in order on a host thread of its own.
// Never destroyed (a stream destroyed finishes its queue and its thread
// ends); every worker is listed in `workers` for synchronisation.
struct Worker {
    Ctx *ctx;
    std::mutex m;
    std::condition_variable cv;  // work queued, or the queue drained
    std::deque<std::function<void()>> q;
    bool busy = false, stop = false;
    int holds = 0;  // gf_fakecuda_hold: no operation starts while > 0

    explicit Worker(Ctx *c) : ctx(c) {
        std::thread([this] { loop(); }).detach();
    }
    void loop() {
        std::unique_lock<std::mutex> l(m);
        for (;;) {
            cv.wait(l, [this] { return (!q.empty() && holds == 0) || (stop && q.empty()); });
            if (q.empty()) return;  // stopped and drained
            auto fn = std::move(q.front());
            q.pop_front();
            busy = true;
            l.unlock();
            if (long long us = delayUs.load()) std::this_thread::sleep_for(std::chrono::microseconds(us));
            fn();
            l.lock();
            busy = false;
            cv.notify_all();
        }
    }
    void push(std::function<void()> fn) {
        std::lock_guard<std::mutex> l(m);
        q.push_back(std::move(fn));
        cv.notify_all();
    }
    void drain() {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [this] { return q.empty() && !busy; });
    }
    bool idle() {
        std::lock_guard<std::mutex> l(m);
        return q.empty() && !busy;
    }
    void finish() {  // run what is queued, then end the thread
        std::lock_guard<std::mutex> l(m);
        stop = true;
        cv.notify_all();
    }
};

struct Device {
    int major = 8, minor = 0;
    Ctx *primary = nullptr;
    long refcount = 0;
    unsigned primaryFlags = 0;
    size_t used = 0;  // device memory allocated, rounded to kAlign
    long long launches = 0, loads = 0;
};

// A range of memory the device may touch.
struct Range {
    enum Kind { DEVICE, PINNED, REGISTERED } kind;
    size_t size;     // requested bytes
    size_t charged;  // DEVICE: bytes counted against the device
    Ctx *ctx;        // DEVICE: the owning context
};

struct Entry {
    int nargs;        // .param count
    bool all8;        // every parameter is 8 bytes
};

struct Module;
struct Function {
    Module *mod;
    const gf_emu::Kernel *kernel;
    std::string name;
};

struct Module {
    Ctx *ctx;
    bool alive;
    int ptxVersion;  // major*10 + minor
    int target;      // sm_XY: XY
    std::map<std::string, Entry> entries;
    std::map<std::string, Function *> funcs;
};

struct Stream {
    Ctx *ctx;
    bool alive;
    unsigned flags;
    int priority;
    Worker *w;
};

// An event completes when the stream it was recorded on reaches the
// record: recorded counts the records queued, done those that completed
// (both under evMu).
struct Event {
    Ctx *ctx;
    bool alive;
    unsigned flags;
    unsigned long long recorded, done;
    double ms;  // host time when the last record completed
};
std::mutex evMu;
std::condition_variable evCv;

struct Config {
    int driver = 12040;
    int devices = 1;
    std::vector<std::pair<int, int>> cc;  // per device (the last repeats)
    CUresult initError = CUDA_SUCCESS;
    size_t mem = size_t(1) << 30;
    unsigned threads = 1;
    unsigned long long seed = 0;
    long long delayUs = 0;
};

// The state lives on the heap and is never destroyed: a thread may call the
// driver while the process exits and runs static destructors (Go's threads
// do), and handles stay reachable for leak checkers.
template <typename T>
T &forever() {
    return *new T();
}

std::mutex mu;
enum { NOT_CALLED, INIT_OK, INIT_FAILED } initState = NOT_CALLED;
CUresult initResult = CUDA_SUCCESS;
Config &cfg = forever<Config>();
std::vector<Device> &devices = forever<std::vector<Device>>();
std::map<uintptr_t, Range> &ranges = forever<std::map<uintptr_t, Range>>();  // by start address
int64_t hostRegistrations = 0;  // successful cuMemHostRegister calls since cuInit (gf_fakecuda_registrations)
// Every handle ever made (never freed: see the file comment).
using Handles = std::unordered_set<const void *>;
Handles &ctxs = forever<Handles>(), &modules = forever<Handles>(), &functions = forever<Handles>(),
        &streams = forever<Handles>(), &events = forever<Handles>();

thread_local std::vector<Ctx *> ctxStack;
// Every stream worker, and this thread's per-thread streams by context.
std::vector<Worker *> &workers = forever<std::vector<Worker *>>();
thread_local std::map<Ctx *, Worker *> perThread;

double nowMs() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

bool parseU64(const char *s, unsigned long long *out, bool suffixes) {
    if (!s || !*s) return false;
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 0);
    if (errno || end == s || *s == '-') return false;
    unsigned long long mul = 1;
    if (suffixes && *end) {
        switch (*end) {
        case 'k': case 'K': mul = 1ULL << 10; break;
        case 'm': case 'M': mul = 1ULL << 20; break;
        case 'g': case 'G': mul = 1ULL << 30; break;
        default: return false;
        }
        end++;
    }
    if (*end) return false;
    if (v > ~0ULL / mul) return false;
    *out = v * mul;
    return true;
}

// configError reports a malformed variable (always on stderr: a test's
// configuration must not be silently ignored).
CUresult configError(const char *var, const char *val) {
    std::fprintf(stderr, "fakecuda: cuInit: malformed %s=%s\n", var, val);
    return fail(CUDA_ERROR_INVALID_VALUE, "cuInit", "malformed %s=%s", var, val);
}

int driverFromEnv() {
    unsigned long long v;
    const char *s = std::getenv("GF_FAKECUDA_DRIVER");
    return s && parseU64(s, &v, false) && v <= 1000000 ? (int)v : 12040;
}

CUresult readConfig(Config *c) {
    const char *s;
    unsigned long long v;
    verbose = (s = std::getenv("GF_FAKECUDA_VERBOSE")) && *s && std::strcmp(s, "0") != 0;
    if ((s = std::getenv("GF_FAKECUDA_DRIVER"))) {
        if (!parseU64(s, &v, false) || v > 1000000) return configError("GF_FAKECUDA_DRIVER", s);
        c->driver = (int)v;
    }
    if ((s = std::getenv("GF_FAKECUDA_DEVICES"))) {
        if (!parseU64(s, &v, false) || v > 64) return configError("GF_FAKECUDA_DEVICES", s);
        c->devices = (int)v;
    }
    c->cc.clear();
    std::string ccs = (s = std::getenv("GF_FAKECUDA_CC")) ? s : "8.0";
    for (size_t pos = 0; pos <= ccs.size();) {
        size_t comma = ccs.find(',', pos);
        if (comma == std::string::npos) comma = ccs.size();
        std::string one = ccs.substr(pos, comma - pos);
        int major = 0, minor = 0, n = 0;
        if (std::sscanf(one.c_str(), "%d.%d%n", &major, &minor, &n) != 2 || n != (int)one.size() || major < 1 ||
            major > 20 || minor < 0 || minor > 9) {
            return configError("GF_FAKECUDA_CC", ccs.c_str());
        }
        c->cc.emplace_back(major, minor);
        pos = comma + 1;
    }
    if ((s = std::getenv("GF_FAKECUDA_INIT_ERROR"))) {
        bool ok = false;
        for (const auto &e : kErrors) {
            if (std::strcmp(s, e.name) == 0) {
                c->initError = e.code;
                ok = true;
            }
        }
        if (!ok) {
            if (!parseU64(s, &v, false) || v > 100000) return configError("GF_FAKECUDA_INIT_ERROR", s);
            c->initError = (CUresult)v;
        }
    }
    if ((s = std::getenv("GF_FAKECUDA_MEM"))) {
        if (!parseU64(s, &v, true)) return configError("GF_FAKECUDA_MEM", s);
        c->mem = (size_t)v;
    }
    if ((s = std::getenv("GF_FAKECUDA_THREADS"))) {
        if (!parseU64(s, &v, false) || v > 1024) return configError("GF_FAKECUDA_THREADS", s);
        c->threads = v == 0 ? 1 : (unsigned)v;
    }
    if ((s = std::getenv("GF_FAKECUDA_SEED"))) {
        if (!parseU64(s, &v, false)) return configError("GF_FAKECUDA_SEED", s);
        c->seed = v;
    }
    if ((s = std::getenv("GF_FAKECUDA_DELAY_US"))) {
        if (!parseU64(s, &v, false) || v > 10000000) return configError("GF_FAKECUDA_DELAY_US", s);
        c->delayUs = (long long)v;
    }
    return CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------
// Checks shared by the entry points (mu held)
// ---------------------------------------------------------------------------

#define LOCK std::lock_guard<std::mutex> lock_(mu)
#define TRY(x)                              \
    do {                                    \
        CUresult r_ = (x);                  \
        if (r_ != CUDA_SUCCESS) return r_;  \
    } while (0)

CUresult initialized(const char *fn) {
    if (initState != INIT_OK) return fail(CUDA_ERROR_NOT_INITIALIZED, fn, "cuInit(0) has not succeeded");
    if (inject.n > 0 && (inject.fn == fn || inject.fn + "_v2" == fn)) {
        if (inject.skip > 0) {
            inject.skip--;
        } else {
            inject.n--;
            return fail(inject.code, fn, "gf_fakecuda_fail asked for this failure");
        }
    }
    return CUDA_SUCCESS;
}

CUresult device(const char *fn, CUdevice dev) {
    TRY(initialized(fn));
    if (dev < 0 || dev >= (int)devices.size()) {
        return fail(CUDA_ERROR_INVALID_DEVICE, fn, "device %d does not exist (%zu devices)", dev, devices.size());
    }
    return CUDA_SUCCESS;
}

// known reports whether handle h was made by this driver as a context.
Ctx *asCtx(CUcontext h) { return ctxs.count(h) ? reinterpret_cast<Ctx *>(h) : nullptr; }

// current: the calling thread's current context, usable.
CUresult current(const char *fn, Ctx **out) {
    TRY(initialized(fn));
    if (ctxStack.empty()) return fail(CUDA_ERROR_INVALID_CONTEXT, fn, "no context is current on this thread");
    Ctx *c = ctxStack.back();
    if (!c->alive) {
        if (c->primary) {
            return fail(CUDA_ERROR_INVALID_CONTEXT, fn,
                        "the current context is device %d's primary context, released (refcount 0)", c->dev);
        }
        return fail(CUDA_ERROR_CONTEXT_IS_DESTROYED, fn, "the current context was destroyed");
    }
    if (c->sticky != CUDA_SUCCESS) {
        return fail(c->sticky, fn, "the context is unusable after an earlier error (%s)", errorText(c->sticky)->name);
    }
    *out = c;
    return CUDA_SUCCESS;
}

// findRange: the range holding address p (or ending at p when end is true).
Range *findRange(uintptr_t p, uintptr_t *base, bool end = false) {
    auto it = ranges.upper_bound(p);
    if (it == ranges.begin()) return nullptr;
    --it;
    if (p - it->first < it->second.size || (end && p - it->first == it->second.size)) {
        *base = it->first;
        return &it->second;
    }
    return nullptr;
}

const char *kindName(Range::Kind k) {
    return k == Range::DEVICE ? "device allocation" : k == Range::PINNED ? "pinned host allocation" : "registered host range";
}

// deviceRange checks that [p, p+n) lies in one range the current context c
// may access: one of its allocations, or pinned or registered host memory.
CUresult deviceRange(const char *fn, Ctx *c, CUdeviceptr p, size_t n, const char *what) {
    uintptr_t base;
    Range *r = findRange((uintptr_t)p, &base);
    if (!r) {
        return fail(CUDA_ERROR_INVALID_VALUE, fn, "%s 0x%llx is not in any live device allocation", what,
                    (unsigned long long)p);
    }
    if (r->kind == Range::DEVICE && r->ctx != c) {
        return fail(CUDA_ERROR_INVALID_VALUE, fn, "%s 0x%llx is in an allocation of another context", what,
                    (unsigned long long)p);
    }
    if (n > r->size - ((uintptr_t)p - base)) {
        return fail(CUDA_ERROR_INVALID_VALUE, fn,
                    "%s [0x%llx, +%zu) runs past the end of its %s [0x%llx, +%zu)", what, (unsigned long long)p, n,
                    kindName(r->kind), (unsigned long long)base, r->size);
    }
    return CUDA_SUCCESS;
}

// isDevice: does a unified-address pointer fall in a range the driver knows
// (then it is checked as device memory), or is it plain host memory?
bool isDevice(CUdeviceptr p) {
    uintptr_t base;
    return findRange((uintptr_t)p, &base) != nullptr;
}

CUresult stream(const char *fn, Ctx *c, CUstream s) {
    if (s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return CUDA_SUCCESS;
    if (!streams.count(s)) return fail(CUDA_ERROR_INVALID_HANDLE, fn, "%p is not a stream", (void *)s);
    Stream *st = reinterpret_cast<Stream *>(s);
    if (!st->alive) return fail(CUDA_ERROR_INVALID_HANDLE, fn, "stream %p was destroyed", (void *)s);
    if (st->ctx != c) {
        return fail(CUDA_ERROR_INVALID_HANDLE, fn, "stream %p belongs to another context than the current one",
                    (void *)s);
    }
    return CUDA_SUCCESS;
}

Worker *newWorker(Ctx *c) {
    auto *w = new Worker(c);
    workers.push_back(w);
    return w;
}

// workerOf: the worker of stream s (checked) of context c: a created
// stream's, the context's legacy NULL stream's, this thread's per-thread
// stream's.
Worker *workerOf(Ctx *c, CUstream s) {
    if (s == nullptr || s == CU_STREAM_LEGACY) {
        if (!c->legacy) c->legacy = newWorker(c);
        return c->legacy;
    }
    if (s == CU_STREAM_PER_THREAD) {
        Worker *&w = perThread[c];
        if (!w) w = newWorker(c);
        return w;
    }
    return reinterpret_cast<Stream *>(s)->w;
}

// quiesce waits until every stream has run what was queued (mu held; the
// workers never take mu): before memory is freed, as cuMemFree and
// cuMemFreeHost synchronise on a GPU. c: that context's streams only
// (nullptr: all).
void quiesce(Ctx *c) {
    for (Worker *w : workers) {
        if (!c || w->ctx == c) w->drain();
    }
}

CUresult event(const char *fn, CUevent e, Event **out) {
    if (!events.count(e)) return fail(CUDA_ERROR_INVALID_HANDLE, fn, "%p is not an event", (void *)e);
    Event *ev = reinterpret_cast<Event *>(e);
    if (!ev->alive) return fail(CUDA_ERROR_INVALID_HANDLE, fn, "event %p was destroyed", (void *)e);
    *out = ev;
    return CUDA_SUCCESS;
}

// destroyResources frees what context c owns (its allocations, modules,
// streams, events): at cuCtxDestroy, and when a primary context's last
// reference is released.
void destroyResources(Ctx *c) {
    quiesce(c);
    Device &d = devices[c->dev];
    for (auto it = ranges.begin(); it != ranges.end();) {
        if (it->second.kind == Range::DEVICE && it->second.ctx == c) {
            d.used -= it->second.charged;
            std::free(reinterpret_cast<void *>(it->first));
            it = ranges.erase(it);
        } else {
            ++it;
        }
    }
    for (const void *h : modules) {
        auto *m = const_cast<Module *>(static_cast<const Module *>(h));
        if (m->ctx == c) m->alive = false;
    }
    for (const void *h : streams) {
        auto *s = const_cast<Stream *>(static_cast<const Stream *>(h));
        if (s->ctx == c && s->alive) {
            s->alive = false;
            s->w->finish();
        }
    }
    for (const void *h : events) {
        auto *e = const_cast<Event *>(static_cast<const Event *>(h));
        if (e->ctx == c) e->alive = false;
    }
    c->sticky = CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------
// PTX
// ---------------------------------------------------------------------------

// The first driver (cuDriverGetVersion) that loads each PTX ISA version,
// from the PTX ISA release history (ISA X.Y ships with CUDA below).
struct IsaDriver {
    int isa, driver;
};
const IsaDriver kIsaDrivers[] = {
    {70, 11000}, {71, 11010}, {72, 11020}, {73, 11030}, {74, 11040}, {75, 11050}, {76, 11060},
    {77, 11070}, {78, 11080}, {80, 12000}, {81, 12010}, {82, 12020}, {83, 12030}, {84, 12040},
    {85, 12050}, {86, 12070}, {87, 12080}, {88, 12090}, {90, 13000}, {91, 13010},
};

// minDriver: the oldest driver loading PTX ISA `isa` (major*10+minor), or
// -1 when the version is unknown (newer than this table).
int minDriver(int isa) {
    if (isa < 70) return 10000;  // CUDA 10 and earlier; every driver the fake models loads it
    for (const auto &e : kIsaDrivers) {
        if (e.isa == isa) return e.driver;
    }
    return -1;
}

struct Ptx {
    int version = -1;  // major*10+minor
    int target = -1;   // sm_XY
    char suffix = 0;   // 'a' (arch-specific) or 'f' (family) or 0
    std::map<std::string, Entry> entries;
};

// tokens splits PTX text into words ([A-Za-z0-9_.$%]+) and single
// punctuation characters, dropping comments.
std::vector<std::string> tokens(const char *s) {
    std::vector<std::string> out;
    auto word = [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
               ch == '.' || ch == '$' || ch == '%';
    };
    for (const char *p = s; *p;) {
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = std::strstr(p + 2, "*/");
            p = e ? e + 2 : p + std::strlen(p);
        } else if (word(*p)) {
            const char *b = p;
            while (*p && word(*p)) p++;
            out.emplace_back(b, p);
        } else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            p++;
        } else {
            out.emplace_back(p, p + 1);
            p++;
        }
    }
    return out;
}

// parsePtx reads .version, .target and the .entry names with their
// parameter counts. Not PTX at all: CUDA_ERROR_INVALID_IMAGE; PTX the
// parser cannot read: CUDA_ERROR_INVALID_PTX.
CUresult parsePtx(const char *fn, const char *image, Ptx *out) {
    const unsigned char *u = reinterpret_cast<const unsigned char *>(image);
    if (u[0] == 0x7f && u[1] == 'E' && u[2] == 'L' && u[3] == 'F') {
        return fail(CUDA_ERROR_INVALID_IMAGE, fn, "a cubin (ELF) image: the fake driver runs PTX text only");
    }
    if (u[0] == 0x50 && u[1] == 0xed && u[2] == 0x55 && u[3] == 0xba) {
        return fail(CUDA_ERROR_INVALID_IMAGE, fn, "a fatbin image: the fake driver runs PTX text only");
    }
    for (const unsigned char *p = u; *p; p++) {
        if (*p >= 0x80 || (*p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r')) {
            return fail(CUDA_ERROR_INVALID_IMAGE, fn, "not PTX text (byte 0x%02x at offset %td)", *p, p - u);
        }
    }
    std::vector<std::string> t = tokens(image);
    size_t i = 0;
    if (t.empty() || t[0] != ".version") {
        return fail(CUDA_ERROR_INVALID_IMAGE, fn, "not PTX: the text does not begin with a .version directive");
    }
    int major = 0, minor = 0, n = 0;
    if (t.size() < 2 || std::sscanf(t[1].c_str(), "%d.%d%n", &major, &minor, &n) != 2 || n != (int)t[1].size() ||
        minor > 9 || major < 1) {
        return fail(CUDA_ERROR_INVALID_PTX, fn, "malformed .version %s", t.size() < 2 ? "" : t[1].c_str());
    }
    out->version = major * 10 + minor;
    for (i = 2; i < t.size(); i++) {
        if (t[i] == ".target") {
            for (size_t j = i + 1; j < t.size() && (j == i + 1 || t[j - 1] == ","); j += 2) {
                const std::string &w = t[j];
                if (w.compare(0, 3, "sm_") == 0) {
                    int xy = 0, m = 0;
                    if (std::sscanf(w.c_str() + 3, "%d%n", &xy, &m) != 1 || xy < 10) {
                        return fail(CUDA_ERROR_INVALID_PTX, fn, "malformed .target %s", w.c_str());
                    }
                    std::string rest = w.substr(3 + m);
                    if (rest == "a" || rest == "f") {
                        out->suffix = rest[0];
                    } else if (!rest.empty()) {
                        return fail(CUDA_ERROR_INVALID_PTX, fn, "malformed .target %s", w.c_str());
                    }
                    out->target = xy;
                }
            }
        } else if (t[i] == ".entry") {
            if (i + 1 >= t.size()) return fail(CUDA_ERROR_INVALID_PTX, fn, ".entry without a name");
            std::string name = t[++i];
            Entry e{0, true};
            if (i + 1 < t.size() && t[i + 1] == "(") {
                i += 2;
                bool open = false, eight = false;  // inside a .param, of an 8-byte type
                for (; i < t.size() && t[i] != ")"; i++) {
                    if (t[i] == ".param") {
                        if (open && !eight) e.all8 = false;
                        e.nargs++;
                        open = true;
                        eight = false;
                    } else if (t[i] == ".u64" || t[i] == ".s64" || t[i] == ".b64" || t[i] == ".f64") {
                        eight = true;
                    }
                }
                if (open && !eight) e.all8 = false;
                if (i >= t.size()) return fail(CUDA_ERROR_INVALID_PTX, fn, ".entry %s: unclosed parameter list", name.c_str());
            }
            out->entries[name] = e;
        }
    }
    if (out->target < 0) return fail(CUDA_ERROR_INVALID_PTX, fn, "no .target sm_XY directive");
    return CUDA_SUCCESS;
}

// loadModule: the common part of cuModuleLoad, LoadData and LoadDataEx.
CUresult loadModule(const char *fn, CUmodule *module, const void *image) {
    Ctx *c;
    TRY(current(fn, &c));
    if (!module || !image) return fail(CUDA_ERROR_INVALID_VALUE, fn, "NULL %s", module ? "image" : "module");
    Ptx ptx;
    TRY(parsePtx(fn, static_cast<const char *>(image), &ptx));
    int need = minDriver(ptx.version);
    if (need < 0 || need > cfg.driver) {
        return fail(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, fn,
                    "PTX ISA %d.%d needs a driver of at least %d; this driver is %d", ptx.version / 10,
                    ptx.version % 10, need, cfg.driver);
    }
    const Device &d = devices[c->dev];
    int cc = d.major * 10 + d.minor;
    bool ok = ptx.suffix == 'a'   ? cc == ptx.target
              : ptx.suffix == 'f' ? d.major == ptx.target / 10 && cc >= ptx.target
                                  : cc >= ptx.target;
    if (!ok) {
        return fail(CUDA_ERROR_NO_BINARY_FOR_GPU, fn, "PTX for sm_%d%s cannot run on device %d of compute capability %d.%d",
                    ptx.target, ptx.suffix ? std::string(1, ptx.suffix).c_str() : "", c->dev, d.major, d.minor);
    }
    auto *m = new Module{c, true, ptx.version, ptx.target, std::move(ptx.entries), {}};
    modules.insert(m);
    devices[c->dev].loads++;
    *module = reinterpret_cast<CUmodule>(m);
    return CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------
// Memory helpers
// ---------------------------------------------------------------------------


// pinned: is [p, p+n) page-locked host memory (pinned or registered)? The
// copies to and from it are asynchronous; those from pageable memory are
// staged at the call, those to it are waited for (as on a GPU).
bool pinned(uintptr_t p, size_t n) {
    uintptr_t base;
    Range *r = findRange(p, &base);
    return r && r->kind != Range::DEVICE && n <= r->size - (p - base);
}

// queue runs fn on stream s of context c (async), or on the legacy stream
// and waits for it (a synchronous call). The lock is given up while
// waiting: the caller holds it through `lock`.
void queue(std::unique_lock<std::mutex> &lock, Ctx *c, CUstream s, bool async, bool wait, std::function<void()> fn) {
    Worker *w = workerOf(c, async ? s : nullptr);
    w->push(std::move(fn));
    if (!async || wait) {
        lock.unlock();
        w->drain();
    }
}

template <typename T>
CUresult memsetN(const char *fn, CUdeviceptr dst, T value, size_t n, CUstream s, bool async) {
    std::unique_lock<std::mutex> lock(mu);
    Ctx *c;
    TRY(current(fn, &c));
    if (async) TRY(stream(fn, c, s));
    if (dst % sizeof(T)) {
        return fail(CUDA_ERROR_INVALID_VALUE, fn, "0x%llx is not aligned to %zu bytes", (unsigned long long)dst,
                    sizeof(T));
    }
    if (n == 0) return CUDA_SUCCESS;
    if (n > ~size_t(0) / sizeof(T)) return fail(CUDA_ERROR_INVALID_VALUE, fn, "count %zu overflows", n);
    TRY(deviceRange(fn, c, dst, n * sizeof(T), "destination"));
    T *p = reinterpret_cast<T *>(dst);
    queue(lock, c, s, async, false, [p, value, n] {
        if (sizeof(T) == 1) {
            std::memset(p, (int)value, n);
        } else {
            std::fill(p, p + n, value);
        }
    });
    return CUDA_SUCCESS;
}

// memcpyChecked: copies where each side is host (taken as given) or device
// (range-checked); for the unified cuMemcpy, kind is decided by address.
// Asynchronous copies run on the stream's thread: from pageable host
// memory the source is staged now, to pageable host memory the call waits.
enum Side { HOST, DEV, UNIFIED };
CUresult memcpyChecked(const char *fn, uintptr_t dst, Side ds, uintptr_t src, Side ss, size_t n, CUstream s, bool async) {
    std::unique_lock<std::mutex> lock(mu);
    Ctx *c;
    TRY(current(fn, &c));
    if (async) TRY(stream(fn, c, s));
    if (n == 0) return CUDA_SUCCESS;
    if (ds == UNIFIED) ds = isDevice(dst) ? DEV : HOST;
    if (ss == UNIFIED) ss = isDevice(src) ? DEV : HOST;
    if (ds == DEV) TRY(deviceRange(fn, c, dst, n, "destination"));
    if (ss == DEV) TRY(deviceRange(fn, c, src, n, "source"));
    if (ds == HOST && !dst) return fail(CUDA_ERROR_INVALID_VALUE, fn, "NULL host destination");
    if (ss == HOST && !src) return fail(CUDA_ERROR_INVALID_VALUE, fn, "NULL host source");
    if (ss == HOST && !pinned(src, n)) {
        auto staged = std::make_shared<std::vector<unsigned char>>(reinterpret_cast<const unsigned char *>(src),
                                                                   reinterpret_cast<const unsigned char *>(src) + n);
        queue(lock, c, s, async, ds == HOST && !pinned(dst, n),
              [dst, staged] { std::memcpy(reinterpret_cast<void *>(dst), staged->data(), staged->size()); });
        return CUDA_SUCCESS;
    }
    queue(lock, c, s, async, ds == HOST && !pinned(dst, n),
          [dst, src, n] { std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src), n); });
    return CUDA_SUCCESS;
}

CUresult hostRange(const char *fn, void **pp, size_t n, unsigned flags, unsigned allowed) {
    LOCK;
    Ctx *c;
    TRY(current(fn, &c));
    if (!pp) return fail(CUDA_ERROR_INVALID_VALUE, fn, "NULL pp");
    if (n == 0) return fail(CUDA_ERROR_INVALID_VALUE, fn, "0 bytes");
    if (flags & ~allowed) return fail(CUDA_ERROR_INVALID_VALUE, fn, "unknown flags 0x%x", flags);
    size_t rounded = (n + kAlign - 1) / kAlign * kAlign;
    if (rounded < n) return fail(CUDA_ERROR_OUT_OF_MEMORY, fn, "%zu bytes", n);
    void *p = std::aligned_alloc(kAlign, rounded);
    if (!p) return fail(CUDA_ERROR_OUT_OF_MEMORY, fn, "host allocation of %zu bytes failed", n);
    ranges[(uintptr_t)p] = Range{Range::PINNED, n, 0, nullptr};
    *pp = p;
    return CUDA_SUCCESS;
}

// ---------------------------------------------------------------------------
// Launch
// ---------------------------------------------------------------------------

// pointerArg checks a kernel's pointer parameter: NULL, or an address in
// (or one past the end of) memory the context may access. A kernel given
// anything else would fault on the GPU; here it would crash the process.
CUresult pointerArg(const char *fn, Ctx *c, const Function *f, size_t i, unsigned long long v) {
    if (v == 0) return CUDA_SUCCESS;
    uintptr_t base;
    Range *r = findRange((uintptr_t)v, &base, true);
    if (!r || (r->kind == Range::DEVICE && r->ctx != c)) {
        c->sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
        return fail(CUDA_ERROR_ILLEGAL_ADDRESS, fn,
                    "%s: pointer parameter %zu = 0x%llx is not in memory of the current context "
                    "(the context is now unusable, as after a fault on a GPU)",
                    f->name.c_str(), i, v);
    }
    return CUDA_SUCCESS;
}

}  // namespace

// ===========================================================================
// The driver API
// ===========================================================================

extern "C" {

CUresult CUDAAPI cuInit(unsigned int Flags) {
    LOCK;
    if (Flags != 0) return FAIL(CUDA_ERROR_INVALID_VALUE, "flags must be 0 (got %u)", Flags);
    if (initState != NOT_CALLED) {
        if (initState == INIT_FAILED) return FAIL(initResult, "cuInit failed before (the failure is kept)");
        return CUDA_SUCCESS;
    }
    Config c;
    CUresult r = readConfig(&c);
    if (r == CUDA_SUCCESS && c.initError != CUDA_SUCCESS) {
        r = FAIL(c.initError, "GF_FAKECUDA_INIT_ERROR asks for this error");
    }
    if (r == CUDA_SUCCESS && c.devices == 0) r = FAIL(CUDA_ERROR_NO_DEVICE, "GF_FAKECUDA_DEVICES=0");
    if (r != CUDA_SUCCESS) {
        initState = INIT_FAILED;
        initResult = r;
        return r;
    }
    cfg = c;
    delayUs = cfg.delayUs;
    devices.assign(cfg.devices, Device{});
    for (int i = 0; i < cfg.devices; i++) {
        const auto &cc = cfg.cc[std::min<size_t>(i, cfg.cc.size() - 1)];
        devices[i].major = cc.first;
        devices[i].minor = cc.second;
        auto *p = new Ctx{i, true, false, 0, CUDA_SUCCESS};
        ctxs.insert(p);
        devices[i].primary = p;
    }
    initState = INIT_OK;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion) {
    LOCK;
    if (!driverVersion) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL driverVersion");
    *driverVersion = initState == INIT_OK ? cfg.driver : driverFromEnv();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const ErrorText *e = errorText(error);
    *pStr = e ? e->name : nullptr;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const ErrorText *e = errorText(error);
    *pStr = e ? e->text : nullptr;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// The CUDA runtime (PyTorch's libcudart) reaches the driver through these
// two; refusing them makes it report "no usable driver" instead of calling
// into a driver it does not know.
CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int, cuuint64_t,
                                     CUdriverProcAddressQueryResult *symbolStatus) {
    if (pfn) *pfn = nullptr;
    if (symbolStatus) *symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuGetProcAddress_v2", "%s: the fake driver offers no entry points",
                symbol ? symbol : "(null)");
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int, cuuint64_t) {
    if (pfn) *pfn = nullptr;
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuGetProcAddress", "%s: the fake driver offers no entry points",
                symbol ? symbol : "(null)");
}

CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *) {
    if (ppExportTable) *ppExportTable = nullptr;
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuGetExportTable", "the fake driver has no export tables");
}

// --- Devices ---------------------------------------------------------------

CUresult CUDAAPI cuDeviceGetCount(int *count) {
    LOCK;
    TRY(initialized(__func__));
    if (!count) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL count");
    *count = (int)devices.size();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *dev, int ordinal) {
    LOCK;
    TRY(initialized(__func__));
    if (!dev) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL device");
    TRY(device(__func__, ordinal));
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
    LOCK;
    TRY(device(__func__, dev));
    if (!name || len <= 0) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL name or len <= 0");
    std::snprintf(name, (size_t)len, "graphferry fake GPU %d (sm_%d%d)", dev, devices[dev].major, devices[dev].minor);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) {
    LOCK;
    TRY(device(__func__, dev));
    if (!uuid) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL uuid");
    static const char tag[] = "gf-fakecuda-";  // 12 bytes, then the ordinal
    std::memcpy(uuid->bytes, tag, 12);
    for (int i = 0; i < 4; i++) uuid->bytes[12 + i] = (char)((unsigned)dev >> (24 - 8 * i));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid(uuid, dev); }

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev) {
    LOCK;
    TRY(device(__func__, dev));
    if (!bytes) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL bytes");
    *bytes = cfg.mem;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
    LOCK;
    TRY(device(__func__, dev));
    if (!pi) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL pi");
    if ((int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) return FAIL(CUDA_ERROR_INVALID_VALUE, "attribute %d", attrib);
    const Device &d = devices[dev];
    int v = 0;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = kMaxThreadsPerBlock; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 0x7fffffff; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = (int)kMaxSharedPerBlock; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = (int)kMaxSharedPerBlock; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: v = 102400; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: v = 0x7fffffff; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1410000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: v = 1215000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = 40 << 20; break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: v = 512; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = kMultiprocessors; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: v = CU_COMPUTEMODE_DEFAULT; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: v = dev + 1; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: v = 2; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = d.major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = d.minor; break;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: v = 1; break;
    default: v = 0; break;  // not modelled: managed memory, P2P, ECC, ...
    }
    *pi = v;
    return CUDA_SUCCESS;
}

// --- Primary contexts --------------------------------------------------------

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
    LOCK;
    TRY(device(__func__, dev));
    if (!pctx) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL pctx");
    Device &d = devices[dev];
    if (d.refcount++ == 0) {
        d.primary->alive = true;
        d.primary->sticky = CUDA_SUCCESS;
        d.primary->flags = d.primaryFlags;
    }
    *pctx = reinterpret_cast<CUcontext>(d.primary);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
    LOCK;
    TRY(device(__func__, dev));
    Device &d = devices[dev];
    if (d.refcount == 0) return FAIL(CUDA_ERROR_INVALID_CONTEXT, "device %d's primary context is not retained", dev);
    if (--d.refcount == 0) {
        destroyResources(d.primary);
        d.primary->alive = false;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) {
    LOCK;
    TRY(device(__func__, dev));
    Device &d = devices[dev];
    destroyResources(d.primary);
    d.primary->alive = false;
    d.refcount = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
    LOCK;
    TRY(device(__func__, dev));
    if (!flags || !active) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL flags or active");
    *flags = devices[dev].primaryFlags;
    *active = devices[dev].refcount > 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
    LOCK;
    TRY(device(__func__, dev));
    if (flags & ~0xffu) return FAIL(CUDA_ERROR_INVALID_VALUE, "unknown flags 0x%x", flags);
    devices[dev].primaryFlags = flags;
    if (devices[dev].refcount > 0) devices[dev].primary->flags = flags;
    return CUDA_SUCCESS;
}

// --- Contexts ------------------------------------------------------------------

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev) {
    LOCK;
    TRY(device(__func__, dev));
    if (!pctx) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL pctx");
    unsigned sched = flags & CU_CTX_SCHED_MASK;
    if ((flags & ~0xffu) || (sched != 0 && sched != 1 && sched != 2 && sched != 4)) {
        return FAIL(CUDA_ERROR_INVALID_VALUE, "invalid flags 0x%x", flags);
    }
    auto *c = new Ctx{dev, false, true, flags, CUDA_SUCCESS};
    ctxs.insert(c);
    ctxStack.push_back(c);
    *pctx = reinterpret_cast<CUcontext>(c);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx) {
    LOCK;
    TRY(initialized(__func__));
    Ctx *c = asCtx(ctx);
    if (!ctx) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL context");
    if (!c) return FAIL(CUDA_ERROR_INVALID_CONTEXT, "%p is not a context", (void *)ctx);
    if (c->primary) return FAIL(CUDA_ERROR_INVALID_CONTEXT, "a primary context is released, not destroyed");
    if (!c->alive) return FAIL(CUDA_ERROR_INVALID_CONTEXT, "context %p was destroyed already", (void *)ctx);
    destroyResources(c);
    c->alive = false;
    if (!ctxStack.empty() && ctxStack.back() == c) ctxStack.pop_back();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
    LOCK;
    TRY(initialized(__func__));

    Ctx *c = asCtx(ctx);
    if (!ctx) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL context");
    if (!c || (!c->alive && !c->primary)) return FAIL(CUDA_ERROR_INVALID_CONTEXT, "%p is not a live context", (void *)ctx);
    ctxStack.push_back(c);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx) {
    LOCK;
    TRY(initialized(__func__));
    if (ctxStack.empty()) return FAIL(CUDA_ERROR_INVALID_CONTEXT, "the context stack of this thread is empty");
    if (pctx) *pctx = reinterpret_cast<CUcontext>(ctxStack.back());
    ctxStack.pop_back();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
    LOCK;
    TRY(initialized(__func__));
    if (!ctx) {
        if (!ctxStack.empty()) ctxStack.pop_back();  // as documented: NULL pops
        return CUDA_SUCCESS;
    }
    Ctx *c = asCtx(ctx);
    if (!c || (!c->alive && !c->primary)) return FAIL(CUDA_ERROR_INVALID_CONTEXT, "%p is not a live context", (void *)ctx);
    if (ctxStack.empty()) {
        ctxStack.push_back(c);
    } else {
        ctxStack.back() = c;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx) {
    LOCK;
    TRY(initialized(__func__));
    if (!pctx) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL pctx");
    *pctx = ctxStack.empty() ? nullptr : reinterpret_cast<CUcontext>(ctxStack.back());
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *dev) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    if (!dev) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL device");
    *dev = c->dev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    if (!flags) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL flags");
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) {
    std::unique_lock<std::mutex> lock(mu);
    Ctx *c;
    TRY(current(__func__, &c));
    std::vector<Worker *> ws;
    for (Worker *w : workers) {
        if (w->ctx == c) ws.push_back(w);
    }
    lock.unlock();
    for (Worker *w : ws) w->drain();  // every stream of the context, every thread's
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version) {
    LOCK;
    TRY(initialized(__func__));
    if (!version) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL version");
    if (!ctx) {
        Ctx *c;
        TRY(current(__func__, &c));
    } else {
        Ctx *c = asCtx(ctx);
        if (!c || !c->alive) return FAIL(CUDA_ERROR_INVALID_CONTEXT, "%p is not a live context", (void *)ctx);
    }
    *version = 3020;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    if (leastPriority) *leastPriority = kLeastPriority;
    if (greatestPriority) *greatestPriority = kGreatestPriority;
    return CUDA_SUCCESS;
}

// --- Memory ----------------------------------------------------------------------

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    if (!dptr) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL dptr");
    if (bytesize == 0) return FAIL(CUDA_ERROR_INVALID_VALUE, "0 bytes");
    Device &d = devices[c->dev];
    size_t rounded = (bytesize + kAlign - 1) / kAlign * kAlign;
    if (rounded < bytesize || rounded > cfg.mem - d.used) {
        return FAIL(CUDA_ERROR_OUT_OF_MEMORY, "%zu bytes requested, %zu of %zu in use on device %d", bytesize, d.used,
                    cfg.mem, c->dev);
    }
    void *p = std::aligned_alloc(kAlign, rounded);
    if (!p) return FAIL(CUDA_ERROR_OUT_OF_MEMORY, "the host could not allocate %zu bytes", rounded);
    std::memset(p, kFill, rounded);
    ranges[(uintptr_t)p] = Range{Range::DEVICE, bytesize, rounded, c};
    d.used += rounded;
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    auto it = ranges.find((uintptr_t)dptr);
    if (it == ranges.end() || it->second.kind != Range::DEVICE) {
        return FAIL(CUDA_ERROR_INVALID_VALUE, "0x%llx is not the start of a live device allocation",
                    (unsigned long long)dptr);
    }
    if (it->second.ctx != c) {
        return FAIL(CUDA_ERROR_INVALID_VALUE, "0x%llx was allocated in another context", (unsigned long long)dptr);
    }
    quiesce(c);  // cuMemFree synchronises
    devices[c->dev].used -= it->second.charged;
    std::free(reinterpret_cast<void *>(it->first));
    ranges.erase(it);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo(size_t *free, size_t *total) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    if (!free || !total) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL free or total");
    *total = cfg.mem;
    *free = cfg.mem - devices[c->dev].used;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    uintptr_t base;
    Range *r = findRange((uintptr_t)dptr, &base);
    if (!r || r->kind != Range::DEVICE || r->ctx != c) {
        return FAIL(CUDA_ERROR_NOT_FOUND, "0x%llx is not in a device allocation of the current context",
                    (unsigned long long)dptr);
    }
    if (pbase) *pbase = (CUdeviceptr)base;
    if (psize) *psize = r->size;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize) { return hostRange(__func__, pp, bytesize, 0, 0); }

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
    return hostRange(__func__, pp, bytesize, Flags,
                     CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED);
}

CUresult CUDAAPI cuMemFreeHost(void *p) {
    LOCK;
    TRY(initialized(__func__));
    auto it = ranges.find((uintptr_t)p);
    if (!p || it == ranges.end() || it->second.kind != Range::PINNED) {
        return FAIL(CUDA_ERROR_INVALID_VALUE, "%p is not the start of a pinned host allocation", p);
    }
    quiesce(nullptr);  // cuMemFreeHost synchronises
    std::free(p);
    ranges.erase(it);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    if (!p || bytesize == 0) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL pointer or 0 bytes");
    unsigned allowed = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY |
                       CU_MEMHOSTREGISTER_READ_ONLY;
    if (Flags & ~allowed) return FAIL(CUDA_ERROR_INVALID_VALUE, "unknown flags 0x%x", Flags);
    uintptr_t lo = (uintptr_t)p;
    if (bytesize > UINTPTR_MAX - lo) return FAIL(CUDA_ERROR_INVALID_VALUE, "the range wraps around");
    auto it = ranges.lower_bound(lo + bytesize);
    if (it != ranges.begin()) {
        --it;
        if (it->first + it->second.size > lo) {
            return FAIL(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "[%p, +%zu) overlaps a %s at 0x%llx", p, bytesize,
                        kindName(it->second.kind), (unsigned long long)it->first);
        }
    }
    ranges[lo] = Range{Range::REGISTERED, bytesize, 0, nullptr};
    hostRegistrations++;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostUnregister(void *p) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    auto it = ranges.find((uintptr_t)p);
    if (!p || it == ranges.end() || it->second.kind != Range::REGISTERED) {
        return FAIL(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "%p is not the start of a registered range", p);
    }
    quiesce(nullptr);  // no queued copy or kernel reads it any more
    ranges.erase(it);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    if (!pdptr) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL pdptr");
    if (Flags != 0) return FAIL(CUDA_ERROR_INVALID_VALUE, "flags must be 0 (got %u)", Flags);
    uintptr_t base;
    Range *r = findRange((uintptr_t)p, &base);
    if (!r || r->kind == Range::DEVICE) {
        return FAIL(CUDA_ERROR_INVALID_VALUE, "%p is not in pinned or registered host memory", p);
    }
    *pdptr = (CUdeviceptr)(uintptr_t)p;  // identity mapping (unified addressing)
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    LOCK;
    TRY(initialized(__func__));
    if (!data) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL data");
    uintptr_t base;
    Range *r = findRange((uintptr_t)ptr, &base);
    if (!r) return FAIL(CUDA_ERROR_INVALID_VALUE, "0x%llx is not memory the driver knows", (unsigned long long)ptr);
    bool dev = r->kind == Range::DEVICE;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        if (!dev) return FAIL(CUDA_ERROR_INVALID_VALUE, "host memory has no context here");
        *static_cast<CUcontext *>(data) = reinterpret_cast<CUcontext>(r->ctx);
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *static_cast<unsigned *>(data) = dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        *static_cast<void **>(data) = reinterpret_cast<void *>(ptr);
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *static_cast<CUdeviceptr *>(data) = (CUdeviceptr)base;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *static_cast<size_t *>(data) = r->size;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *static_cast<int *>(data) = dev ? r->ctx->dev : 0;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *static_cast<unsigned *>(data) = 0;
        break;
    default:
        return FAIL(CUDA_ERROR_NOT_SUPPORTED, "attribute %d is not modelled", attribute);
    }
    return CUDA_SUCCESS;
}

// --- Copies and memsets ------------------------------------------------------------

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) {
    return memcpyChecked(__func__, dst, DEV, (uintptr_t)src, HOST, n, nullptr, false);
}
CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) {
    return memcpyChecked(__func__, (uintptr_t)dst, HOST, src, DEV, n, nullptr, false);
}
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return memcpyChecked(__func__, dst, DEV, src, DEV, n, nullptr, false);
}
CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return memcpyChecked(__func__, dst, UNIFIED, src, UNIFIED, n, nullptr, false);
}
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
    return memcpyChecked(__func__, dst, DEV, (uintptr_t)src, HOST, n, s, true);
}
CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) {
    return memcpyChecked(__func__, (uintptr_t)dst, HOST, src, DEV, n, s, true);
}
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    return memcpyChecked(__func__, dst, DEV, src, DEV, n, s, true);
}
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    return memcpyChecked(__func__, dst, UNIFIED, src, UNIFIED, n, s, true);
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) { return memsetN(__func__, d, v, n, nullptr, false); }
CUresult CUDAAPI cuMemsetD16(CUdeviceptr d, unsigned short v, size_t n) { return memsetN(__func__, d, v, n, nullptr, false); }
CUresult CUDAAPI cuMemsetD32(CUdeviceptr d, unsigned int v, size_t n) { return memsetN(__func__, d, v, n, nullptr, false); }
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
    return memsetN(__func__, d, v, n, s, true);
}
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
    return memsetN(__func__, d, v, n, s, true);
}
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
    return memsetN(__func__, d, v, n, s, true);
}

// --- Modules ---------------------------------------------------------------------

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
    LOCK;
    return loadModule(__func__, module, image);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                                    void **optionValues) {
    LOCK;
    if (numOptions && (!options || !optionValues)) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL options");
    CUresult r = loadModule(__func__, module, image);
    // Report a failure's reason in the error log buffer, when one is given.
    char *log = nullptr;
    size_t logSize = 0;
    int sizeIndex = -1;
    for (unsigned i = 0; i < numOptions; i++) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER) log = static_cast<char *>(optionValues[i]);
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
            logSize = (size_t)(uintptr_t)optionValues[i];
            sizeIndex = (int)i;
        }
    }
    if (log && logSize) {
        std::string msg = r == CUDA_SUCCESS ? "" : lastReason;
        size_t n = std::min(msg.size(), logSize - 1);
        std::memcpy(log, msg.data(), n);
        log[n] = 0;
        optionValues[sizeIndex] = reinterpret_cast<void *>((uintptr_t)(n ? n + 1 : 0));
    }
    return r;
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname) {
    LOCK;
    if (!fname) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL fname");
    std::FILE *f = std::fopen(fname, "rb");
    if (!f) return FAIL(CUDA_ERROR_FILE_NOT_FOUND, "cannot open %s", fname);
    std::string text;
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
    return loadModule(__func__, module, text.c_str());
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
    LOCK;
    TRY(initialized(__func__));
    if (!modules.count(hmod)) return FAIL(CUDA_ERROR_INVALID_HANDLE, "%p is not a module", (void *)hmod);
    auto *m = reinterpret_cast<Module *>(hmod);
    if (!m->alive) return FAIL(CUDA_ERROR_INVALID_HANDLE, "module %p was unloaded already", (void *)hmod);
    m->alive = false;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
    LOCK;
    TRY(initialized(__func__));
    if (!hfunc || !name) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL hfunc or name");
    if (!modules.count(hmod)) return FAIL(CUDA_ERROR_INVALID_HANDLE, "%p is not a module", (void *)hmod);
    auto *m = reinterpret_cast<Module *>(hmod);
    if (!m->alive) return FAIL(CUDA_ERROR_INVALID_HANDLE, "module %p was unloaded", (void *)hmod);
    auto fit = m->funcs.find(name);
    if (fit != m->funcs.end()) {
        *hfunc = reinterpret_cast<CUfunction>(fit->second);
        return CUDA_SUCCESS;
    }
    auto eit = m->entries.find(name);
    if (eit == m->entries.end()) return FAIL(CUDA_ERROR_NOT_FOUND, "the module's PTX has no .entry %s", name);
    const gf_emu::Kernel *k = gf_emu::find(name);
    if (!k) return FAIL(CUDA_ERROR_NOT_FOUND, ".entry %s is not an emulated kernel (cuda/emu/kernels.h)", name);
    if (eit->second.nargs != (int)k->nargs || !eit->second.all8) {
        return FAIL(CUDA_ERROR_NOT_FOUND,
                    ".entry %s has %d parameters%s in the PTX, the emulated kernel %zu of 8 bytes: stale PTX?", name,
                    eit->second.nargs, eit->second.all8 ? "" : " (not all 8-byte)", k->nargs);
    }
    auto *f = new Function{m, k, name};
    functions.insert(f);
    m->funcs[name] = f;
    *hfunc = reinterpret_cast<CUfunction>(f);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name) {
    LOCK;
    TRY(initialized(__func__));
    (void)dptr;
    (void)bytes;
    if (!name) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL name");
    if (!modules.count(hmod) || !reinterpret_cast<Module *>(hmod)->alive) {
        return FAIL(CUDA_ERROR_INVALID_HANDLE, "%p is not a loaded module", (void *)hmod);
    }
    return FAIL(CUDA_ERROR_NOT_FOUND, "the fake driver models no module globals (%s)", name);
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc) {
    LOCK;
    TRY(initialized(__func__));
    if (!pi) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL pi");
    if (!functions.count(hfunc)) return FAIL(CUDA_ERROR_INVALID_HANDLE, "%p is not a function", (void *)hfunc);
    auto *f = reinterpret_cast<Function *>(hfunc);
    if (!f->mod->alive) return FAIL(CUDA_ERROR_INVALID_HANDLE, "the module of %s was unloaded", f->name.c_str());
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = kMaxThreadsPerBlock; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = f->mod->ptxVersion; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: {
        const Device &d = devices[f->mod->ctx->dev];
        *pi = d.major * 10 + d.minor;
        break;
    }
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = (int)kMaxSharedPerBlock; break;
    default:
        if ((int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX) return FAIL(CUDA_ERROR_INVALID_VALUE, "attribute %d", attrib);
        *pi = 0;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                             size_t dynamicSMemSize) {
    LOCK;
    TRY(initialized(__func__));
    if (!numBlocks || blockSize <= 0 || blockSize > kMaxThreadsPerBlock || dynamicSMemSize > kMaxSharedPerBlock) {
        return FAIL(CUDA_ERROR_INVALID_VALUE, "bad arguments");
    }
    if (!functions.count(func) || !reinterpret_cast<Function *>(func)->mod->alive) {
        return FAIL(CUDA_ERROR_INVALID_HANDLE, "%p is not a live function", (void *)func);
    }
    *numBlocks = std::min(32, 2048 / blockSize);
    return CUDA_SUCCESS;
}

// --- Streams ------------------------------------------------------------------------

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    if (!phStream) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL phStream");
    if (flags & ~(unsigned)CU_STREAM_NON_BLOCKING) return FAIL(CUDA_ERROR_INVALID_VALUE, "unknown flags 0x%x", flags);
    priority = std::max(kGreatestPriority, std::min(kLeastPriority, priority));
    auto *s = new Stream{c, true, flags, priority, newWorker(c)};
    streams.insert(s);
    *phStream = reinterpret_cast<CUstream>(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags) {
    return cuStreamCreateWithPriority(phStream, Flags, kLeastPriority);
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream) {
    LOCK;
    TRY(initialized(__func__));
    if (!streams.count(hStream)) return FAIL(CUDA_ERROR_INVALID_HANDLE, "%p is not a created stream", (void *)hStream);
    auto *s = reinterpret_cast<Stream *>(hStream);
    if (!s->alive) return FAIL(CUDA_ERROR_INVALID_HANDLE, "stream %p was destroyed already", (void *)hStream);
    s->alive = false;
    s->w->finish();  // its queued work still runs, as on a GPU
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
    std::unique_lock<std::mutex> lock(mu);
    Ctx *c;
    TRY(current(__func__, &c));
    TRY(stream(__func__, c, hStream));
    Worker *w = workerOf(c, hStream);
    lock.unlock();
    w->drain();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    TRY(stream(__func__, c, hStream));
    return workerOf(c, hStream)->idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    TRY(stream(__func__, c, hStream));
    Event *e;
    TRY(event(__func__, hEvent, &e));  // an event of any context may be waited on
    if (Flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) return FAIL(CUDA_ERROR_INVALID_VALUE, "unknown flags 0x%x", Flags);
    unsigned long long target;
    {
        std::lock_guard<std::mutex> l(evMu);
        target = e->recorded;  // the last record queued so far (none: nothing to wait for)
    }
    if (target == 0) return CUDA_SUCCESS;
    workerOf(c, hStream)->push([e, target] {
        std::unique_lock<std::mutex> l(evMu);
        evCv.wait(l, [e, target] { return e->done >= target; });
    });
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    TRY(stream(__func__, c, hStream));
    if (!flags) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL flags");
    bool special = hStream == nullptr || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD;
    *flags = special ? 0 : reinterpret_cast<Stream *>(hStream)->flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    TRY(stream(__func__, c, hStream));
    if (!priority) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL priority");
    bool special = hStream == nullptr || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD;
    *priority = special ? 0 : reinterpret_cast<Stream *>(hStream)->priority;
    return CUDA_SUCCESS;
}

// --- Events ----------------------------------------------------------------------------

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    if (!phEvent) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL phEvent");
    unsigned allowed = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (Flags & ~allowed) return FAIL(CUDA_ERROR_INVALID_VALUE, "unknown flags 0x%x", Flags);
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)) {
        return FAIL(CUDA_ERROR_INVALID_VALUE, "CU_EVENT_INTERPROCESS needs CU_EVENT_DISABLE_TIMING");
    }
    auto *e = new Event{c, true, Flags, 0, 0, 0};
    events.insert(e);
    *phEvent = reinterpret_cast<CUevent>(e);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
    LOCK;
    Ctx *c;
    TRY(current(__func__, &c));
    Event *e;
    TRY(event(__func__, hEvent, &e));
    if (e->ctx != c) return FAIL(CUDA_ERROR_INVALID_HANDLE, "event %p belongs to another context", (void *)hEvent);
    TRY(stream(__func__, c, hStream));
    unsigned long long seq;
    {
        std::lock_guard<std::mutex> l(evMu);
        seq = ++e->recorded;
    }
    workerOf(c, hStream)->push([e, seq] {  // completes when its stream gets here
        std::lock_guard<std::mutex> l(evMu);
        e->done = std::max(e->done, seq);
        e->ms = nowMs();
        evCv.notify_all();
    });
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
    LOCK;
    TRY(initialized(__func__));
    Event *e;
    TRY(event(__func__, hEvent, &e));
    std::lock_guard<std::mutex> l(evMu);
    return e->done >= e->recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
    std::unique_lock<std::mutex> lock(mu);
    TRY(initialized(__func__));
    Event *e;
    TRY(event(__func__, hEvent, &e));
    lock.unlock();
    std::unique_lock<std::mutex> l(evMu);
    unsigned long long target = e->recorded;
    evCv.wait(l, [e, target] { return e->done >= target; });
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
    LOCK;
    TRY(initialized(__func__));
    if (!pMilliseconds) return FAIL(CUDA_ERROR_INVALID_VALUE, "NULL pMilliseconds");
    Event *a, *b;
    TRY(event(__func__, hStart, &a));
    TRY(event(__func__, hEnd, &b));
    if (!a->done || !b->done) return FAIL(CUDA_ERROR_INVALID_HANDLE, "an event was never recorded");
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) {
        return FAIL(CUDA_ERROR_INVALID_HANDLE, "an event was created with CU_EVENT_DISABLE_TIMING");
    }
    *pMilliseconds = (float)(b->ms - a->ms);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent) {
    LOCK;
    TRY(initialized(__func__));
    Event *e;
    TRY(event(__func__, hEvent, &e));
    e->alive = false;
    return CUDA_SUCCESS;
}

// --- Launch --------------------------------------------------------------------------------

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
    const gf_emu::Kernel *k;
    std::vector<unsigned long long> args;
    gf_emu::Schedule sched;
    Worker *w;
    {
        LOCK;
        Ctx *c;
        TRY(current(__func__, &c));
        if (!functions.count(f)) return FAIL(CUDA_ERROR_INVALID_HANDLE, "%p is not a function", (void *)f);
        auto *fn = reinterpret_cast<Function *>(f);
        if (!fn->mod->alive) {
            return FAIL(CUDA_ERROR_INVALID_HANDLE, "%s: its module was unloaded (or its context destroyed)",
                        fn->name.c_str());
        }
        if (fn->mod->ctx != c) {
            return FAIL(CUDA_ERROR_INVALID_HANDLE, "%s: its module was loaded in another context", fn->name.c_str());
        }
        if (!gridDimX || !gridDimY || !gridDimZ || !blockDimX || !blockDimY || !blockDimZ) {
            return FAIL(CUDA_ERROR_INVALID_VALUE, "%s: a zero grid or block dimension (%u,%u,%u)x(%u,%u,%u)",
                        fn->name.c_str(), gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ);
        }
        if (gridDimY != 1 || gridDimZ != 1 || blockDimY != 1 || blockDimZ != 1) {
            return FAIL(CUDA_ERROR_INVALID_VALUE, "%s: the emulated kernels are 1-D; got grid (%u,%u,%u) block (%u,%u,%u)",
                        fn->name.c_str(), gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ);
        }
        if (blockDimX > (unsigned)kMaxThreadsPerBlock) {
            return FAIL(CUDA_ERROR_INVALID_VALUE, "%s: %u threads per block (at most %d)", fn->name.c_str(), blockDimX,
                        kMaxThreadsPerBlock);
        }
        if (gridDimX > 0x7fffffffu) return FAIL(CUDA_ERROR_INVALID_VALUE, "%s: grid of %u blocks", fn->name.c_str(), gridDimX);
        if (sharedMemBytes > kMaxSharedPerBlock) {
            return FAIL(CUDA_ERROR_INVALID_VALUE, "%s: %u bytes of dynamic shared memory (at most %u)", fn->name.c_str(),
                        sharedMemBytes, kMaxSharedPerBlock);
        }
        if (extra) return FAIL(CUDA_ERROR_INVALID_VALUE, "%s: 'extra' parameter passing is not supported", fn->name.c_str());
        TRY(stream(__func__, c, hStream));
        w = workerOf(c, hStream);
        k = fn->kernel;
        if (k->nargs && !kernelParams) return FAIL(CUDA_ERROR_INVALID_VALUE, "%s: NULL kernelParams", fn->name.c_str());
        args.resize(k->nargs);
        for (size_t i = 0; i < k->nargs; i++) {
            if (!kernelParams[i]) return FAIL(CUDA_ERROR_INVALID_VALUE, "%s: kernelParams[%zu] is NULL", fn->name.c_str(), i);
            std::memcpy(&args[i], kernelParams[i], 8);
            if ((k->ptrs >> i) & 1) TRY(pointerArg(__func__, c, fn, i, args[i]));
        }
        Device &d = devices[c->dev];
        sched.threads = cfg.threads;
        sched.seed = cfg.seed ^ gf_emu::detail::mix((unsigned long long)d.launches);
        d.launches++;
    }
    // The grid runs on the stream's thread, after the stream's earlier work.
    w->push([k, gridDimX, blockDimX, args, sched] { gf_emu::run(*k, gridDimX, blockDimX, args.data(), sched); });
    return CUDA_SUCCESS;
}

// --- Introspection for tests ------------------------------------------------------------------

int gf_fakecuda_is_fake(void) { return 1; }

long long gf_fakecuda_set_delay_us(long long us) { return delayUs.exchange(us < 0 ? 0 : us); }

int gf_fakecuda_fail(const char *fn, int after, int n, int code) {
    LOCK;
    if (!fn || after < 0 || n < 0 || code == CUDA_SUCCESS) return -1;
    inject.fn = fn;
    inject.skip = after;
    inject.n = n;
    inject.code = (CUresult)code;
    return 0;
}

int gf_fakecuda_hold(void *sp, int hold) {
    CUstream s = static_cast<CUstream>(sp);
    LOCK;
    Ctx *c;
    if (current(__func__, &c) != CUDA_SUCCESS || stream(__func__, c, s) != CUDA_SUCCESS) return -1;
    Worker *w = workerOf(c, s);
    std::lock_guard<std::mutex> l(w->m);
    if (!hold && w->holds == 0) return -1;
    w->holds += hold ? 1 : -1;
    w->cv.notify_all();
    return 0;
}

const char *gf_fakecuda_last_reason(void) { return lastReason.c_str(); }

int gf_fakecuda_registrations(int64_t *total, int64_t *live) {
    LOCK;
    if (initState != INIT_OK || !total || !live) return -1;
    *total = hostRegistrations;
    *live = 0;
    for (const auto &kv : ranges) {
        if (kv.second.kind == Range::REGISTERED) ++*live;
    }
    return 0;
}

int gf_fakecuda_is_registered(uintptr_t p, size_t n) {
    LOCK;
    if (initState != INIT_OK || n == 0) return 0;
    uintptr_t base;
    Range *r = findRange(p, &base);
    return r && r->kind == Range::REGISTERED && n <= r->size - (p - base);
}

int gf_fakecuda_stats(int dev, gf_fakecuda_stats_t *out) {
    LOCK;
    if (initState != INIT_OK || dev < 0 || dev >= (int)devices.size() || !out) return -1;
    const Device &d = devices[dev];
    gf_fakecuda_stats_t s;
    std::memset(&s, 0, sizeof s);
    for (const auto &kv : ranges) {
        if (kv.second.kind == Range::DEVICE) {
            if (kv.second.ctx->dev == dev) {
                s.live_allocs++;
                s.live_alloc_bytes += (int64_t)kv.second.charged;
            }
        } else {
            s.live_host_ranges++;
        }
    }
    s.mem_total = (int64_t)cfg.mem;
    for (const void *h : modules) {
        auto *m = static_cast<const Module *>(h);
        if (m->alive && m->ctx->dev == dev) s.live_modules++;
    }
    s.module_loads = d.loads;
    for (const void *h : streams) {
        auto *x = static_cast<const Stream *>(h);
        if (x->alive && x->ctx->dev == dev) s.live_streams++;
    }
    for (const void *h : events) {
        auto *x = static_cast<const Event *>(h);
        if (x->alive && x->ctx->dev == dev) s.live_events++;
    }
    for (const void *h : ctxs) {
        auto *x = static_cast<const Ctx *>(h);
        if (x->alive && x->dev == dev) s.live_contexts++;
    }
    s.primary_refcount = d.refcount;
    s.kernel_launches = d.launches;
    *out = s;
    return 0;
}

}  // extern "C"
