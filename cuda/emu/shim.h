// Host shim: lets cuda/kernels/*.cu compile as plain C++ so that the
// emulator (server.cpp) runs the kernels' own code on the CPU.
//
// A launch runs every thread of the grid one after the other, in order
// (blocks, then threads): the kernels use no shared memory and no block
// barriers, so this is a valid schedule of them. It is one schedule only:
// races between GPU threads are NOT exercised here (tests/gpu/run.sh runs
// compute-sanitizer racecheck on the device for that).
#ifndef GF_EMU_SHIM_H
#define GF_EMU_SHIM_H

#include <cstdint>
#include <cstring>
#include <thread>

struct gf_dim3 {
    unsigned int x, y, z;
};

// The running thread's indices, set by the launcher.
extern thread_local gf_dim3 blockIdx, threadIdx;
extern thread_local gf_dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ inline

inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
// Compiled with -ffp-contract=off: each of these is one IEEE operation
// rounded to nearest, as the device intrinsics.
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline long long __double_as_longlong(double x) {
    long long r;
    std::memcpy(&r, &x, sizeof r);
    return r;
}
inline double __longlong_as_double(long long x) {
    double r;
    std::memcpy(&r, &x, sizeof r);
    return r;
}
inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long cmp, unsigned long long val) {
    __atomic_compare_exchange_n(p, &cmp, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;  // the old value either way
}
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long val) {
    return __atomic_fetch_add(p, val, __ATOMIC_SEQ_CST);
}
inline long long atomicMin(long long *p, long long val) {
    long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (val < old && !__atomic_compare_exchange_n(p, &old, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}

// Schedule points (GF_SCHED() in the kernels, nothing on the device). When
// a launch runs its grid on several host threads (the fake driver's
// GF_FAKECUDA_THREADS), the launcher seeds gf_sched_state on each of them,
// and a schedule point then, at a seeded choice of one in four, spins a
// little and yields the host thread: other GPU threads run inside the window
// between the read before the point and the write after it. Off (0) on the
// in-order schedule.
inline thread_local unsigned long long gf_sched_state = 0;
inline void gf_sched_point() {
    unsigned long long x = gf_sched_state;
    if (!x) return;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    gf_sched_state = x;
    if ((x & 3) != 0) return;
    for (volatile int i = 0; i < 64; i = i + 1) {
    }
    std::this_thread::yield();
}
#define GF_SCHED() gf_sched_point()

#endif
