//go:build gftest

package main

import (
	"context"
	"errors"
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
	// Exchange's block: its header, send and recv pointers and sizes, then the data.
	block := xblockHeader() + exchangeBlock(ranks, 2*(len(send[0])+len(send[1])))
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

// A host with all_to_all_dl gets the messages as two DLPack tensors over
// the exchange's C block, back to back, and owns them: the block lives on
// while the host holds them (the bytes it received still readable after
// the exchange returned, failed or was given up on) and goes when the last
// deleter and the library have let go.
func TestCommExchangeDLPack(t *testing.T) {
	send := [][]byte{[]byte("to rank zero"), {}, []byte("to two")}
	fresh := func() [][]byte { return [][]byte{make([]byte, 12), {}, make([]byte, 6)} }
	base := xblocksLive()

	// Let go at once: the answer is read, the block freed.
	recv := fresh()
	require.NoError(t, loopbackDLExchanger(3, false, false).Exchange(context.Background(), send, recv))
	require.Equal(t, send, recv)
	require.Equal(t, base, xblocksLive())

	// Held past the call: the tensors view the block in place, send then
	// recv back to back, and keep it.
	recv = fresh()
	require.NoError(t, loopbackDLExchanger(3, true, false).Exchange(context.Background(), send, recv))
	require.Equal(t, send, recv)
	require.Equal(t, base+1, xblocksLive())
	held, ptrs := loopHeld()
	require.Equal(t, []byte("to rank zeroto two"), held[0])
	require.Equal(t, held[0], held[1])
	require.Equal(t, ptrs[0]+18, ptrs[1])
	loopLetGo()
	require.Equal(t, base, xblocksLive())

	// A failure names the callback and the host's message; the block waits
	// for the deleters.
	err := loopbackDLExchanger(3, true, true).Exchange(context.Background(), send, fresh())
	require.ErrorContains(t, err, "gf_comm.all_to_all_dl returned 7: the loop failed")
	require.Equal(t, base+1, xblocksLive())
	loopLetGo()
	require.Equal(t, base, xblocksLive())

	// Given up on before the call: the library's reference goes, no call.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("closed"))
	err = loopbackDLExchanger(3, false, false).Exchange(ctx, send, fresh())
	require.ErrorContains(t, err, "closed")
	require.Equal(t, base, xblocksLive())
}
