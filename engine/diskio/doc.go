// Package diskio reads rows of a file with batched direct reads: the disk
// tier of node data. A Reader opens the file with O_DIRECT (bypassing the
// page cache; aligned offsets, lengths and buffers) where the file system
// allows it, and reads a batch of rows by sorting them by offset,
// coalescing neighbouring rows into one request (up to MaxRequest bytes)
// and keeping QueueDepth requests in flight:
//
//   - io_uring (Linux 5.6 and later, driven by raw system calls: one ring
//     per concurrent batch, the calling goroutine submitting and reaping),
//     where the kernel allows it;
//   - otherwise a pool of pread workers (QueueDepth goroutines, each with
//     one request in flight), the portable fallback, which the tests run
//     everywhere beside io_uring.
//
// Request buffers are anonymous memory maps (page aligned, off the Go
// heap), reused between batches. A read that comes back short of a row's
// bytes (the file was truncated while open) is a *ShortReadError.
//
// It imports errs only (engine/layering_test.go).
package diskio
