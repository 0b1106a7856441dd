// Package comm is the engine's collective communication layer: an all-to-all
// exchange of variable-sized byte buffers among a fixed set of ranks.
//
// The collective sampling primitive (DSP §4) needs exactly one collective:
// in each CSP round every rank sends one buffer to every rank (possibly
// empty) and receives one from every rank. Comm captures only that, so that
// the in-process implementation here (Local, ranks are goroutines of one
// process) can later be joined by torch.distributed and CUDA/NCCL
// implementations behind the same interface.
//
// # Local
//
// Local pairs the k-th call of every rank into round k. A round completes
// when all ranks have arrived; each rank then reads its column of the
// send matrix. Buffers are not copied: recv[j] aliases the slice rank j
// passed. The ownership rule that makes this safe without copies is part of
// the Comm contract (see AllToAll).
//
// Cancellation is collective: if a rank's context is cancelled (or a rank
// passes invalid arguments), that rank's call returns the error and the Local
// is aborted — every pending and every later call on it, by any rank, returns
// an error wrapping ErrAborted. A Local is never reused after an abort; build
// a new one.
package comm
