//go:build !linux

package diskio

import "errors"

// oDirect is 0 where O_DIRECT is not available: reads go through the page
// cache.
const oDirect = 0

func fadviseRandom(int) {}

type ring struct{}

func newRing(int) (*ring, error) { return nil, errors.New("io_uring is Linux only") }

func (*ring) close() error { return nil }

func (b *batch) readURing() error { return b.readPread() }
