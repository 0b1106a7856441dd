//go:build gftest

package main

/*
#cgo CFLAGS: -I${SRCDIR}/../tests/c
#include <string.h>
#include "graphferry.h"
#include "scribble.h"

// A loopback communicator for the Go tests: rank 0 of a group of
// gf__loop_n ranks whose messages to rank j come back as rank j's to it
// (recv[j] = send[j]), so one process stands for the group.
static int gf__loop_n;
static void gf__loop_let_go(void);
static int gf__loop_sizes(void *user, const int64_t *send, int64_t *recv) {
	memcpy(recv, send, sizeof(int64_t) * (size_t)*(int *)user);
	return 0;
}
static int gf__loop_all_to_all(void *user, const void *const *send, const int64_t *send_sizes, void *const *recv,
                               const int64_t *recv_sizes) {
	for (int j = 0; j < *(int *)user; j++) {
		if (send_sizes[j] != recv_sizes[j]) return 1;
		if (send_sizes[j] > 0) memcpy(recv[j], send[j], (size_t)send_sizes[j]);
	}
	return 0;
}
// all_to_all_dl of the loopback group: recv = send, after which the
// tensors are let go, or held (gf__loop_hold) until gf__loop_let_go;
// gf__loop_fail fails the exchange (status 7, nothing copied).
static int gf__loop_hold, gf__loop_fail;
static DLManagedTensor *gf__loop_held[2];
static int gf__loop_all_to_all_dl(void *user, DLManagedTensor *send, const int64_t *send_sizes, DLManagedTensor *recv,
                                  const int64_t *recv_sizes) {
	int64_t total = 0;
	for (int j = 0; j < *(int *)user; j++) {
		if (send_sizes[j] != recv_sizes[j]) return 1;
		total += send_sizes[j];
	}
	if (send->dl_tensor.ndim != 1 || send->dl_tensor.shape[0] != total || recv->dl_tensor.shape[0] != total) return 2;
	if (!gf__loop_fail) memcpy(recv->dl_tensor.data, send->dl_tensor.data, (size_t)total);
	gf__loop_held[0] = send;
	gf__loop_held[1] = recv;
	if (!gf__loop_hold) gf__loop_let_go();
	return gf__loop_fail ? 7 : 0;
}
static void gf__loop_let_go(void) {
	for (int k = 0; k < 2; k++) {
		if (gf__loop_held[k] != NULL) gf__loop_held[k]->deleter(gf__loop_held[k]);
		gf__loop_held[k] = NULL;
	}
}
static gf_comm gf__loop_comm(int32_t size) {
	gf_comm c;
	memset(&c, 0, sizeof c);
	gf__loop_n = size;
	c.struct_size = sizeof c;
	c.size = size;
	c.user = &gf__loop_n;
	c.exchange_sizes = gf__loop_sizes;
	c.all_to_all = gf__loop_all_to_all;
	return c;
}
static const char *gf__loop_errmsg(void *user) {
	(void)user;
	return "the loop failed";
}
static gf_comm gf__loop_comm_dl(int32_t size, int32_t hold, int32_t fail) {
	gf_comm c = gf__loop_comm(size);
	c.errmsg = gf__loop_errmsg;
	c.all_to_all = NULL;
	c.all_to_all_dl = gf__loop_all_to_all_dl;
	gf__loop_hold = hold;
	gf__loop_fail = fail;
	return c;
}
static DLManagedTensor *gf__loop_held_at(int k) { return gf__loop_held[k]; }
int64_t gf__xblock_live(void);
size_t gf__xblock_header(void);
*/
import "C"

// loopbackExchanger is the cExchanger of a loopback group of size ranks
// (gf__loop_comm): what rank 0 sends to rank j comes back from rank j.
func loopbackExchanger(size int) *cExchanger {
	return exchangerOf(C.gf__loop_comm(C.int32_t(size)))
}

// exchangerOf is the cExchanger of table c, as hostComm makes it.
func exchangerOf(c C.gf_comm) *cExchanger {
	x := &cExchanger{size: int(c.size)}
	var err error
	if x.c, err = cTable(x, &c); err != nil {
		panic(err)
	}
	return x
}

// scribbleMalloc leaves n freed blocks of size bytes holding the word w at
// the head of the calling OS thread's malloc free lists
// (tests/c/scribble.h): the thread must be locked for its next allocations
// to get them.
func scribbleMalloc(size int, w uintptr, n int) {
	C.gf_scribble_malloc(C.size_t(size), C.uintptr_t(w), C.int(n))
}

// loopbackDLExchanger is loopbackExchanger whose host takes the messages
// as DLPack tensors (all_to_all_dl); hold keeps them past the call, until
// loopLetGo; fail fails every exchange.
func loopbackDLExchanger(size int, hold, fail bool) *cExchanger {
	return exchangerOf(C.gf__loop_comm_dl(C.int32_t(size), cBool(hold), cBool(fail)))
}

// loopHeld returns the bytes of the tensors the loopback host holds (send,
// recv) and their data pointers.
func loopHeld() (bytes [2][]byte, ptrs [2]uintptr) {
	for k := range 2 {
		t := C.gf__loop_held_at(C.int(k))
		if t != nil {
			ptrs[k] = uintptr(t.dl_tensor.data)
			bytes[k] = C.GoBytes(t.dl_tensor.data, C.int(*t.dl_tensor.shape))
		}
	}
	return bytes, ptrs
}

// loopLetGo calls the deleters of the tensors the loopback host holds.
func loopLetGo() { C.gf__loop_let_go() }

// xblocksLive is the number of exchange blocks not yet freed.
func xblocksLive() int64 { return int64(C.gf__xblock_live()) }

// xblockHeader is the bytes an exchange block's malloc takes before
// exchangeBlock's.
func xblockHeader() int { return int(C.gf__xblock_header()) }
