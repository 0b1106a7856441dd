package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The device-side checks on the emulated device: a frontier node outside
// the graph is reported by the kernel that met it, without a fault, and the
// next batch samples normally.
func TestFaultNodeReportedOnEmulator(t *testing.T) {
	d := startEmu(t)
	reported, err := Fault(d, "node")
	require.NoError(t, err)
	require.ErrorContains(t, reported, "kernel gf_count: frontier node 1099511627776 is outside the graph of 4 nodes")
	_, err = SelfCheck(d, CheckConfig{Nodes: 300, AvgDegree: 4, Patches: 2, Batches: 1, BatchSize: 16, Seed: 2})
	require.NoError(t, err)
	reported, err = Fault(d, "launch")
	require.NoError(t, err)
	require.ErrorContains(t, reported, "launching gf_count")
	_, err = Fault(d, "bogus")
	require.ErrorContains(t, err, "unknown kind")
}
