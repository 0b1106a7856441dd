//go:build !linux

package bounds

// physicalMemory returns 0 (unknown) where there is no portable way to ask.
func physicalMemory() uint64 { return 0 }
