package core

import (
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/mem"
)

// Stand-ins for the typed-graph API of branch hx-engine (Graph.SetTypes,
// SetNodeTime, SetEdgeTime), wired to it when that branch is merged: until
// then a dataset's types and timestamps stay in the dataset.

func (g *Graph) applyTypes(ty *dataset.Types) error { return nil }
func (g *Graph) applyNodeTime(t mem.Tensor) error   { return nil }
func (g *Graph) applyEdgeTime(t mem.Tensor) error   { return nil }
func (g *Graph) typedNodeOffsets() []int64          { return nil }
