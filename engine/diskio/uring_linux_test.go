package diskio

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFixedBuffers: io_uring readers read the same rows with the rings'
// registered buffers (requests up to fixedSlot bytes) as without them
// (every request into the pool's buffers, as when registering fails), direct
// and buffered, with requests that fit a fixed slot and requests that do not
// in one batch.
func TestFixedBuffers(t *testing.T) {
	path, data := writeFile(t, 3<<20)
	for _, without := range []bool{false, true} {
		for _, buffered := range []bool{false, true} {
			noFixed = without
			r := open(t, path, Options{Backend: URing, Buffered: buffered, QueueDepth: 8})
			noFixed = false
			if without {
				require.Nil(t, r.rings[0].fixed)
			} else {
				t.Logf("registered: %d bytes (buffered %v)", len(r.rings[0].fixed), buffered)
			}
			rnd := rand.New(rand.NewPCG(5, 6))
			for _, rb := range []int{100, 3000, 20000} { // one page, two, more than a slot
				ids := make([]int64, 300)
				for i := range ids {
					ids[i] = rnd.Int64N(int64(len(data) / rb))
				}
				dst := make([]byte, len(ids)*rb)
				_, err := r.ReadRows(dst, ids, rb, 0)
				require.NoError(t, err)
				for i, id := range ids {
					require.Equal(t, data[int(id)*rb:int(id+1)*rb], dst[i*rb:(i+1)*rb], "without %v buffered %v rb %d row %d", without, buffered, rb, i)
				}
			}
		}
	}
}
