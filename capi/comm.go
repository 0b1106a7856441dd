package main

/*
#include <stdlib.h>
#include "graphferry.h"
#include "shim.h"

// The host's callbacks, called through these because Go cannot call a C
// function pointer. The table is passed by value: it holds only C pointers.
static inline int gf__comm_exchange_sizes(gf_comm c, const int64_t *send, int64_t *recv) {
  return c.exchange_sizes(c.user, send, recv);
}
static inline int gf__comm_all_to_all(gf_comm c, void **send, const int64_t *send_sizes,
                               void **recv, const int64_t *recv_sizes) {
  return c.all_to_all(c.user, (const void *const *)send, send_sizes,
                      (void *const *)recv, recv_sizes);
}
static inline const char *gf__comm_errmsg(gf_comm c) {
  return c.errmsg != NULL ? c.errmsg(c.user) : NULL;
}
static inline int gf__comm_send(gf_comm c, int32_t to, const void *msg, int64_t size) {
  return c.send(c.user, to, msg, size);
}
static inline int gf__comm_recv(gf_comm c, int32_t from, void *buf, int64_t capacity, int64_t *size) {
  return c.recv(c.user, from, buf, capacity, size);
}
*/
import "C"

import (
	"context"
	"fmt"
	"io"
	"unsafe"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/coordinator"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/distributed"
)

// maxCommSize bounds comm->size (a sanity check on the caller's struct).
const maxCommSize = 1 << 20

// cExchanger is a comm.Exchanger over a host's gf_comm. Every buffer it
// passes to the host is C memory from malloc, filled from and copied back
// into Go memory around the call, so the host never sees a Go pointer.
type cExchanger struct {
	c    C.gf_comm // a copy of the caller's table (C pointers only)
	size int
}

// hostError turns a callback's non-zero status into an error with the
// host's message.
func (x *cExchanger) hostError(callback string, rc C.int) error {
	msg := ""
	if p := C.gf__comm_errmsg(x.c); p != nil {
		msg = C.GoString(p)
	}
	if msg == "" {
		msg = "(no message: errmsg is NULL or returned none)"
	}
	return fmt.Errorf("gf_comm.%s returned %d: %s", callback, int(rc), msg)
}

func (x *cExchanger) ExchangeSizes(send, recv []int64) error {
	n := x.size
	p := C.malloc(C.size_t(16 * n))
	if p == nil {
		return fmt.Errorf("out of memory for %d sizes", 2*n)
	}
	defer C.free(p)
	buf := unsafe.Slice((*int64)(p), 2*n)
	copy(buf, send)
	clear(buf[n:])
	rc := C.gf__comm_exchange_sizes(x.c, (*C.int64_t)(p), (*C.int64_t)(unsafe.Pointer(&buf[n])))
	if rc != 0 {
		return x.hostError("exchange_sizes", rc)
	}
	copy(recv, buf[n:])
	return nil
}

func (x *cExchanger) Exchange(send, recv [][]byte) error {
	n := x.size
	total := 0
	for j := range n {
		total += len(send[j]) + len(recv[j])
	}
	// One block: send and recv pointers, send and recv sizes, then data.
	head := 4 * 8 * n
	p := C.malloc(C.size_t(head + total))
	if p == nil {
		return fmt.Errorf("out of memory for %d bytes of messages", total)
	}
	defer C.free(p)
	block := unsafe.Slice((*byte)(p), head+total)
	ptrs := unsafe.Slice((*unsafe.Pointer)(p), 2*n)
	sizes := unsafe.Slice((*int64)(unsafe.Pointer(&block[2*8*n])), 2*n)
	off := head
	for j := range n {
		ptrs[j], ptrs[n+j] = nil, nil
		sizes[j], sizes[n+j] = int64(len(send[j])), int64(len(recv[j]))
		if len(send[j]) > 0 {
			ptrs[j] = unsafe.Pointer(&block[off])
			off += copy(block[off:], send[j])
		}
	}
	recvOff := make([]int, n)
	for j := range n {
		recvOff[j] = off
		if len(recv[j]) > 0 {
			ptrs[n+j] = unsafe.Pointer(&block[off])
			off += len(recv[j])
		}
	}
	rc := C.gf__comm_all_to_all(x.c, (*unsafe.Pointer)(p), (*C.int64_t)(unsafe.Pointer(&sizes[0])),
		(*unsafe.Pointer)(unsafe.Pointer(&ptrs[n])), (*C.int64_t)(unsafe.Pointer(&sizes[n])))
	if rc != 0 {
		return x.hostError("all_to_all", rc)
	}
	for j := range n {
		copy(recv[j], block[recvOff[j]:recvOff[j]+len(recv[j])])
	}
	return nil
}

