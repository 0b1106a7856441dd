package core

import "github.com/graphferry/graphferry/engine/mem"

// Stand-ins for the typed-graph API of branch hx-engine, removed on merging
// it.

func (g *Graph) SetTypes(nodeOffsets, edgeOffsets []int64, relSrc, relDst []int32) error { return nil }
func (g *Graph) SetNodeTime(t mem.Tensor) error                                          { return nil }
func (g *Graph) SetEdgeTime(t mem.Tensor) error                                          { return nil }
func (g *Graph) nodeTypeOffsets() []int64                                                { return nil }
