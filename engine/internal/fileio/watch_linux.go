package fileio

import (
	"syscall"
	"time"
)

// look stats the file at path: its identity, whether its change time is
// older than RacyWindow, and whether it could be stat'ed.
func look(path string) (ident, bool, bool) {
	now := time.Now().UnixNano()
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return ident{}, false, false
	}
	id := ident{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
	return id, id.ctime < now-RacyWindow.Nanoseconds(), true
}
