package cache_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/diskio"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/rowcache"
)

// diskArray writes an array of n rows of shape row and dtype dt (random
// bytes) after a header of base bytes into a file, maps it and returns the
// store holding it as "x" and the file's path.
func diskArray(t *testing.T, dt mem.DType, n int64, row []int64, base int) (*feature.Store, mem.Tensor, string) {
	t.Helper()
	tt := mem.Tensor{DType: dt, Shape: append([]int64{n}, row...)}
	size := int(n) * tt.RowBytes()
	file := make([]byte, base+size)
	r := rand.New(rand.NewPCG(uint64(dt), uint64(n)))
	for i := range file {
		file[i] = byte(r.Uint32())
		if dt == mem.Bool && i >= base {
			file[i] &= 1
		}
	}
	path := filepath.Join(t.TempDir(), "feat.bin")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	data, release, err := fileio.MapFile(path)
	require.NoError(t, err)
	t.Cleanup(func() { release() })
	tt.Data = data[base:]
	s := feature.NewStore(n)
	require.NoError(t, s.Set("x", tt, nil))
	t.Cleanup(s.Close)
	return s, tt, path
}

// Rows read through every tier (hot tier, CPU cache, disk) equal the
// array's rows, for every dtype, every policy and both backends, with the
// counts adding up.
func TestDiskTierRowsEqualDataset(t *testing.T) {
	const n = 2000
	for dt := mem.Float32; dt <= mem.Bool; dt++ {
		for _, p := range []rowcache.Policy{rowcache.S3FIFO, rowcache.SIEVE, rowcache.LRU} {
			for _, b := range []diskio.Backend{diskio.URing, diskio.Pread} {
				row := []int64{int64(1 + int(dt)%5), 3}
				store, want, path := diskArray(t, dt, n, row, 128)
				rb := want.RowBytes()
				d, err := cache.OpenDisk(path, 128, want, nil, cache.DiskOptions{
					CacheBytes: 300 * int64(rb+rowcache.EntryOverhead), Policy: p, Reader: diskio.Options{Backend: b},
				})
				if err != nil && b == diskio.URing {
					t.Skipf("io_uring is not available: %v", err)
				}
				require.NoError(t, err)
				require.NoError(t, store.SetSource("x", d))
				hot := make([]int64, 100)
				for i := range hot {
					hot[i] = int64(i * 7)
				}
				tiered, err := cache.New(store, []string{"x"}, hot)
				require.NoError(t, err)
				r := rand.New(rand.NewPCG(uint64(p), uint64(dt)))
				var total feature.TierCounts
				for range 6 {
					ids := make([]int64, 400)
					for i := range ids {
						ids[i] = int64(r.ExpFloat64()*300) % n // skewed: the cache hits
					}
					got := make([]byte, len(ids)*rb)
					tc, err := tiered.GatherTiers("x", got, ids, 2)
					require.NoError(t, err)
					exp := make([]byte, len(got))
					require.NoError(t, feature.Gather(exp, want, ids, 1))
					require.Equal(t, exp, got, "%v %v %v", dt, p, b)
					require.EqualValues(t, len(ids), tc.HotRows+tc.ColdRows)
					require.Equal(t, tc.ColdRows, tc.CacheRows+tc.DiskRows)
					require.Equal(t, (tc.HotRows+tc.CacheRows)*int64(rb), tc.Bytes[mem.KindHost])
					require.Equal(t, tc.DiskRows*int64(rb), tc.DiskBytes)
					total.Add(tc)
				}
				require.Positive(t, total.HotRows)
				require.Positive(t, total.CacheRows, "the CPU cache serves repeated rows")
				require.Positive(t, total.DiskRows)
				require.GreaterOrEqual(t, total.DiskRead, total.DiskBytes)
				require.Positive(t, total.DiskRequests)
			}
		}
	}
}

// A renumbered store reads file row rows[i] for its row i.
func TestDiskTierRenumbered(t *testing.T) {
	const n = 500
	store, want, path := diskArray(t, mem.Float32, n, []int64{8}, 0)
	perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
	rows := make([]int64, n)
	for i, v := range perm {
		rows[i] = int64(v)
	}
	d, err := cache.OpenDisk(path, 0, want, rows, cache.DiskOptions{CacheBytes: 1 << 14})
	require.NoError(t, err)
	require.NoError(t, store.SetSource("x", d))
	ids := []int64{0, 499, 3, 3, 250}
	got := make([]byte, len(ids)*32)
	require.NoError(t, store.Gather("x", got, ids, 1))
	for k, i := range ids {
		require.Equal(t, want.Data[rows[i]*32:(rows[i]+1)*32], got[k*32:(k+1)*32])
	}
	_, err = cache.OpenDisk(path, 0, want, rows[:3], cache.DiskOptions{})
	require.Error(t, err)
}

// A feature file truncated under an open store: the disk tier's error is
// the mapping's, word for word (errs.ErrIO, feature.ErrFault, the file and
// the byte named), and the rows before the new end still read.
func TestDiskTierTruncatedSameErrorAsMapping(t *testing.T) {
	const n, width = 1024, 16
	mapped, want, path := diskArray(t, mem.Float32, n, []int64{width}, 0)
	ondisk := feature.NewStore(n)
	require.NoError(t, ondisk.Set("x", want, nil))
	defer ondisk.Close()
	d, err := cache.OpenDisk(path, 0, want, nil, cache.DiskOptions{CacheBytes: 0})
	require.NoError(t, err)
	require.NoError(t, ondisk.SetSource("x", d))
	require.Equal(t, d, ondisk.Source("x"))

	require.NoError(t, os.Truncate(path, 8192)) // rows 0..127 survive
	ids := []int64{1, 900, 2}
	dst := make([]byte, len(ids)*width*4)
	errMap := mapped.Gather("x", dst, ids, 1)
	errDisk := ondisk.Gather("x", dst, ids, 1)
	require.ErrorIs(t, errDisk, errs.ErrIO)
	require.ErrorIs(t, errDisk, feature.ErrFault)
	require.ErrorContains(t, errDisk, path)
	require.Equal(t, errMap.Error(), errDisk.Error())
	require.NoError(t, ondisk.Gather("x", dst[:128], []int64{127, 0}, 1))
	require.Equal(t, want.Data[127*64:128*64], dst[:64])
	var short *diskio.ShortReadError
	require.False(t, errors.As(errDisk, &short)) // turned into the mapping's error
	// A source for an array the store does not hold is refused (and closed).
	other, err := cache.OpenDisk(path, 0, want, nil, cache.DiskOptions{})
	require.NoError(t, err)
	require.ErrorContains(t, ondisk.SetSource("y", other), `no node data named "y"`)
	_, err = other.ReadRows(make([]byte, 64), []int64{0}, 1)
	require.ErrorContains(t, err, "closed")
}
