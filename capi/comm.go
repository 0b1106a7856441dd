package main

/*
#include <stdlib.h>
#include "graphferry.h"
#include "shim.h"

// The host's callbacks, called through these because Go cannot call a C
// function pointer. The table is passed by pointer (to its copy in C
// memory, cTable), never by value: its user field is the caller's (any
// value, a small integer too), which Go must never hold in a pointer-typed
// slot of a goroutine stack (copying a stack that holds one below 4096 is
// a fatal error).
static inline int gf__comm_exchange_sizes(const gf_comm *c, const int64_t *send, int64_t *recv) {
  return c->exchange_sizes(c->user, send, recv);
}
// comm.c: exchange blocks and the call of all_to_all or all_to_all_dl.
void *gf__xblock_new(size_t n);
void gf__xblock_release(void *p);
int gf__comm_all_to_all(const gf_comm *c, void *p, int32_t n, int64_t send_total, int64_t recv_total);
static inline const char *gf__comm_errmsg(const gf_comm *c) {
  return c->errmsg != NULL ? c->errmsg(c->user) : NULL;
}
static inline int gf__comm_send(const gf_comm *c, int32_t to, const void *msg, int64_t size) {
  return c->send(c->user, to, msg, size);
}
static inline int gf__comm_recv(const gf_comm *c, int32_t from, void *buf, int64_t capacity, int64_t *size) {
  return c->recv(c->user, from, buf, capacity, size);
}
*/
import "C"

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/coordinator"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/distributed"
)

// maxCommSize bounds comm->size (a sanity check on the caller's struct).
const maxCommSize = 1 << 20

// maxCommTimeoutMs bounds comm->timeout_ms (a year: larger is a mistake).
const maxCommTimeoutMs = 365 * 24 * 3600 * 1000

// hostCall runs call, one host callback, on a goroutine of its own and
// waits for it or for ctx, whichever comes first. ok is false when ctx
// ended the wait (its cause is err): the callback is left to return on its
// own, and release runs after it has (its buffers stay valid until then).
// When ok is true, the caller reads what the callback wrote and calls
// release itself. hostCall returns only once the callback has started, so
// that no callback starts after the close that ended the wait returned.
// With a ctx that is never done, it calls the callback directly.
func hostCall(ctx context.Context, call func() C.int, release func()) (rc C.int, ok bool, err error) {
	if ctx.Done() == nil {
		return call(), true, nil
	}
	if err := context.Cause(ctx); err != nil {
		release()
		return 0, false, err
	}
	var mu sync.Mutex
	abandoned := false
	started := make(chan struct{})
	done := make(chan C.int, 1)
	go func() {
		close(started)
		rc := call()
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			release()
			return
		}
		done <- rc
	}()
	<-started
	select {
	case rc := <-done:
		return rc, true, nil
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case rc := <-done: // it returned meanwhile: its answer wins
		return rc, true, nil
	default:
	}
	abandoned = true
	return 0, false, context.Cause(ctx)
}

// cExchanger is a comm.Exchanger over a host's gf_comm. Every buffer it
// passes to the host is C memory, filled from and copied back into Go
// memory around the call, so the host never sees a Go pointer. A callback
// still running when its ctx ends (the communicator's time-out, the loader
// closed) is left to return on its own, and frees its buffers then (an
// exchange's block lives on while all_to_all_dl's tensors do); no Go
// memory is touched after the wait ended.
type cExchanger struct {
	c    *C.gf_comm // a copy of the caller's table in C memory (cTable)
	size int
}

// hostError turns a callback's non-zero status into an error with the
// host's message.
func (x *cExchanger) hostError(callback string, rc C.int) error {
	msg := ""
	if p := C.gf__comm_errmsg(x.c); p != nil {
		msg = C.GoString(p)
	}
	runtime.KeepAlive(x)
	if msg == "" {
		msg = "(no message: errmsg is NULL or returned none)"
	}
	return fmt.Errorf("gf_comm.%s returned %d: %s", callback, int(rc), msg)
}

func (x *cExchanger) ExchangeSizes(ctx context.Context, send, recv []int64) error {
	n := x.size
	p := C.malloc(C.size_t(16 * n))
	if p == nil {
		return fmt.Errorf("out of memory for %d sizes", 2*n)
	}
	buf := unsafe.Slice((*int64)(p), 2*n)
	copy(buf, send)
	clear(buf[n:])
	rc, ok, err := hostCall(ctx, func() C.int {
		defer runtime.KeepAlive(x)
		return C.gf__comm_exchange_sizes(x.c, (*C.int64_t)(p), (*C.int64_t)(unsafe.Add(p, 8*n)))
	}, func() { C.free(p) })
	if !ok {
		return err
	}
	defer C.free(p)
	if rc != 0 {
		return x.hostError("exchange_sizes", rc)
	}
	copy(recv, buf[n:])
	return nil
}

