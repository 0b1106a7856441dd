//go:build unix

package convert

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/mem"
)

// TestConvertRefusesNotRegularFiles puts a named pipe where each input file
// of the converter should be: it must refuse it at once (opening a FIFO for
// reading blocks until a writer comes, deaf to Ctrl-C), as dataset.Open does
// (engine/dataset's TestNotRegularFiles).
func TestConvertRefusesNotRegularFiles(t *testing.T) {
	src := writeNPYDir(t, `{"name":"x"}`, map[string]mem.Tensor{"indptr.npy": i64(0, 1, 1), "indices.npy": i64(1)})
	require.NoError(t, ConvertNPY(src, filepath.Join(t.TempDir(), "ok")))
	for _, name := range []string{"meta.json", "indices.npy", "feat.npy"} {
		path := filepath.Join(src, name)
		os.Remove(path)
		require.NoError(t, syscall.Mkfifo(path, 0o644))
		err := ConvertNPY(src, filepath.Join(t.TempDir(), "out"))
		require.ErrorContains(t, err, path+" is not a regular file", name)
		require.NoError(t, os.Remove(path))
		if name == "meta.json" {
			require.NoError(t, os.WriteFile(path, []byte(`{"name":"x"}`), 0o644))
		}
		if name == "indices.npy" {
			require.NoError(t, fileformat.WriteNPY(path, i64(1)))
		}
	}
}
