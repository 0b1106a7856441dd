package pipeline

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStartAtResumes: an epoch interrupted after k batches (k drawn at
// random, seeded) and resumed with StartAt(epoch, k) on a fresh pipeline
// with another worker count (and the original's patch count or another)
// delivers exactly the batches the interrupted run had not delivered, bit
// for bit, sampling only those; with and without a Share.
func TestStartAtResumes(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, patches := range []int{1, 3} {
		f := newFixture(t, patches, patches > 1, defaultSample)
		seeds := seedRange(90)
		for _, share := range []*Share{nil, {Rank: 1, Size: 3}, {Rank: 2, Size: 5}} {
			opt := defaultOpts()
			opt.BatchSize = 7 // 13 batches
			opt.Share = share
			opt.Workers = 2
			const epoch = 5
			whole, err := New(f.s, f.p, f.store, seeds, opt, nil)
			require.NoError(t, err)
			ref := epochDigests(t, whole, epoch)
			require.NoError(t, whole.Close())
			for range 4 {
				k := r.IntN(len(ref) + 1)
				// The interrupted run: k batches, then its position.
				o := opt
				// With a Share, one worker samples on the fixture's own
				// sampler, whose communicator a Close mid-epoch aborts (a
				// restarted process has a fresh one): forks here.
				workers := func() int {
					if share != nil {
						return 2 + r.IntN(2)
					}
					return 1 + r.IntN(3)
				}
				o.Workers = workers()
				first, err := New(f.s, f.p, f.store, seeds, o, nil)
				require.NoError(t, err)
				_, _, started := first.Position()
				require.False(t, started)
				require.NoError(t, first.Start(epoch))
				for range k {
					b, err := first.Next(context.Background())
					require.NoError(t, err)
					b.Release()
				}
				e, pos, started := first.Position()
				require.True(t, started)
				require.Equal(t, [2]uint64{epoch, uint64(k)}, [2]uint64{e, uint64(pos)})
				require.NoError(t, first.Close())

				o.Workers = workers()
				resumed, err := New(f.s, f.p, f.store, seeds, o, nil)
				require.NoError(t, err)
				require.NoError(t, resumed.StartAt(epoch, k))
				got := drain(t, resumed)
				require.Len(t, got, len(ref)-k)
				for i, b := range got {
					require.Equal(t, ref[k+i], digest(b), "patches %d, share %+v, resumed at %d: batch %d", patches, share, k, k+i)
				}
				releaseAll(got)
				st := resumed.Stats().Current
				require.EqualValues(t, len(ref)-k, st.Sampler.Batches, "only the undelivered batches are sampled")
				_, pos, _ = resumed.Position()
				require.Equal(t, len(ref), pos)
				_, err = resumed.Next(context.Background())
				require.ErrorIs(t, err, io.EOF)
				require.ErrorContains(t, resumed.StartAt(epoch, len(ref)+1), "want 0 <= first <=")
				require.Error(t, resumed.StartAt(epoch, -1))
				require.NoError(t, resumed.Close())
			}
		}
	}
}