// exchangeBlock is the size of an exchange's block past its header
// (comm.c's gf__xblock) for n ranks and total bytes of messages: send and
// recv pointers, send and recv sizes, then the messages.
func exchangeBlock(n, total int) int { return 4*8*n + total }

// Exchange moves the bytes with one copy each way (counting the copies
// the library and the host make, not the transport's own): send[j] (Go
// memory) is copied once into the C block, which the host's all_to_all_dl
// takes as a DLPack tensor and hands to its transport as it is
// (TorchComm: torch.distributed reads it in place); the transport writes
// the answer into the block's recv tensor in place, and it is copied once
// out into recv[j]. (The host's all_to_all gets pointers into the same
// block: what it copies is its own.)
func (x *cExchanger) Exchange(ctx context.Context, send, recv [][]byte) error {
	n := x.size
	sendTotal, recvTotal := 0, 0
	for j := range n {
		sendTotal += len(send[j])
		recvTotal += len(recv[j])
	}
	head := exchangeBlock(n, 0)
	p := C.gf__xblock_new(C.size_t(exchangeBlock(n, sendTotal+recvTotal)))
	if p == nil {
		return fmt.Errorf("out of memory for %d bytes of messages", sendTotal+recvTotal)
	}
	block := unsafe.Slice((*byte)(p), head+sendTotal+recvTotal)
	// The pointers are written as integers: a Go pointer store into C
	// memory runs the collector's write barrier on the word it overwrites,
	// and a fresh malloc block holds leftovers that may look like Go heap
	// addresses (the collector then dies with a bad or freed pointer).
	ptrs := unsafe.Slice((*uintptr)(p), 2*n)
	sizes := unsafe.Slice((*int64)(unsafe.Pointer(&block[2*8*n])), 2*n)
	off := head
	for j := range 2 * n {
		b := recv[j%n]
		if j < n {
			b = send[j]
			copy(block[off:], b)
		}
		ptrs[j], sizes[j] = 0, int64(len(b))
		if len(b) > 0 {
			ptrs[j] = uintptr(unsafe.Pointer(&block[off]))
		}
		off += len(b)
	}
	rc, ok, err := hostCall(ctx, func() C.int {
		defer runtime.KeepAlive(x)
		return C.gf__comm_all_to_all(x.c, p, C.int32_t(n), C.int64_t(sendTotal), C.int64_t(recvTotal))
	}, func() { C.gf__xblock_release(p) })
	if !ok {
		return err
	}
	defer C.gf__xblock_release(p)
	if rc != 0 {
		if x.c.all_to_all_dl != nil {
			return x.hostError("all_to_all_dl", rc)
		}
		return x.hostError("all_to_all", rc)
	}
	off = head + sendTotal
	for j := range n {
		off += copy(recv[j], block[off:])
	}
	return nil
}

// cTransport is a coordinator.Transport over a host's gf_comm send and
// recv. Each message goes through C memory: copied in before send, out
// after recv. Both run the host's call as hostCall does: a cancelled ctx
// returns at once and the call finishes on its own (a received message is
// then dropped). A send that has not returned within timeout (> 0) fails,
// naming the rank it was for.
type cTransport struct {
	x       *cExchanger
	timeout time.Duration
}

func (t cTransport) Send(ctx context.Context, to int, msg []byte) error {
	p := C.malloc(C.size_t(max(len(msg), 1)))
	if p == nil {
		return fmt.Errorf("out of memory for a %d-byte message", len(msg))
	}
	copy(unsafe.Slice((*byte)(p), len(msg)), msg)
	if t.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t.timeout,
			fmt.Errorf("gf_comm.send to rank %d did not return within the time-out (%v)", to, t.timeout))
		defer cancel()
	}
	rc, ok, err := hostCall(ctx, func() C.int {
		defer runtime.KeepAlive(t.x)
		return C.gf__comm_send(t.x.c, C.int32_t(to), p, C.int64_t(len(msg)))
	}, func() { C.free(p) })
	if !ok {
		return err
	}
	C.free(p)
	if rc != 0 {
		return t.x.hostError("send", rc)
	}
	return nil
}

