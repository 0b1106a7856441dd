// Package diskio reads rows of a file with batched direct reads: the disk
// tier of node data. A Reader opens the file with O_DIRECT (bypassing the
// page cache; aligned offsets, lengths and buffers) where the file system
// allows it, and reads a batch of rows by sorting them by offset,
// coalescing neighbouring rows into one request (up to MaxRequest bytes)
// and keeping QueueDepth requests in flight:
//
//   - io_uring (Linux 5.6 and later, driven by raw system calls: one ring
//     per concurrent batch, the calling goroutine submitting and reaping;
//     one io_uring_enter submits every request whose slot freed and waits
//     for the next completion), where the kernel allows it. Each ring
//     registers a buffer of 16 KiB per slot and reads requests that fit
//     into it (READ_FIXED: the kernel does not pin the pages per read),
//     and is set up with COOP_TASKRUN where the kernel has it;
//   - otherwise a pool of pread workers (QueueDepth goroutines, each with
//     one request in flight), the portable fallback, which the tests run
//     everywhere beside io_uring.
//
// Request buffers are anonymous memory maps (page aligned, off the Go
// heap), reused between batches; ReadRowsAt copies each row from its
// request straight to its place in the caller's buffer (the disk tier
// reads a batch's cache misses into their rows of the batch). A read that
// comes back short of a row's
// bytes (the file was truncated while open) is a *ShortReadError.
//
// It imports errs only (engine/layering_test.go).
package diskio
