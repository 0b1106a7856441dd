//go:build unix

package mem

import (
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Memory is off the Go heap only where marked: a marked mapping and its
// sub-slices are, a range reaching past it or Go-heap memory are not, and
// each mark is undone by its own function.
func TestOffHeapMarks(t *testing.T) {
	m, err := syscall.Mmap(-1, 0, 3*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	defer syscall.Munmap(m)
	a, b := m[:4096], m[4096:]
	heap := make([]byte, 4096)

	require.False(t, OffHeap(a), "nothing is marked yet")
	unmarkA := MarkOffHeap(a)
	require.True(t, OffHeap(a))
	require.True(t, OffHeap(a[100:200]))
	require.False(t, OffHeap(m[:4097]), "a range reaching past the marked one")
	require.False(t, OffHeap(b))
	require.False(t, OffHeap(heap))
	require.False(t, OffHeap(nil))
	require.False(t, OffHeap(a[:0]), "an empty slice is not off the heap")

	unmarkAgain := MarkOffHeap(a) // the same array marked twice
	unmarkA()
	require.True(t, OffHeap(a), "the second mark holds")
	unmarkAgain()
	unmarkAgain() // twice: nothing more
	require.False(t, OffHeap(a))
	MarkOffHeap(nil)() // marks nothing

	// Concurrent marks, queries and unmarks (go test -race).
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := m[i*512 : (i+1)*512]
			for range 100 {
				u := MarkOffHeap(s)
				if !OffHeap(s[1:]) {
					t.Error("a marked range is not off the heap")
				}
				u()
			}
		}()
	}
	wg.Wait()
	require.False(t, OffHeap(m))
}
