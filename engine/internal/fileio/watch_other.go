//go:build !linux

package fileio

import (
	"os"
	"time"
)

// look is the portable look at the file at path: its size and
// modification time only (no device, inode or change time), which a
// replacement by a rename is not told from.
func look(path string) (ident, bool, bool) {
	now := time.Now()
	st, err := os.Stat(path)
	if err != nil {
		return ident{}, false, false
	}
	id := ident{size: st.Size(), mtime: st.ModTime().UnixNano()}
	return id, st.ModTime().Before(now.Add(-RacyWindow)), true
}
