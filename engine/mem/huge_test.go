package mem

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// AdviseHuge is advice: whatever the system does, the contents stay, for
// slices of any length and alignment, on every platform. On Linux,
// huge_linux_test.go also checks which bytes were advised.
func TestAdviseHugeKeepsContents(t *testing.T) {
	for _, n := range []int{0, 1, 1000, hugePage/4 - 3, hugePage, 3*hugePage + 7} {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(i*7 + 1)
		}
		AdviseHuge(s)
		if n > 1 {
			AdviseHuge(s[1 : n-1]) // unaligned start and end
		}
		for i, x := range s {
			if x != int32(i*7+1) {
				require.Failf(t, "content changed", "n=%d: s[%d] = %d", n, i, x)
			}
		}
	}
	AdviseHuge([]struct{}(nil))
	AdviseHuge(make([]struct{}, 10)) // zero-size elements
}