func (t cTransport) Recv(ctx context.Context, from int) ([]byte, error) {
	p := C.malloc(C.size_t(coordinator.MaxMessageSize + 8))
	if p == nil {
		return nil, fmt.Errorf("out of memory for a message buffer")
	}
	size := (*C.int64_t)(unsafe.Add(p, coordinator.MaxMessageSize))
	*size = -1
	rc, ok, err := hostCall(ctx, func() C.int {
		defer runtime.KeepAlive(t.x)
		return C.gf__comm_recv(t.x.c, C.int32_t(from), p, C.int64_t(coordinator.MaxMessageSize), size)
	}, func() { C.free(p) })
	if !ok {
		return nil, err
	}
	defer C.free(p)
	if rc != 0 {
		return nil, t.x.hostError("recv", rc)
	}
	n := int64(*size)
	if n < 0 || n > coordinator.MaxMessageSize {
		return nil, fmt.Errorf("gf_comm.recv set *size = %d (want 0 to %d)", n, coordinator.MaxMessageSize)
	}
	return C.GoBytes(p, C.int(n)), nil
}

// hostComm validates the caller's gf_comm and returns a comm.Host over it,
// ordered by a CCC coordinator over its send and recv when it has them.
func hostComm(c *C.gf_comm) (comm.Comm, error) {
	if c == nil {
		return nil, errorf(gfEInval, "comm is NULL")
	}
	// Only the caller's struct_size bytes are read (an older header's table
	// ends before timeout_ms, which then reads as 0).
	c, err := readOptions(c, "comm", commLayout)
	if err != nil {
		return nil, err
	}
	ms := int64(c.timeout_ms)
	if ms < 0 || ms > maxCommTimeoutMs {
		return nil, errorf(gfEInval, "comm->timeout_ms = %d is out of range [0, %d] (0: no time-out)", ms, int64(maxCommTimeoutMs))
	}
	timeout := time.Duration(ms) * time.Millisecond
	if c.exchange_sizes == nil || (c.all_to_all == nil && c.all_to_all_dl == nil) {
		return nil, errorf(gfEInval, "comm->exchange_sizes and comm->all_to_all (or all_to_all_dl) must not be NULL")
	}
	if c.size < 1 || c.size > maxCommSize {
		return nil, errorf(gfEInval, "comm->size = %d is out of range [1, %d]", int(c.size), maxCommSize)
	}
	if c.rank < 0 || c.rank >= c.size {
		return nil, errorf(gfEInval, "comm->rank = %d is out of range [0, %d)", int(c.rank), int(c.size))
	}
	if (c.send == nil) != (c.recv == nil) {
		return nil, errorf(gfEInval, "comm->send and comm->recv must be both set or both NULL")
	}
	x := &cExchanger{size: int(c.size)}
	if x.c, err = cTable(x, c); err != nil {
		return nil, err
	}
	h, err := comm.NewHostWith(int(c.rank), int(c.size), x, comm.HostOptions{Timeout: timeout})
	if err != nil {
		return nil, errorf(gfEInval, "%v", err)
	}
	if c.send == nil || c.size == 1 {
		return h, nil
	}
	cfg := coordinator.Config{Rank: int(c.rank), Size: int(c.size), Transport: cTransport{x: x, timeout: timeout}}
	if timeout > 0 {
		cfg.Timeout = timeout // an exchange some rank does not register within it names that rank
	}
	coord, err := coordinator.New(cfg)
	if err != nil {
		return nil, errorf(gfEInval, "%v", err)
	}
	cc, err := distributed.CoordinatedComm(h, coord)
	if err != nil {
		coord.Close()
		return nil, err
	}
	return cc, nil
}

//export gfgo_loader_open_comm
func gfgo_loader_open_comm(h C.uintptr_t, seedsT *C.DLTensor, o *C.gf_loader_options, c *C.gf_comm, out *C.uintptr_t) C.int {
	return call("gf_loader_open_comm", func() error {
		g, seeds, req, cfg, err := loaderArgs(h, seedsT, o, out, false)
		if err != nil {
			return err
		}
		return openCommLoader(c, cfg.allocator, "options->allocator", out, func(hc comm.Comm, a loaderAlloc) (*core.Loader, error) {
			return distributed.OpenLoader(g, hc, seeds, req, cfg.opts, a)
		})
	})
}

// openCommLoader opens a loader over the host's communicator c (last: with
// send and recv it starts the coordinator's threads) and the allocator p
// (named arg), and puts its handle in *out; the communicator and the
// allocator are released again if open fails.
func openCommLoader(c *C.gf_comm, p *C.gf_allocator, arg string, out *C.uintptr_t, open func(comm.Comm, loaderAlloc) (*core.Loader, error)) error {
	a, err := readAllocator(p, arg)
	if err != nil {
		return err
	}
	hc, err := hostComm(c)
	if err != nil {
		a.release()
		return err
	}
	l, err := open(hc, a)
	if err != nil {
		if cl, ok := hc.(io.Closer); ok {
			cl.Close()
		}
		a.release()
		return err
	}
	putLoader(out, l, a)
	return nil
}
