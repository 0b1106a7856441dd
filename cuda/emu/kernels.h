// The kernels of cuda/kernels compiled as host C++ (through shim.h), their
// table by name, and a launcher of one 1-D grid on the host. Shared by the
// pipe emulator (server.cpp) and the fake CUDA driver
// (cuda/fakedriver/fakecuda.cpp).
//
// This header DEFINES the thread indices and the kernels: include it from
// exactly one translation unit of a program or library.
#ifndef GF_EMU_KERNELS_H
#define GF_EMU_KERNELS_H

#include "shim.h"

#include <atomic>
#include <cstddef>
#include <map>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

// The running thread's indices (declared in shim.h), set by the launcher.
// Thread-locals, so that several host threads can run threads of one grid.
thread_local gf_dim3 blockIdx, threadIdx, blockDim, gridDim;

#include "../kernels/all.cu"

namespace gf_emu {

// A kernel parameter as the launchers pass it: an 8-byte word.
template <typename T>
T word(unsigned long long w) {
    T v;
    static_assert(sizeof(T) == 8, "kernel parameters are 8 bytes");
    std::memcpy(&v, &w, 8);
    return v;
}

template <typename... A, std::size_t... I>
void call(void (*k)(A...), const unsigned long long *args, std::index_sequence<I...>) {
    k(word<A>(args[I])...);
}

struct Kernel {
    std::size_t nargs;
    unsigned long long ptrs;  // bit i: parameter i is a pointer
    void (*run)(const unsigned long long *args);  // one GPU thread
};

// runKernel runs kernel F on the words args (one GPU thread).
template <typename... A>
void callWords(void (*k)(A...), const unsigned long long *args) {
    call(k, args, std::index_sequence_for<A...>{});
}
template <auto F>
void runKernel(const unsigned long long *args) {
    callWords(F, args);
}

template <typename... A>
Kernel describe(void (*)(A...), void (*run)(const unsigned long long *)) {
    static_assert(sizeof...(A) <= 64, "at most 64 parameters");
    // isptr[0] is a placeholder that keeps the array non-empty.
    const bool isptr[] = {false, std::is_pointer<A>::value...};
    unsigned long long ptrs = 0;
    for (std::size_t i = 0; i < sizeof...(A); i++) {
        if (isptr[i + 1]) ptrs |= 1ULL << i;
    }
    return Kernel{sizeof...(A), ptrs, run};
}

// wrap describes kernel F. The kernel is a template argument, so that
// kernels of the same signature get runners of their own (a runner keyed by
// the signature alone would run the first such kernel for all of them).
template <auto F>
Kernel wrap() {
    return describe(F, &runKernel<F>);
}

// The kernel table, by name (built once, never destroyed: a library's
// threads may still launch while the process exits).
inline const std::map<std::string, Kernel> &kernels() {
    static const std::map<std::string, Kernel> &table = *[] {
        auto *m = new std::map<std::string, Kernel>;
#define K(name) (*m)[#name] = wrap<name>()
        K(gf_count);
        K(gf_sample);
        K(gf_scan_chunks);
        K(gf_scan_partials);
        K(gf_scan_apply);
        K(gf_table_insert);
        K(gf_au_insert);
        K(gf_au_flag);
        K(gf_au_assign);
        K(gf_au_resolve);
        K(gf_gather);
        K(gf_map_ids);
        K(gf_count_hot);
#undef K
        return m;
    }();
    return table;
}

// find returns the named kernel, or null.
inline const Kernel *find(const std::string &name) {
    auto it = kernels().find(name);
    return it == kernels().end() ? nullptr : &it->second;
}

// How a launch's grid threads are run.
//   threads <= 1: every thread of the grid in order (blocks, then threads)
//                 on the calling host thread;
//   threads = k > 1: the grid's (block, thread) pairs in an order permuted
//                 by seed, handed out one by one to k host threads running
//                 concurrently (any interleaving is legal: the kernels use
//                 no shared memory and no barriers).
struct Schedule {
    unsigned threads = 1;
    unsigned long long seed = 0;
};

namespace detail {

inline unsigned long long mix(unsigned long long z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// A seeded bijection of [0, n) without a table: a 4-round balanced Feistel
// network on the smallest even number of bits covering n, cycle-walked
// back into [0, n) (fewer than 4 steps expected).
class Permutation {
   public:
    Permutation(unsigned long long n, unsigned long long seed) : n_(n) {
        unsigned bits = 2;
        while (bits < 64 && (1ULL << bits) < n) bits++;
        if (bits & 1) bits++;
        half_ = bits / 2;
        hmask_ = (1ULL << half_) - 1;
        unsigned long long s = seed;
        for (auto &k : keys_) k = s = mix(s);
    }
    unsigned long long operator()(unsigned long long i) const {
        unsigned long long x = i;
        do x = round(x);
        while (x >= n_);
        return x;
    }

   private:
    unsigned long long round(unsigned long long x) const {
        unsigned long long l = x >> half_, r = x & hmask_;
        for (unsigned long long k : keys_) {
            unsigned long long t = r;
            r = l ^ (mix(r ^ k) & hmask_);
            l = t;
        }
        return (l << half_) | r;
    }
    unsigned long long n_, hmask_;
    unsigned half_;
    unsigned long long keys_[4];
};

}  // namespace detail

// run executes one launch of k over a grid of `grid` blocks of `block`
// threads (both >= 1), with args holding k.nargs words. It returns when
// every thread has run.
inline void run(const Kernel &k, unsigned grid, unsigned block, const unsigned long long *args,
                const Schedule &s) {
    const unsigned long long total = (unsigned long long)grid * block;
    if (s.threads <= 1 || total <= 1) {
        gridDim = {grid, 1, 1};
        blockDim = {block, 1, 1};
        for (unsigned b = 0; b < grid; b++) {
            for (unsigned t = 0; t < block; t++) {
                blockIdx = {b, 0, 0};
                threadIdx = {t, 0, 0};
                k.run(args);
            }
        }
        return;
    }
    const detail::Permutation perm(total, s.seed);
    std::atomic<unsigned long long> next{0};
    unsigned n = (unsigned long long)s.threads < total ? s.threads : (unsigned)total;
    std::atomic<unsigned> started{0};
    auto worker = [&](unsigned w) {
        gridDim = {grid, 1, 1};
        blockDim = {block, 1, 1};
        // Schedule points on (shim.h), seeded per host thread.
        gf_sched_state = detail::mix(s.seed ^ (0x5ced0000ULL + w)) | 1;
        // Start together, so that the host threads' GPU threads interleave
        // from the first one on (a thread created late would otherwise run
        // its share after the others).
        started.fetch_add(1);
        while (started.load() < n) std::this_thread::yield();
        for (;;) {
            unsigned long long i = next.fetch_add(1, std::memory_order_relaxed);
            if (i >= total) break;
            unsigned long long p = perm(i);
            blockIdx = {(unsigned)(p / block), 0, 0};
            threadIdx = {(unsigned)(p % block), 0, 0};
            k.run(args);
        }
        gf_sched_state = 0;
    };
    std::vector<std::thread> pool;
    pool.reserve(n - 1);
    for (unsigned w = 1; w < n; w++) pool.emplace_back(worker, w);
    worker(0);
    for (auto &th : pool) th.join();
}

// launch runs the named kernel; false (nothing run) when the name is
// unknown, nargs is not the kernel's arity, or grid or block is 0.
inline bool launch(const std::string &name, unsigned grid, unsigned block, const unsigned long long *args,
                   std::size_t nargs, const Schedule &s = Schedule{}) {
    const Kernel *k = find(name);
    if (!k || k->nargs != nargs || grid == 0 || block == 0) return false;
    run(*k, grid, block, args, s);
    return true;
}

}  // namespace gf_emu

#endif