// cTransport is a coordinator.Transport over a host's gf_comm send and recv. Each
// message goes through C memory: copied in before send, out after recv.
type cTransport struct{ x *cExchanger }

func (t cTransport) Send(ctx context.Context, to int, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := C.malloc(C.size_t(max(len(msg), 1)))
	if p == nil {
		return fmt.Errorf("out of memory for a %d-byte message", len(msg))
	}
	defer C.free(p)
	copy(unsafe.Slice((*byte)(p), len(msg)), msg)
	if rc := C.gf__comm_send(t.x.c, C.int32_t(to), p, C.int64_t(len(msg))); rc != 0 {
		return t.x.hostError("send", rc)
	}
	return nil
}

// Recv calls the host's recv on a goroutine of its own, so that a
// cancelled ctx returns at once (the host's call cannot be interrupted: it
// finishes on its own, and its message is dropped).
func (t cTransport) Recv(ctx context.Context, from int) ([]byte, error) {
	type result struct {
		msg []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		p := C.malloc(C.size_t(coordinator.MaxMessageSize + 8))
		if p == nil {
			done <- result{err: fmt.Errorf("out of memory for a message buffer")}
			return
		}
		defer C.free(p)
		size := (*C.int64_t)(unsafe.Add(p, coordinator.MaxMessageSize))
		*size = -1
		if rc := C.gf__comm_recv(t.x.c, C.int32_t(from), p, C.int64_t(coordinator.MaxMessageSize), size); rc != 0 {
			done <- result{err: t.x.hostError("recv", rc)}
			return
		}
		n := int64(*size)
		if n < 0 || n > coordinator.MaxMessageSize {
			done <- result{err: fmt.Errorf("gf_comm.recv set *size = %d (want 0 to %d)", n, coordinator.MaxMessageSize)}
			return
		}
		done <- result{msg: C.GoBytes(p, C.int(n))}
	}()
	select {
	case r := <-done:
		return r.msg, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// hostComm validates the caller's gf_comm and returns a comm.Host over it,
// ordered by a CCC coordinator over its send and recv when it has them.
func hostComm(c *C.gf_comm) (comm.Comm, error) {
	if c == nil {
		return nil, errorf(gfEInval, "comm is NULL")
	}
	if size := uintptr(c.struct_size); size != unsafe.Sizeof(C.gf_comm{}) {
		return nil, errorf(gfEInval, "comm->struct_size = %d (want sizeof(gf_comm) = %d)", size, unsafe.Sizeof(C.gf_comm{}))
	}
	if c.exchange_sizes == nil || c.all_to_all == nil {
		return nil, errorf(gfEInval, "comm->exchange_sizes and comm->all_to_all must not be NULL")
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
	x := &cExchanger{c: *c, size: int(c.size)}
	h, err := comm.NewHost(int(c.rank), int(c.size), x)
	if err != nil {
		return nil, errorf(gfEInval, "%v", err)
	}
	if c.send == nil || c.size == 1 {
		return h, nil
	}
	coord, err := coordinator.New(coordinator.Config{Rank: int(c.rank), Size: int(c.size), Transport: cTransport{x: x}})
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
		g, seeds, req, lopt, err := loaderArgs(h, seedsT, o, out)
		if err != nil {
			return err
		}
		return openCommLoader(c, o, out, func(hc comm.Comm, a loaderAlloc) (*core.Loader, error) {
			return distributed.OpenLoader(g, hc, seeds, req, lopt, a)
		})
	})
}

// openCommLoader opens a loader over the host's communicator c (last: with
// send and recv it starts the coordinator's threads) and the allocator of
// options o, and puts its handle in *out; the communicator and the
// allocator are released again if open fails.
func openCommLoader(c *C.gf_comm, o *C.gf_loader_options, out *C.uintptr_t, open func(comm.Comm, loaderAlloc) (*core.Loader, error)) error {
	a, err := hostAllocator(o, "options")
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
