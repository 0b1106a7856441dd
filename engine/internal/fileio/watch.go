package fileio

import "time"

// A file that a dataset keeps mapped can change under it: written in place
// (the same inode: rewritten at the same size, zeroed, a byte flipped), its
// new bytes show through the shared mapping at once. A Watch keeps what the
// file looked like when it was mapped (device, inode, size, modification
// and change times), so that its owner can ask at each epoch start whether
// it may hold other bytes now (Changed) and check them again. A file
// replaced by a rename is another inode: the mapping keeps the file it was
// made of, whose bytes did not change, so a path that names another file
// now (or none) is no change.
//
// File times are as fine as the file system's clock (a few milliseconds,
// one or two seconds on some), so a write within the tick of the last look
// can leave them equal: a look that finds the change time within
// RacyWindow of the clock is not trusted, and the next look reports a
// change whatever it finds (git's "racily clean" index entries). This
// costs a check of the file's bytes again at the epochs that start within
// RacyWindow of its last write, and nothing after. (A variable so that
// tests can set it to 0 and see the times compared.)
var RacyWindow = 2 * time.Second

// ident is what a look at a file finds.
type ident struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
}

// Watch is the identity of one file at the last look (see Changed). Not
// safe for concurrent use: its owner serialises the looks.
type Watch struct {
	path    string
	id      ident
	settled bool // the last look's change time was older than RacyWindow
	known   bool // the file was there at the first look
}

// NewWatch looks at the file at path for the first time (a file that
// cannot be looked at is never reported changed).
func NewWatch(path string) *Watch {
	w := &Watch{path: path}
	w.id, w.settled, w.known = look(path)
	return w
}

// Path returns the file's path.
func (w *Watch) Path() string { return w.path }

// Change is what a look at a watched file found (Watch.Changed).
type Change int

const (
	// Same: the file's identity is the one of the last look, which was
	// not within RacyWindow of a write.
	Same Change = iota
	// Unsure: the identity is the same but the last look was too close to
	// a write to tell (RacyWindow).
	Unsure
	// Differs: the file's size or times differ: it was written.
	Differs
)

// Changed looks at the file again and says whether it may hold other bytes
// than at the last look (see Change). A file that is not the same one any
// more (replaced by a rename, or gone) is Same: see Watch.
func (w *Watch) Changed() Change {
	id, settled, ok := look(w.path)
	if !w.known || !ok || id.dev != w.id.dev || id.ino != w.id.ino {
		return Same
	}
	change := Same
	switch {
	case id != w.id:
		change = Differs
	case !w.settled:
		change = Unsure
	}
	w.id, w.settled = id, settled
	return change
}
