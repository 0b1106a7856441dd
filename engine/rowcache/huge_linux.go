package rowcache

import "syscall"

// adviseHuge asks the kernel to back the rows with transparent huge pages
// (where it is set to "madvise", as commonly): lookups and inserts touch
// rows at random across the cache, and with 4 KiB pages most of them miss
// the TLB. Advice only: the cache works the same without it.
func adviseHuge(data []byte) { _ = syscall.Madvise(data, syscall.MADV_HUGEPAGE) }
