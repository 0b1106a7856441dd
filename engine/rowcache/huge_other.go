//go:build !linux

package rowcache

// adviseHuge does nothing where transparent huge pages are not asked for.
func adviseHuge([]byte) {}
