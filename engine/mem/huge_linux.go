package mem

import "syscall"

// Linux madvise advice values (not all are in package syscall).
const (
	madvHugepage = 14 // MADV_HUGEPAGE: fault in huge pages from now on
	madvCollapse = 25 // MADV_COLLAPSE (Linux 6.1+): collapse what is there now
)

// adviseHuge: b is whole huge pages. Errors (EINVAL on older kernels,
// EAGAIN/ENOMEM when no huge page is free) leave the memory as it was.
func adviseHuge(b []byte) {
	_ = syscall.Madvise(b, madvHugepage)
	_ = syscall.Madvise(b, madvCollapse)
}
