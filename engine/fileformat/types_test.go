package fileformat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
)

func TestRelationIndex(t *testing.T) {
	ty, err := ParseTypes([]NodeType{{"a", 1}, {"b", 1}},
		[]EdgeType{{"a", "to", "b", 0}, {"b", "to", "a", 0}, {"a", "self", "a", 0}})
	require.NoError(t, err)
	assert.Equal(t, 0, ty.RelationIndex("a:to:b"))
	assert.Equal(t, 1, ty.RelationIndex("b:to:a"))
	assert.Equal(t, -1, ty.RelationIndex("to"), "ambiguous")
	assert.Equal(t, 2, ty.RelationIndex("self"))
	assert.Equal(t, -1, ty.RelationIndex("none"))
}

func FuzzParseTypesJSON(f *testing.F) {
	f.Add([]byte(`{"node_types":[{"name":"a","num_nodes":3},{"name":"b","num_nodes":2}],"edge_types":[{"src":"a","rel":"r","dst":"b","num_edges":4}]}`))
	f.Add([]byte(`{"node_types":[{"name":"a","num_nodes":9223372036854775807}],"edge_types":[]}`))
	f.Add([]byte(`{"node_types":[{"name":"a/b","num_nodes":1}]}`))
	f.Add([]byte(`{"node_types":[],"edge_types":[{"src":"x"}]}`))
	f.Add([]byte(`{"node_types":[{"name":"a","num_nodes":1}],"extra":1}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ty, err := ParseTypesJSON(raw)
		if err != nil {
			require.Nil(t, ty)
			return
		}
		// Whatever parses is consistent.
		require.Len(t, ty.NodeOffsets, len(ty.NodeTypes)+1)
		require.Len(t, ty.EdgeOffsets, len(ty.EdgeTypes)+1)
		for i := range ty.NodeTypes {
			require.LessOrEqual(t, ty.NodeOffsets[i], ty.NodeOffsets[i+1])
			require.Equal(t, i, ty.NodeTypeIndex(ty.NodeTypes[i].Name))
		}
		require.LessOrEqual(t, ty.NumNodes(), int64(graph.MaxNodes))
		for r := range ty.EdgeTypes {
			require.LessOrEqual(t, ty.EdgeOffsets[r], ty.EdgeOffsets[r+1])
			require.True(t, ty.RelSrc[r] >= 0 && int(ty.RelSrc[r]) < len(ty.NodeTypes))
			require.True(t, ty.RelDst[r] >= 0 && int(ty.RelDst[r]) < len(ty.NodeTypes))
		}
	})
}
