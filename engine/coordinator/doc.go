// Package coordinator orders the collective exchanges of the concurrent
// stages of a rank (a loader's sampler workers, its row exchange) under one
// leader rank, so that every rank starts them in the same order and they
// cannot deadlock. It is DSP's centralized communication coordination
// (CCC, DSP §5); its errors still read "ccc: ...".
//
// It imports only engine/errs: it knows nothing of what the exchanges
// carry. engine/distributed wraps a communicator with it
// (distributed.CoordinatedComm).
//
// # The problem
//
// Several stages of one rank run concurrently (the sampler workers, the
// loader, any stage that exchanges with other ranks), and each issues
// collective exchanges (all-to-alls) on its own communicator. A collective
// like NCCL's completes only when every rank has entered it, and while it
// waits it holds what it was given (a communication kernel keeps its SMs; a
// blocking host collective keeps its thread, a backend may serialize calls).
// If rank 0 starts stage A's exchange first and rank 1 starts stage B's
// first, each holds what the other needs to enter the other exchange: both
// wait forever (DSP's Figure 8).
//
// # The protocol
//
// Each exchange has an ID, (Stage, Seq), the same on every rank for the same
// logical exchange. A stage calls Coordinator.Run(ctx, id, exchange), which:
//
//  1. registers id as ready on this rank: a follower sends READY(id) to the
//     leader; the leader records its own registrations directly;
//  2. the leader counts, per id, which ranks registered it. When the last
//     rank has, the leader appends id to the launch order and sends
//     LAUNCH(id) to every follower, in that order (one FIFO link per
//     follower);
//  3. every rank, the leader included, starts the exchanges of the launch
//     order in sequence, at most Config.Window of them running at once
//     (default 1); Run returns when its exchange has.
//
// Only the launch of the collectives is ordered. Everything else a stage
// does (sampling, gathering features, the other stages) runs concurrently;
// a stage waiting in Run blocks only itself.
//
// The leader launches an exchange only once it is ready on every rank, not
// in the leader's own registration order as DSP does: a follower never
// waits for a launched exchange to become ready, and an exchange ready
// everywhere is never held up behind one that is not.
//
// # Why it is deadlock-free
//
// Let L be the launch order. Every rank starts the exchanges of L in the
// order of L, and an exchange is in L only if its stage is already waiting
// in Run on every rank, so reaching it in L is enough to start it.
//
// With Window 1 (the default), by induction on L: assume L[0..k-1] have
// completed on every rank. Then each rank starts L[k], holding nothing else
// (its previous exchange has completed), so every rank enters L[k] and it
// completes, whatever the collective holds while it waits. No rank ever
// holds one collective while waiting for another, which is the cycle of
// Figure 8.
//
// With Window w > 1, ranks start L[k] while up to w-1 earlier exchanges
// still run. This is deadlock-free only if the collectives in flight
// progress independently: an exchange that every rank has started completes
// whatever else runs (separate communicators with their own resources, as
// comm.Local's Dup gives; not a backend that serializes its calls or kernels
// that compete for the same SMs). Then, by the same induction, L[k] starts on
// every rank once enough earlier exchanges have completed, and completes.
// Goroutines started in L's order do not enter a shared resource in L's
// order, so over such a resource a window above 1 can deadlock; the tests
// show it does.
//
// What is not in L cannot deadlock the collectives: its exchange has not
// started anywhere and holds nothing. It can only wait forever if some rank
// never registers it, and that is detected:
//
//   - a stage at different Seq values on two ranks (rank 0 waits on #5,
//     rank 1 on #6) is a mismatch at once: a rank registers #6 only after #5
//     ran, and #5 runs only once every rank registered it;
//   - an exchange registered by some ranks but not by all within
//     Config.Timeout is a mismatch (the leader names the ranks that did not
//     register it: a rank that died or stopped exchanging); a follower
//     whose registered exchange the leader has not launched within three
//     time-outs gives the leader up (ErrPeerLost), for a leader that died
//     without its transport saying so;
//   - a rank that closes while an exchange it never registered is pending
//     elsewhere is a mismatch.
//
// Every rank then fails with ErrMismatch, naming the exchange and the ranks.
//
// # Failures
//
// The first failure on any rank stops the coordinator on every rank: an
// exchange that returned an error, a cancelled context, misuse (a stage with
// two exchanges outstanding, a Seq that does not increase), a mismatch, a
// lost peer or a protocol error. The rank where it happens sends FAIL to
// the leader, which relays it to the other followers; each rank then cancels
// the contexts of its exchanges in flight (so a collective blocked on the
// failed rank returns) and every Run returns the same *Error, which names the
// rank and what happened there and matches ErrFailed. A rank that dies sends
// nothing: its peers learn of it from their transport, which must report a
// dead peer within bounded time, and relay it the same way. Two message
// hops bound the time a failure takes to reach every rank.
//
// Close tells the peers goodbye (BYE) after the launch orders still queued;
// call it on each rank once its stages are done.
//
// # What a transport must provide
//
// Only ordered point-to-point messages between the leader and each
// follower, Send(to, msg) and Recv(from), every backend has them
// (torch.distributed send/recv, MPI, a socket, a C callback table). The
// messages are 14 bytes (a failure notice adds its text). See Transport for
// the exact requirements, and Mesh for the in-process implementation.
// The transport must not be the communicator the exchanges use, so that a
// control message never waits behind an exchange.
//
// # Switching it off
//
// With Config.Off, Run just calls the exchange (no messages, no ordering):
// for a single rank, and to show what happens without CCC.
package coordinator
