// Package comm is the engine's collective communication layer: an all-to-all
// exchange of variable-sized buffers among a fixed set of ranks.
//
// The collective sampling primitive (DSP §4) needs exactly one collective:
// in each CSP round every rank sends one buffer to every rank (possibly
// empty) and receives one from every rank. Comm captures only that, so that
// the in-process implementation here (Local) can be joined by others behind
// the same interface: one over a host's callbacks through the C API (a
// torch.distributed process group driven from Python), and one over NCCL
// for device memory.
//
// # Buffers, memory kinds and streams
//
// AllToAll moves mem.Buffers, which carry the kind of memory they live in
// (host, pinned host, or a device's), and takes a mem.Stream: a device
// implementation runs the exchange in that stream's order, host ones ignore
// it. Each implementation moves the kinds it can and refuses the others with
// an error (Local: host and pinned memory). A host stage reads what it
// receives through Buffer.Bytes; a device stage keeps its messages on the
// device.
//
// # Ranks and processes
//
// LocalRanks says which ranks the calling process runs. With Local, one
// process runs every rank as goroutines, and a caller runs each rank of each
// collective concurrently. With one process per rank (torch.distributed,
// launched by torchrun) LocalRanks is that process's single rank: the caller
// runs only it, and the other ranks' calls come from the other processes.
// Code above Comm (engine/sample's runtime) is written for both.
//
// Dup gives an independent communicator over the same ranks
// (MPI_Comm_dup): two stages that exchange concurrently, such as the
// pipeline's sampler workers, each use their own so that their rounds never
// pair up with each other's.
//
// # Local
//
// Local pairs the k-th call of every rank into round k. A round completes
// when all ranks have arrived; each rank then reads its column of the
// send matrix. Buffers are not copied: recv[j] aliases the buffer rank j
// passed. The ownership rule that makes this safe without copies is part of
// the Comm contract (see AllToAll).
//
// Cancellation is collective: if a rank's context is cancelled (or a rank
// passes invalid arguments, such as a device buffer), that rank's call
// returns the error and the Local is aborted — every pending and every later
// call on it, by any rank, returns an error wrapping ErrAborted. A Local is
// never reused after an abort; build a new one (Dup works on an aborted
// Local).
//
// It imports only errs and mem (engine/layering_test.go); what orders the exchanges of
// concurrent stages over one Host is engine/coordinator's.
package comm
