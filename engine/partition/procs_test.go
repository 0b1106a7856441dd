package partition

import (
	"runtime"
	"testing"
)

// setProcs sets GOMAXPROCS and returns the previous value.
func setProcs(t *testing.T, n int) int {
	t.Helper()
	return runtime.GOMAXPROCS(n)
}
