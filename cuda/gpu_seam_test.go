//go:build cuda && gftest

package cuda

// Tests of defects issue 32 found by reading gpu.go. TestGPU* run on the
// fake driver and on a GPU (tests/gpu/run.sh); TestFake* need the fake
// driver's fault injection and run with make test-cuda only.

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// CUDA_ERROR_LAUNCH_TIMEOUT (702: the display watchdog killed a kernel)
// leaves the context unusable like a fault: it poisons the GPU.
func TestGPUStickyLaunchTimeout(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	err = g.fail("running kernel gf_sample", driverError(702))
	require.ErrorContains(t, err, "sticky")
	require.ErrorContains(t, g.usable(), "702")
	_, err = g.Alloc(16)
	require.ErrorContains(t, err, "sticky")
}

// A launch takes no process-wide lock: with the kernel modules' lock held
// elsewhere (another GPU loading its module, say), kernels still launch.
func TestGPULaunchTakesNoProcessLock(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	modules.Lock()
	locked := true
	defer func() {
		if locked {
			modules.Unlock()
		}
	}()
	done := make(chan error, 1)
	go func() {
		reported, err := Fault(g, "node") // builds a sampler, launches gf_count
		if err == nil && reported == nil {
			err = errFaultNotReported
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * time.Minute):
		modules.Unlock()
		locked = false
		t.Fatal("a kernel launch waited for the process-wide modules lock")
	}
}

var errFaultNotReported = errors.New("the deliberate fault was not reported")

// Close when the context cannot be made current still lets go of what it
// holds: the module's reference and the primary context (whose last
// release frees the streams and events made here), so nothing leaks and a
// GPU opened later loads the module afresh and launches.
func TestFakeCloseWhenThePushFails(t *testing.T) {
	const dev = 1 // make test-cuda runs the fake with 2 devices
	g, err := OpenGPU(dev)
	require.NoError(t, err)
	_, err = g.NewStream()
	require.NoError(t, err)
	_, err = g.NewEvent()
	require.NoError(t, err)
	require.True(t, fakeFailPush(1, 201), "the fake driver's gf_fakecuda_fail_push") // CUDA_ERROR_INVALID_CONTEXT
	closeErr := g.Close()
	st, ok := fakeStats(dev)
	require.True(t, ok)
	require.Zero(t, st[8], "primary context refcount") // released
	require.Zero(t, st[3], "live modules")
	require.Zero(t, st[5], "live streams")
	require.Zero(t, st[6], "live events")
	require.ErrorContains(t, closeErr, "making its context current")

	g2, err := OpenGPU(dev)
	require.NoError(t, err)
	defer g2.Close()
	reported, err := Fault(g2, "node")
	require.NoError(t, err)
	require.ErrorContains(t, reported, "gf_count")
}
