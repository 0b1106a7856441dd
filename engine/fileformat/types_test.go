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

// TestCheckTypeFields: a malformed entry of node_types or edge_types is
// named with its field before the entries are decoded.
func TestCheckTypeFields(t *testing.T) {
	ok := `{"node_types": [{"name": "a", "num_nodes": 2}], "edge_types": [{"src": "a", "rel": "r", "dst": "a", "num_edges": 0}]}`
	require.NoError(t, CheckTypeFields([]byte(ok)))
	require.NoError(t, CheckTypeFields([]byte(`{"num_nodes": 3}`)), "untyped")
	require.NoError(t, CheckTypeFields([]byte(`[`)), "not JSON: left to the decoder")
	for raw, msg := range map[string]string{
		`{"node_types": 3}`:                                                        "node_types must be a list (got 3)",
		`{"node_types": [3]}`:                                                      "node_types[0] must be an object (got 3)",
		`{"node_types": [null]}`:                                                   "node_types[0] must be an object (got null)",
		`{"node_types": [{"num_nodes": 1}]}`:                                       "node_types[0] has no 'name'",
		`{"node_types": [{"name": 7, "num_nodes": 1}]}`:                            "node_types[0].name must be a non-empty string (got 7)",
		`{"node_types": [{"name": "a", "num_nodes": -1}]}`:                         "node_types[0].num_nodes must be an integer >= 0: node_types[0].num_nodes = -1",
		`{"node_types": [{"name": "a", "num_nodes": 1.5}]}`:                        "node_types[0].num_nodes must be an integer >= 0: node_types[0].num_nodes = 1.5",
		`{"edge_types": [{"src": "a", "dst": "a", "num_edges": 1}]}`:               "edge_types[0] has no 'rel'",
		`{"edge_types": [{"src": "a", "rel": "r", "dst": "a", "num_edges": "1"}]}`: `edge_types[0].num_edges must be an integer >= 0: edge_types[0].num_edges = "1"`,
	} {
		require.EqualError(t, CheckTypeFields([]byte(raw)), msg, raw)
	}
	require.NoError(t, CheckTypeFields([]byte(`{"node_types": [{"name": "", "num_nodes": 1}]}`)), "an empty name is ParseTypes' to name")
}
