package dataset

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
)

// TestDeclarationsCovered: edits of graphferry.json that stay
// self-consistent (the feature re-shaped over the same bytes, its entry
// removed or null, a node column's dtype) are errors; a dataset written
// before the declared sum was recorded still opens.
func TestDeclarationsCovered(t *testing.T) {
	for name, edit := range map[string]func(m map[string]any){
		"feature reshaped 3-D": func(m map[string]any) {
			f := m["feature"].(map[string]any)
			s := f["shape"].([]any)
			f["shape"] = []any{s[0], 1, s[1]}
		},
		"feature removed":     func(m map[string]any) { delete(m, "feature") },
		"feature null":        func(m map[string]any) { m["feature"] = nil },
		"feature dtype":       func(m map[string]any) { m["feature"].(map[string]any)["dtype"] = "int32" },
		"num_classes changed": func(m map[string]any) { m["num_classes"] = 100 },
	} {
		dir := writeTestDataset(t)
		d, err := Open(dir)
		require.NoError(t, err, name)
		require.NoError(t, d.Close())
		editMeta(t, dir, edit)
		_, err = Open(dir)
		require.ErrorContains(t, err, "edited by hand", name)
		require.ErrorIs(t, err, errs.ErrIO, name)
	}
	// Without the declared sum (a dataset of an earlier version): opens.
	dir := writeTestDataset(t)
	editMeta(t, dir, func(m map[string]any) {
		delete(m, "declared")
		m["name"] = "renamed" // not a declaration: free to edit
	})
	d, err := Open(dir)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	// The name and the provenance are not declarations.
	dir = writeTestDataset(t)
	editMeta(t, dir, func(m map[string]any) { m["name"], m["source"] = "other", map[string]any{"x": 1} })
	d, err = Open(dir)
	require.NoError(t, err)
	require.NoError(t, d.Close())
}
