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

// TestDeclarationsCoveredWithoutFileSums (issue 34): "files" removed or
// emptied from graphferry.json took the declared check with it, so a
// dtype edit opened silently. The declarations are now checked with the
// sums of the files as they are: an edit is refused, the same dataset
// without its file sums (plain, typed) still opens; one with CSC files is
// refused by name (its mapped files' sizes are needed).
func TestDeclarationsCoveredWithoutFileSums(t *testing.T) {
	drop := map[string]func(m map[string]any){
		"files absent": func(m map[string]any) { delete(m, "files") },
		"files empty":  func(m map[string]any) { m["files"] = map[string]any{} },
	}
	for name, noFiles := range drop {
		dir := writeTestDataset(t)
		editMeta(t, dir, func(m map[string]any) {
			noFiles(m)
			m["feature"].(map[string]any)["dtype"] = "int32" // the same bytes, read as int32
		})
		_, err := Open(dir)
		require.ErrorContains(t, err, "edited by hand", name)
		require.ErrorIs(t, err, errs.ErrIO, name)

		typed := t.TempDir()
		require.NoError(t, Write(typed, typedDataset(t)))
		withCSC := cscDataset(t, 50, true) // edge ids: csc_edge_ids.bin too
		require.NoError(t, WriteCSC(withCSC))
		editMeta(t, withCSC, noFiles)
		_, err = Open(withCSC)
		require.ErrorContains(t, err, "graphferry.json lists no size for csc_indptr.bin", name)
		for _, dir := range []string{writeTestDataset(t), typed} {
			editMeta(t, dir, noFiles)
			d, err := OpenWith(dir, OpenOptions{VerifyChecksums: true})
			require.NoError(t, err, "%s: %s", name, dir)
			require.Empty(t, d.Meta.Files)
			require.NoError(t, d.Close())
		}
		editMeta(t, typed, func(m map[string]any) {
			a := m["node_data"].([]any)[0].(map[string]any)
			a["dtype"] = map[string]string{"float32": "int32", "float16": "bfloat16", "int64": "float64"}[a["dtype"].(string)]
		})
		_, err = Open(typed)
		require.ErrorContains(t, err, "edited by hand", name)
	}
}
