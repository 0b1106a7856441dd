package linkpred

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The expected lists are DGL 2.1's find_exclude_eids on the same inputs
// (recorded from DGL itself), duplicates and order included.
func TestExcludeMatchesDGL(t *testing.T) {
	seeds := []int64{4, 0, 0}
	require.Equal(t, []int64{4, 0, 0}, ExcludeSelf(seeds))

	got, err := ExcludeReverseID(seeds, Reverse{Map: []int64{3, 4, 5, 0, 1, 2}})
	require.NoError(t, err)
	require.Equal(t, []int64{4, 0, 0, 1, 3, 3}, got)

	// The half-swap layout is DGL's documented reverse_eids for a graph
	// built as cat([src, dst]) -> cat([dst, src]).
	got, err = ExcludeReverseID(seeds, Reverse{Half: 3})
	require.NoError(t, err)
	require.Equal(t, []int64{4, 0, 0, 1, 3, 3}, got)

	// Mapped values pass through unchecked, as in DGL.
	got, err = ExcludeReverseID([]int64{1}, Reverse{Map: []int64{0, -1}})
	require.NoError(t, err)
	require.Equal(t, []int64{1, -1}, got)

	got, err = ExcludeReverseID(nil, Reverse{Half: 3})
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestExcludeReverseIDErrors(t *testing.T) {
	_, err := ExcludeReverseID([]int64{1, 6}, Reverse{Half: 3})
	require.ErrorContains(t, err, "seed edge ids[1] = 6 is outside the reverse edge map (6 entries)")
	_, err = ExcludeReverseID([]int64{-1}, Reverse{Map: []int64{0}})
	require.ErrorContains(t, err, "seed edge ids[0] = -1")
	_, err = ExcludeReverseID([]int64{0}, Reverse{Map: []int64{0}, Half: 1})
	require.ErrorContains(t, err, "both a map (1 entries) and a half-swap layout (half = 1)")
	_, err = ExcludeReverseID([]int64{0}, Reverse{Half: -2})
	require.ErrorContains(t, err, "half = -2")
	_, err = ExcludeReverseID([]int64{0}, Reverse{Half: 1 << 62})
	require.ErrorContains(t, err, "half = 4611686018427387904 is too large")
	_, err = ExcludeReverseID([]int64{0}, Reverse{})
	require.ErrorContains(t, err, "outside the reverse edge map (0 entries)")
}

func TestExcludeReverseTypesMatchesDGL(t *testing.T) {
	sym := []TypeReverse{{"a", "b"}, {"b", "a"}}
	got, err := ExcludeReverseTypes([]TypedIDs{{"a", []int64{1, 0, 1}}}, sym)
	require.NoError(t, err)
	require.Equal(t, []TypedIDs{{"a", []int64{0, 1}}, {"b", []int64{1, 0, 1}}}, got)

	got, err = ExcludeReverseTypes([]TypedIDs{{"a", []int64{1}}, {"b", []int64{0, 0}}}, sym)
	require.NoError(t, err)
	require.Equal(t, []TypedIDs{{"a", []int64{0, 1}}, {"b", []int64{0, 1}}}, got)

	got, err = ExcludeReverseTypes([]TypedIDs{{"a", []int64{1}}, {"c", []int64{0}}}, []TypeReverse{{"c", "c"}, {"a", "b"}})
	require.NoError(t, err)
	require.Equal(t, []TypedIDs{{"a", []int64{1}}, {"c", []int64{0}}, {"b", []int64{1}}}, got)

	// A type without seeds contributes nothing.
	got, err = ExcludeReverseTypes([]TypedIDs{{"a", []int64{2}}}, []TypeReverse{{"x", "a"}})
	require.NoError(t, err)
	require.Equal(t, []TypedIDs{{"a", []int64{2}}}, got)

	_, err = ExcludeReverseTypes([]TypedIDs{{"a", nil}, {"a", nil}}, sym)
	require.ErrorContains(t, err, `seed edge type "a" is given twice (entry 1)`)
	_, err = ExcludeReverseTypes(nil, []TypeReverse{{"a", "b"}, {"a", "c"}})
	require.ErrorContains(t, err, `edge type "a" has two reverse types (entry 1)`)
}

// The inputs are not modified and the outputs do not alias them.
func TestExcludeCopies(t *testing.T) {
	seeds := []int64{2, 1}
	self := ExcludeSelf(seeds)
	self[0] = 9
	require.Equal(t, []int64{2, 1}, seeds)
	in := []TypedIDs{{"a", []int64{3, 1}}}
	out, err := ExcludeReverseTypes(in, []TypeReverse{{"a", "a"}})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 3}, out[0].IDs)
	require.Equal(t, []int64{3, 1}, in[0].IDs)
}
