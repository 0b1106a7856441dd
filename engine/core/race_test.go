package core

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/sample"
)

// Close while other goroutines sample, read node data and run loaders on
// the same graph: each call succeeds with correct data or fails with
// ErrGraphClosed, and the caller's node data is released exactly once,
// after the last call that reads it. The release poisons the memory, so a
// read after it shows (and the race detector sees the unordered write).
func TestCloseWhileCallsRun(t *testing.T) {
	const rounds = 12
	want := testFeatures().Data
	for round := range rounds {
		g := newTestGraph(t, partitions()["range1"]) // no renumbering: the graph reads the caller's memory
		feat := testFeatures()
		var released atomic.Int32
		require.NoError(t, g.SetNodeData("feat", feat, func() {
			released.Add(1)
			for i := range feat.Data {
				feat.Data[i] = 0xff
			}
		}))
		require.NoError(t, g.SetNodeData("label", testLabels(), nil))
		seeds := make([]int64, 64)
		for i := range seeds {
			seeds[i] = int64(i * 4)
		}
		l, err := g.OpenLoader(seeds, defaultSample(), defaultLoader(), nil)
		require.NoError(t, err)

		var (
			wg      sync.WaitGroup
			started sync.WaitGroup // every worker made a call before Close
			mu      sync.Mutex
			failed  error
		)
		fail := func(err error) {
			mu.Lock()
			if failed == nil {
				failed = err
			}
			mu.Unlock()
		}
		closedOK := func(err error) bool {
			if errors.Is(err, ErrGraphClosed) {
				return true
			}
			fail(err)
			return false
		}
		worker := func(call func() error) {
			wg.Add(1)
			started.Add(1)
			go func() {
				defer wg.Done()
				first := true
				for {
					err := call()
					if first {
						started.Done()
						first = false
					}
					if err != nil {
						closedOK(err)
						return
					}
				}
			}()
		}
		for range 2 {
			worker(func() error {
				got, err := g.NodeData("feat", nil)
				if err == nil && string(got.Data) != string(want) {
					return errors.New("node data read after its release")
				}
				return err
			})
		}
		worker(func() error {
			b, err := g.Sample(seeds[:8], defaultSample(), testThreads, nil)
			b.Release()
			return err
		})
		worker(func() error {
			_, err := g.RandomWalk(seeds[:8], sample.WalkRequest{Length: 3}, testThreads, nil)
			return err
		})
		// The loader runs epochs until the graph is closed, then one more.
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			defer l.Close()
			first := true
			for e := uint64(0); ; e++ {
				closed := g.Closed()
				if err := l.Start(e); err != nil {
					fail(err)
					return
				}
				for {
					b, err := l.Next(context.Background())
					if err == io.EOF {
						break
					}
					if err != nil {
						fail(err)
						return
					}
					f := b.NodeData["feat"].Data
					nodes := i64(b.Nodes)
					for i, o := range nodes {
						if string(f[i*4*featDim:(i+1)*4*featDim]) != string(mem.Bytes(featOf(o))) {
							fail(errors.New("loader read node data after its release"))
						}
					}
					b.Release()
				}
				if first {
					started.Done()
					first = false
				}
				if closed {
					return
				}
			}
		}()
		started.Wait()
		require.NoError(t, g.Close())
		wg.Wait()
		if failed != nil {
			t.Fatalf("round %d: %v", round, failed)
		}
		require.Equal(t, int32(1), released.Load(), "round %d", round)
	}
}
