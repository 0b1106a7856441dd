package core

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/internal/par"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestHostShare(t *testing.T) {
	require.Equal(t, 16, par.HostShare(16, 0))
	require.Equal(t, 16, par.HostShare(16, 1))
	require.Equal(t, 4, par.HostShare(16, 4))
	require.Equal(t, 5, par.HostShare(16, 3))
	require.Equal(t, 1, par.HostShare(2, 8)) // more ranks than cores: one thread each
	require.Equal(t, 1, par.HostShare(0, 1))
}

func TestFitThreadsToHost(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cpus := runtime.NumCPU()

	runtime.GOMAXPROCS(cpus)
	require.Equal(t, cpus, FitThreadsToHost(env(nil)), "no launcher: every core")
	require.Equal(t, cpus, FitThreadsToHost(env(map[string]string{"LOCAL_WORLD_SIZE": "1"})))
	require.Equal(t, cpus, FitThreadsToHost(env(map[string]string{"LOCAL_WORLD_SIZE": "two"})), "not a count: ignored")

	want := par.HostShare(cpus, 2)
	require.Equal(t, want, FitThreadsToHost(env(map[string]string{"LOCAL_WORLD_SIZE": "2"})))
	require.Equal(t, want, runtime.GOMAXPROCS(0), "the runtime's parallelism is the share")

	runtime.GOMAXPROCS(3)
	require.Equal(t, 3, FitThreadsToHost(env(map[string]string{"LOCAL_WORLD_SIZE": "64", "GOMAXPROCS": "3"})),
		"GOMAXPROCS in the environment wins")
}
