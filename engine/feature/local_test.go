package feature

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/mem"
)

func TestSetLocal(t *testing.T) {
	s := NewStore(5)
	defer s.Close()
	local := mem.Tensor{DType: mem.Int32, Shape: []int64{2}, Data: mem.Bytes([]int32{7, 8})}
	require.ErrorContains(t, s.Set("paper/x", local, nil), "has 2 rows (Shape[0]), want the store's 5 nodes")
	released := 0
	require.NoError(t, s.SetLocal("paper/x", local, func() { released++ }))
	got, ok := s.Get("paper/x")
	require.True(t, ok)
	require.Equal(t, local, got)
	require.True(t, s.IsLocal("paper/x"))
	// Gathering by node id would read the wrong rows (ids 0 and 1 are
	// not the type's nodes 0 and 1): refused, even for ids in range.
	require.ErrorContains(t, s.Gather("paper/x", make([]byte, 4), []int64{1}, 1), "cannot be gathered by node id")
	// Replacing it with a global array makes it gatherable again.
	require.NoError(t, s.Set("paper/x", mem.Tensor{DType: mem.Int32, Shape: []int64{5}, Data: make([]byte, 20)}, nil))
	require.Equal(t, 1, released)
	require.False(t, s.IsLocal("paper/x"))
	require.NoError(t, s.Gather("paper/x", make([]byte, 4), []int64{1}, 1))
}
