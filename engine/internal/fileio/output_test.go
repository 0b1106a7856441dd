package fileio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// PrepareOutput refuses an output folder that holds anything, or is a
// source, inside one or above one (by path or through a link), naming it;
// with Overwrite it removes only what the tool owns there, when ready, and
// never an entry that holds a source.
func TestPrepareOutput(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "graphferry.json"), []byte("{}"), 0o644))
	require.NoError(t, os.Symlink(src, filepath.Join(root, "link")))
	owns := func(name string, dir bool) bool { return name == "out.bin" || (dir && name == "part-0") }
	out := func(dst string, overwrite bool) (func() error, error) {
		return PrepareOutput(dst, Output{Tool: "tool", Sources: []string{src}, Overwrite: overwrite, Owns: owns})
	}

	// New and empty folders: created when ready, nothing else.
	dst := filepath.Join(root, "new", "deeper")
	ready, err := out(dst, false)
	require.NoError(t, err)
	require.NoDirExists(t, dst, "nothing changes before ready")
	require.NoError(t, ready())
	require.DirExists(t, dst)
	ready, err = out(dst, false)
	require.NoError(t, err)
	require.NoError(t, ready())

	for name, c := range map[string]struct{ dst, msg string }{
		"the source":        {src, "the output folder " + src + " is the source folder"},
		"through a link":    {filepath.Join(root, "link"), "is the source folder"},
		"inside the source": {filepath.Join(src, "parts"), "is inside the source folder " + src},
		"above the source":  {root, "holds the source folder " + src},
	} {
		_, err := out(c.dst, false)
		require.ErrorContains(t, err, c.msg, name)
		require.ErrorContains(t, err, "tool: ", name)
		require.ErrorContains(t, err, "--overwrite", name)
	}

	// A folder with files: refused, naming some of them.
	busy := filepath.Join(root, "busy")
	require.NoError(t, os.MkdirAll(filepath.Join(busy, "part-0"), 0o755))
	for _, name := range []string{"out.bin", "notes.txt", "a", "b"} {
		require.NoError(t, os.WriteFile(filepath.Join(busy, name), nil, 0o644))
	}
	_, err = out(busy, false)
	require.ErrorContains(t, err, "the output folder "+busy+" is not empty (holds a, b, notes.txt and 2 more)")
	require.NoError(t, os.WriteFile(filepath.Join(busy, "graphferry.json"), nil, 0o644))
	_, err = out(busy, false)
	require.ErrorContains(t, err, "holds a dataset or a partition")

	// Overwrite: what the tool owns goes, the rest stays.
	ready, err = out(busy, true)
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(busy, "out.bin"), "nothing changes before ready")
	require.NoError(t, ready())
	left, err := os.ReadDir(busy)
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"a", "b", "graphferry.json", "notes.txt"}, names)

	// Overwrite into the source, or above it, is the caller's wish, but
	// never removes the source.
	ready, err = out(src, true)
	require.NoError(t, err)
	require.NoError(t, ready())
	require.FileExists(t, filepath.Join(src, "graphferry.json"))
	holder := filepath.Join(root, "holder")
	require.NoError(t, os.MkdirAll(filepath.Join(holder, "part-0"), 0o755))
	_, err = PrepareOutput(holder, Output{Tool: "tool", Sources: []string{filepath.Join(holder, "part-0", "ds")}, Overwrite: true, Owns: owns})
	require.ErrorContains(t, err, "would remove "+filepath.Join(holder, "part-0")+", which holds the source folder")

	// Not a folder.
	file := filepath.Join(root, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = out(file, true)
	require.ErrorContains(t, err, "the output folder "+file)
	_, err = out("", true)
	require.ErrorContains(t, err, "no output folder given")
}
