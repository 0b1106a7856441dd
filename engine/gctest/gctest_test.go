package gctest

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCollectRunsCollectionsUntilStopped(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := Collect()
	time.Sleep(50 * time.Millisecond)
	stop()
	runtime.ReadMemStats(&after)
	require.Greater(t, after.NumGC, before.NumGC+1)
}
