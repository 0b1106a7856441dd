//go:build gftest

package main

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/graphferry/graphferry/engine/gctest"
	"github.com/stretchr/testify/require"
)

// The exchange's table of message pointers is C memory written by Go: as
// integers, so that no Go pointer store runs the collector's write barrier
// on a word malloc left there. With pointer stores (ptrs[j] = nil, then
// unsafe.Pointer(&block[off])) a collection's mark phase took that word for
// a Go pointer and the process died ("found bad pointer in Go heap"): here
// the thread's malloc blocks of the exchange's size hold a pointer into the
// unused tail of a live large object's span before each of many exchanges
// while collections run back to back. A regression kills the test binary
// with the runtime's fatal error.
func TestCommExchangeUnderCollection(t *testing.T) {
	const ranks = 2
	x := loopbackExchanger(ranks)
	send := [][]byte{[]byte("to rank zero"), []byte("to rank one!")}
	bad, live := gctest.BadPointer()
	// Exchange's block: send and recv pointers and sizes, then the data.
	block := 4*8*ranks + 2*(len(send[0])+len(send[1]))
	defer gctest.Collect()()
	runtime.LockOSThread() // the scribbled blocks are this thread's
	defer runtime.UnlockOSThread()
	for i, start := 0, time.Now(); i < 500 || time.Since(start) < time.Second; i++ {
		scribbleMalloc(block, bad, 4)
		recv := [][]byte{make([]byte, len(send[0])), make([]byte, len(send[1]))}
		require.NoError(t, x.Exchange(context.Background(), send, recv))
		require.Equal(t, send, recv)
	}
	runtime.KeepAlive(live)
}
