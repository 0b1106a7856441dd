package core

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/graphferry/graphferry/engine/internal/par"
)

// FitThreadsToHost sets the Go runtime's parallelism (GOMAXPROCS: the
// engine's thread count wherever a caller gives none, "<= 0" in the C
// API) to this process's share of the host when several ranks share it:
// the cores this process may run on divided by LOCAL_WORLD_SIZE, the number
// of ranks torchrun (and torch.distributed's other launchers) start on this
// host. Without it, every rank would take every core, N ranks making N
// times the host's threads. GOMAXPROCS set in the environment wins (the
// runtime has applied it already), as does a LOCAL_WORLD_SIZE that is not a
// positive integer. It returns the parallelism in effect; getenv reads the
// environment (os.Getenv).
func FitThreadsToHost(getenv func(string) string) int {
	if getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	ranks, err := strconv.Atoi(strings.TrimSpace(getenv("LOCAL_WORLD_SIZE")))
	if err != nil || ranks <= 1 {
		return runtime.GOMAXPROCS(0)
	}
	n := par.HostShare(runtime.NumCPU(), ranks)
	runtime.GOMAXPROCS(n)
	return n
}
