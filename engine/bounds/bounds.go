package bounds

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/graphferry/graphferry/engine/errs"
)

// ThreadsPerCore is how many threads a call may ask for per core of the
// host: more than the cores is allowed (a test on a small machine, I/O
// that waits), this many more is a mistake that would only cost memory.
const ThreadsPerCore = 64

// MinMaxThreads is the least MaxThreads, whatever the host.
const MinMaxThreads = 256

// MaxThreads returns the most threads a call may ask for:
// ThreadsPerCore per core of the host, at least MinMaxThreads.
func MaxThreads() int { return max(MinMaxThreads, ThreadsPerCore*runtime.NumCPU()) }

// Threads checks a thread (or worker) count n named what: <= 0 (the
// default) or at most MaxThreads.
func Threads(n int, what string) error {
	if m := MaxThreads(); n > m {
		return errs.Errorf(nil, "%s = %d is more than %d (%d for each of this host's %d cores)", what, n, m, ThreadsPerCore, runtime.NumCPU())
	}
	return nil
}

// Count checks a count n named what against the bound max, whose meaning
// is bound ("the epoch's batches", ...): 0 <= n <= max.
func Count(n, max int64, what, bound string) error {
	if n < 0 || n > max {
		return errs.Errorf(nil, "%s = %d is not in [0, %d] (%s)", what, n, max, bound)
	}
	return nil
}

// Fraction checks a fraction f named what: a number in (0, 1] (NaN and
// the infinities are not).
func Fraction(f float64, what string) error {
	if !(f > 0 && f <= 1) {
		return errs.Errorf(nil, "%s = %v is not in (0, 1]", what, f)
	}
	return nil
}

// Memory returns the bytes of memory this process may use: the least of
// the machine's physical memory and the limits of its memory cgroups
// (v1 memory.limit_in_bytes, v2 memory.max, of its group and every group
// above); 0 when none is known. A variable so that tests can lower it.
var Memory = func() uint64 {
	limitOnce.Do(func() { limit = memoryLimit() })
	return limit
}

var (
	limitOnce sync.Once
	limit     uint64
)

// Alloc refuses (errs.ErrNoMem) an allocation of need bytes for what that
// does not fit beside what the process holds: its resident set in Memory,
// and its address space in its RLIMIT_AS (ulimit -v), when it has one. Go's
// out-of-memory error is fatal, and a cgroup's limit kills the process, so
// sizes a caller passes are checked before they are allocated.
func Alloc(need uint64, what string) error {
	rss, vsize := usage()
	if total := Memory(); total > 0 {
		held := min(rss, total)
		if need > total-held {
			return errs.Errorf(errs.ErrNoMem, "%s needs %s, more than the %s this process may still use (%s of memory, %s of it in use)",
				what, Bytes(need), Bytes(total-held), Bytes(total), Bytes(held))
		}
	}
	if as := addressLimit(); as > 0 {
		held := min(vsize, as)
		if need > as-held {
			return errs.Errorf(errs.ErrNoMem, "%s needs %s, more than the %s of address space this process may still map (its limit, ulimit -v, is %s, %s of it mapped)",
				what, Bytes(need), Bytes(as-held), Bytes(as), Bytes(held))
		}
	}
	return nil
}

// Mul returns a*b, saturated at math.MaxUint64 (sizes to check with Alloc
// that may overflow).
func Mul(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

// Bytes writes n bytes in binary units ("1.5 GiB").
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n), "KMGTPE"
	i := -1
	for f >= unit && i < len(u)-1 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, u[i])
}

// memoryLimit is Memory's value: physical memory and cgroup limits.
func memoryLimit() uint64 {
	best := physicalMemory()
	take := func(v uint64) {
		if v > 0 && (best == 0 || v < best) {
			best = v
		}
	}
	raw, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return best
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root, file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			root, file = "/sys/fs/cgroup", "memory.max"
		case slicesContains(strings.Split(parts[1], ","), "memory"):
			root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		// The group's own limit and every one above it.
		for dir := filepath.Join(root, parts[2]); strings.HasPrefix(dir, root); dir = filepath.Dir(dir) {
			if b, err := os.ReadFile(filepath.Join(dir, file)); err == nil {
				if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
					take(v) // "max" (v2, no limit) does not parse
				}
			}
			if dir == root {
				break
			}
		}
	}
	return best
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// usage returns the process's resident set and address space in bytes
// (0 when unknown).
func usage() (rss, vsize uint64) {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(raw))
	if len(f) < 2 {
		return 0, 0
	}
	page := uint64(os.Getpagesize())
	v, _ := strconv.ParseUint(f[0], 10, 64)
	r, _ := strconv.ParseUint(f[1], 10, 64)
	return r * page, v * page
}
