package feature

import "github.com/graphferry/graphferry/engine/mem"

// SetLocal stores t under name like Set, with any number of rows: the
// per-node-type data of a typed graph ("paper/feat"), one row per node of
// its type in type-local order. Get returns it like any array, but Gather
// refuses it: its rows are not indexed by node id, so a loader must not
// gather them as if they were.
func (s *Store) SetLocal(name string, t mem.Tensor, release func()) error {
	return s.set(name, t, release, true)
}

// IsLocal reports whether name was stored with SetLocal.
func (s *Store) IsLocal(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.arrays[name].local
}
