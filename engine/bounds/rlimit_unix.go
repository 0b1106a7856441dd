//go:build unix

package bounds

import "syscall"

// addressLimit returns the process's RLIMIT_AS (ulimit -v) in bytes, 0
// when it has none. Read at every call: a program may change it.
func addressLimit() uint64 {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &r) != nil || r.Cur >= 1<<62 { // RLIM_INFINITY
		return 0
	}
	return uint64(r.Cur)
}
