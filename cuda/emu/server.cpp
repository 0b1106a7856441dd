// The kernel emulator: a process that owns "device" memory (host memory)
// and runs the kernels of cuda/kernels, compiled as plain C++, on request.
// The Go package's emulated device (cuda/emu_test.go) drives it over
// stdin/stdout with the same operations the CUDA device offers: allocate,
// free, copy in and out, memset, launch a kernel by name with 8-byte
// parameters. So the Go orchestration that runs on the GPU is tested here
// with the kernels' real code.
//
// Request: u32 op, then the op's fields. Reply: u32 status (0 = ok), then
// the op's result. Ops: 1 alloc(u64 bytes) -> u64 ptr; 2 free(u64 ptr);
// 3 write(u64 ptr, u64 n, n bytes); 4 read(u64 ptr, u64 n) -> n bytes;
// 5 memset(u64 ptr, u64 byte, u64 n); 6 launch(u32 len, name, u32 grid,
// u32 block, u32 nargs, nargs u64) ; 7 log(u64 n, n doubles) -> n doubles
// (gf_log, for its test against Go's math.Log); 8 quit; 9 map(u32 len,
// path, u64 n) -> u64 ptr: maps the file at path (n bytes, shared), which
// the client maps too: pinned host memory, read by the kernels in place
// and written by the client without copies; 10 unmap(u64 ptr, u64 n).
#include "kernels.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void readFull(void *p, std::size_t n) {
    if (n && std::fread(p, 1, n, stdin) != n) std::exit(0);  // the client went away
}
void writeFull(const void *p, std::size_t n) {
    if (n && std::fwrite(p, 1, n, stdout) != n) std::exit(1);
}
template <typename T>
T get() {
    T v;
    readFull(&v, sizeof v);
    return v;
}
template <typename T>
void put(T v) {
    writeFull(&v, sizeof v);
}

}  // namespace

int main() {
    for (;;) {
        unsigned op = get<unsigned>();
        switch (op) {
        case 1: {
            unsigned long long n = get<unsigned long long>();
            void *p = std::aligned_alloc(256, ((n + 255) / 256) * 256 + 256);
            put<unsigned>(p ? 0 : 1);
            put<unsigned long long>((unsigned long long)p);
            break;
        }
        case 2:
            std::free((void *)get<unsigned long long>());
            put<unsigned>(0);
            break;
        case 3: {
            unsigned long long p = get<unsigned long long>(), n = get<unsigned long long>();
            readFull((void *)p, n);
            put<unsigned>(0);
            break;
        }
        case 4: {
            unsigned long long p = get<unsigned long long>(), n = get<unsigned long long>();
            put<unsigned>(0);
            writeFull((void *)p, n);
            break;
        }
        case 5: {
            unsigned long long p = get<unsigned long long>(), b = get<unsigned long long>(), n = get<unsigned long long>();
            std::memset((void *)p, (int)b, n);
            put<unsigned>(0);
            break;
        }
        case 6: {
            unsigned len = get<unsigned>();
            std::string name(len, '\0');
            readFull(&name[0], len);
            unsigned grid = get<unsigned>(), block = get<unsigned>(), nargs = get<unsigned>();
            std::vector<unsigned long long> args(nargs);
            readFull(args.data(), nargs * 8ULL);
            // The emulator's schedule: every thread in order, one host thread.
            // Blocks of more than 1024 threads are refused, as by the device.
            if (block > 1024 || !gf_emu::launch(name, grid, block, args.data(), nargs)) {
                put<unsigned>(2);
                break;
            }
            put<unsigned>(0);
            break;
        }
        case 7: {
            unsigned long long n = get<unsigned long long>();
            std::vector<double> x(n);
            readFull(x.data(), n * 8);
            for (auto &v : x) v = gf_log(v);
            put<unsigned>(0);
            writeFull(x.data(), n * 8);
            break;
        }
        case 9: {
            unsigned len = get<unsigned>();
            std::string path(len, '\0');
            readFull(&path[0], len);
            unsigned long long n = get<unsigned long long>();
            void *p = MAP_FAILED;
            int fd = open(path.c_str(), O_RDWR);
            if (fd >= 0) {
                p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                close(fd);
            }
            put<unsigned>(p == MAP_FAILED ? 1 : 0);
            put<unsigned long long>(p == MAP_FAILED ? 0 : (unsigned long long)p);
            break;
        }
        case 10: {
            unsigned long long p = get<unsigned long long>(), n = get<unsigned long long>();
            put<unsigned>(munmap((void *)p, n) == 0 ? 0 : 1);
            break;
        }
        case 8:
            put<unsigned>(0);
            std::fflush(stdout);
            return 0;
        default:
            put<unsigned>(3);
            break;
        }
        std::fflush(stdout);
    }
}
