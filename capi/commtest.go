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
*/
import "C"

// loopbackExchanger is the cExchanger of a loopback group of size ranks
// (gf__loop_comm): what rank 0 sends to rank j comes back from rank j.
func loopbackExchanger(size int) *cExchanger {
	return &cExchanger{c: C.gf__loop_comm(C.int32_t(size)), size: size}
}

// scribbleMalloc leaves n freed blocks of size bytes holding the word w at
// the head of the calling OS thread's malloc free lists
// (tests/c/scribble.h): the thread must be locked for its next allocations
// to get them.
func scribbleMalloc(size int, w uintptr, n int) {
	C.gf_scribble_malloc(C.size_t(size), C.uintptr_t(w), C.int(n))
}
