//go:build linux

package fileio

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A Watch reports a file written in place (at the same size too) and a
// look too close to a write to tell (the racy window), and not a file
// replaced by a rename or removed (the mapping keeps the file it was made
// of).
func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("abcd"), 0o644))

	w := NewWatch(path) // just written: within the racy window
	require.Equal(t, Unsure, w.Changed(), "a look within the racy window is not trusted")

	old := RacyWindow
	RacyWindow = 0
	t.Cleanup(func() { RacyWindow = old })
	w = NewWatch(path)
	require.Equal(t, Same, w.Changed())
	require.NoError(t, os.WriteFile(path, []byte("abce"), 0o644)) // in place, the same size
	at := time.Now().Add(-time.Hour)                              // a later tick of a coarse clock
	require.NoError(t, os.Chtimes(path, at, at))
	require.Equal(t, Differs, w.Changed())
	require.Equal(t, Same, w.Changed(), "reported once")

	require.NoError(t, os.WriteFile(path+".new", []byte("wxyz"), 0o644))
	require.NoError(t, os.Rename(path+".new", path))
	require.Equal(t, Same, w.Changed(), "another inode: the mapping keeps the old one")
	require.NoError(t, os.Remove(path))
	require.Equal(t, Same, w.Changed())
	require.Equal(t, Same, NewWatch(path).Changed(), "a file that is not there is never changed")
}
