package cache_test

import (
	"hash/crc32"
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
)

// verifiedRows and verifiedWidth make a file of 3.42 blocks of 256 KiB
// (the last one short) of float32 rows of 256 bytes.
const verifiedRows, verifiedWidth = 3500, 64

// blockArray writes verifiedRows random rows to a file, maps it with its
// block sums attached (as a dataset's feat.bin is) and returns the mapped
// store, the array, the sums and the path.
func blockArray(t *testing.T) (*feature.Store, mem.Tensor, *feature.BlockSums, string) {
	t.Helper()
	tt := mem.Tensor{DType: mem.Float32, Shape: []int64{verifiedRows, verifiedWidth}}
	file := make([]byte, verifiedRows*tt.RowBytes())
	r := rand.New(rand.NewPCG(3, 4))
	for i := range file {
		file[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "feat.bin")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	data, release, err := fileio.MapFile(path)
	require.NoError(t, err)
	t.Cleanup(func() { release() })
	var sums []uint32
	for lo := 0; lo < len(file); lo += fileio.BlockSize {
		sums = append(sums, crc32.Checksum(file[lo:min(lo+fileio.BlockSize, len(file))], crc32.MakeTable(crc32.Castagnoli)))
	}
	require.NoError(t, feature.SetBlockSums(data, 0, fileio.BlockSize, sums, "graphferry.json"))
	tt.Data = data
	s := feature.NewStore(verifiedRows)
	require.NoError(t, s.Set("x", tt, nil))
	t.Cleanup(s.Close)
	b := feature.BlockSumsOf(data)
	require.NotNil(t, b)
	require.Equal(t, 4, b.Len())
	return s, tt, b, path
}

// openVerified puts the disk tier, checking blocks, under a copy of the
// array in a store of its own (nothing read through the mapping).
func openVerified(t *testing.T, want mem.Tensor, sums *feature.BlockSums, path string, backend diskio.Backend) *feature.Store {
	t.Helper()
	d, err := cache.OpenDisk(path, 0, want, nil, cache.DiskOptions{Blocks: sums, Reader: diskio.Options{Backend: backend}})
	if err != nil && backend == diskio.URing {
		t.Skipf("io_uring is not available: %v", err)
	}
	require.NoError(t, err)
	s := feature.NewStore(verifiedRows)
	require.NoError(t, s.Set("x", want, nil))
	require.NoError(t, s.SetSource("x", d))
	t.Cleanup(s.Close)
	return s
}

// rowOf returns a row that lies wholly inside block b.
func rowOf(b int) int64 { return int64(b*fileio.BlockSize/(verifiedWidth*4) + 3) }

// The first read from a block through the disk tier reads and checks the
// whole block once (its bytes counted as read), the rows equal the file's,
// and the short last block is checked too.
func TestDiskTierChecksBlocksOnce(t *testing.T) {
	for _, backend := range []diskio.Backend{diskio.Pread, diskio.URing} {
		_, want, sums, path := blockArray(t)
		s := openVerified(t, want, sums, path, backend)
		rb := want.RowBytes()
		ids := []int64{rowOf(0), rowOf(0) + 1, verifiedRows - 1}
		got := make([]byte, len(ids)*rb)
		tc, err := s.GatherTiers("x", got, ids, 1)
		require.NoError(t, err)
		exp := make([]byte, len(got))
		require.NoError(t, feature.Gather(exp, want, ids, 1))
		require.Equal(t, exp, got)
		require.True(t, sums.Checked(0))
		require.True(t, sums.Checked(3))
		require.False(t, sums.Checked(1))
		lo, hi := sums.Bounds(3)
		require.GreaterOrEqual(t, tc.DiskRead, int64(fileio.BlockSize)+hi-lo+int64(len(ids)*rb))
		// Checked blocks are not read again.
		tc, err = s.GatherTiers("x", got, ids, 1)
		require.NoError(t, err)
		require.Less(t, tc.DiskRead, int64(fileio.BlockSize))
	}
}

// A byte flipped in a block, anywhere in it, and a rewrite of the same
// size are the mapping's error naming the file and the block, at the first
// read of any row of that block through the disk tier; other blocks still
// read.
func TestDiskTierDamagedBlockSameErrorAsMapping(t *testing.T) {
	damage := map[string]func(t *testing.T, path string){
		"flipped byte": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			// Far from the row read: the whole block is checked.
			_, err = f.WriteAt([]byte{0x5a}, int64(2*fileio.BlockSize+fileio.BlockSize-7))
			require.NoError(t, err)
		},
		"same-size rewrite": func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			for i := range b {
				b[i] ^= 0x11
			}
			require.NoError(t, os.WriteFile(path, b, 0o644)) // the same inode
		},
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			mapped, want, sums, path := blockArray(t)
			s := openVerified(t, want, sums, path, diskio.Pread)
			rb := want.RowBytes()
			require.NoError(t, s.Gather("x", make([]byte, rb), []int64{rowOf(0)}, 1)) // block 0 checked before
			fn(t, path)
			ids := []int64{rowOf(2)}
			errDisk := s.Gather("x", make([]byte, rb), ids, 1)
			require.ErrorIs(t, errDisk, errs.ErrIO)
			require.ErrorContains(t, errDisk, path+": block 2 (bytes 524288 to 786431) has CRC-32C")
			require.ErrorContains(t, errDisk, "graphferry.json says")
			require.False(t, sums.Checked(2))
			// The mapping (the same sums: block 2 still unchecked) says the same.
			errMap := mapped.Gather("x", make([]byte, rb), ids, 1)
			require.Equal(t, errMap.Error(), errDisk.Error())
			if name == "flipped byte" {
				require.NoError(t, s.Gather("x", make([]byte, rb), []int64{rowOf(1)}, 1))
			}
		})
	}
}

// A file truncated under the disk tier: the rows past the new end are the
// mapping's error, and a block cut short gets no verdict (as through the
// mapping): its rows before the end still read.
func TestDiskTierVerifiedTruncation(t *testing.T) {
	mapped, want, sums, path := blockArray(t)
	s := openVerified(t, want, sums, path, diskio.Pread)
	rb := want.RowBytes()
	require.NoError(t, os.Truncate(path, fileio.BlockSize+8192))
	got := make([]byte, 2*rb)
	require.NoError(t, s.Gather("x", got, []int64{rowOf(0), rowOf(1) - 3}, 1))
	require.Equal(t, want.Data[rowOf(0)*int64(rb):(rowOf(0)+1)*int64(rb)], got[:rb])
	require.True(t, sums.Checked(0))
	require.False(t, sums.Checked(1))
	ids := []int64{rowOf(2)}
	errDisk := s.Gather("x", make([]byte, rb), ids, 1)
	require.ErrorIs(t, errDisk, feature.ErrFault)
	require.ErrorIs(t, errDisk, errs.ErrIO)
	errMap := mapped.Gather("x", make([]byte, rb), ids, 1)
	require.Equal(t, errMap.Error(), errDisk.Error())
}

// Block sums shorter than the array are refused.
func TestDiskTierBlockSumsTooShort(t *testing.T) {
	_, want, sums, path := blockArray(t)
	bigger := want
	bigger.Shape = []int64{verifiedRows + 1, verifiedWidth}
	_, err := cache.OpenDisk(path, 0, bigger, nil, cache.DiskOptions{Blocks: sums})
	require.ErrorContains(t, err, "block sums of 896000 bytes")
}

// pageSumsOf returns the page sums of the file at path.
func pageSumsOf(t *testing.T, path string) *cache.PageSums {
	t.Helper()
	raw, err := fileio.SumFilePages(path, fileio.PageSize)
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	sums, err := fileio.DecodePageSums(raw, st.Size(), fileio.PageSize, "feat.bin.pages")
	require.NoError(t, err)
	return &cache.PageSums{Size: fileio.PageSize, Sums: sums, Record: "feat.bin.pages"}
}

// With page sums, every page of every read is checked: rows equal the
// file's and nothing more is read than without (no block reads); a byte
// flipped in a page, even one read before, or a same-size rewrite is an
// error naming the file and the page at the next read of it from disk,
// with both backends and buffered reads; a truncation is the mapping's
// error; the block sums are not used.
func TestDiskTierChecksPages(t *testing.T) {
	for _, ro := range []diskio.Options{{Backend: diskio.Pread}, {Backend: diskio.URing}, {Backend: diskio.Pread, Buffered: true}} {
		mapped, want, blocks, path := blockArray(t)
		d, err := cache.OpenDisk(path, 0, want, nil, cache.DiskOptions{Pages: pageSumsOf(t, path), Blocks: blocks, Reader: ro})
		if err != nil && ro.Backend == diskio.URing {
			t.Skipf("io_uring is not available: %v", err)
		}
		require.NoError(t, err)
		s := feature.NewStore(verifiedRows)
		require.NoError(t, s.Set("x", want, nil))
		require.NoError(t, s.SetSource("x", d))
		rb := want.RowBytes()
		orig := append([]byte(nil), want.Data...)
		ids := []int64{5, 6, 1000, verifiedRows - 1, 2500}
		got := make([]byte, len(ids)*rb)
		tc, err := s.GatherTiers("x", got, ids, 1)
		require.NoError(t, err)
		exp := make([]byte, len(got))
		for k, id := range ids { // a plain copy: Gather would check the blocks
			copy(exp[k*rb:(k+1)*rb], want.Data[id*int64(rb):(id+1)*int64(rb)])
		}
		require.Equal(t, exp, got)
		require.LessOrEqual(t, tc.DiskRead, int64(len(ids)*2*fileio.PageSize), "no block reads")
		require.False(t, blocks.Checked(0), "the block sums are not used")

		// Row 1000 (bytes 256000 to 256255: page 62) read before, then a
		// byte of its page flipped: the next read of it fails.
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte{0x5a ^ orig[62*4096+10]}, 62*4096+10)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		err = s.Gather("x", make([]byte, rb), []int64{1000}, 1)
		require.ErrorIs(t, err, errs.ErrIO, "%+v", ro)
		require.ErrorContains(t, err, path+": page 62 (bytes 253952 to 258047) has CRC-32C")
		require.ErrorContains(t, err, "feat.bin.pages says")
		require.NoError(t, s.Gather("x", make([]byte, rb), []int64{5}, 1)) // other pages still read
		// A same-size rewrite.
		b := append([]byte(nil), orig...)
		for i := range b {
			b[i] ^= 0x11
		}
		require.NoError(t, os.WriteFile(path, b, 0o644))
		require.ErrorContains(t, s.Gather("x", make([]byte, rb), []int64{5}, 1), ": page 0 (bytes 0 to 4095) has CRC-32C")
		// The short last page is checked too.
		require.ErrorContains(t, s.Gather("x", make([]byte, rb), []int64{verifiedRows - 1}, 1), ": page 218 (bytes 892928 to 895999) has CRC-32C")
		// Truncated: the mapping's error.
		require.NoError(t, os.WriteFile(path, orig, 0o644))
		require.NoError(t, os.Truncate(path, 100000))
		errDisk := s.Gather("x", make([]byte, rb), []int64{3000}, 1)
		require.ErrorIs(t, errDisk, feature.ErrFault)
		errMap := mapped.Gather("x", make([]byte, rb), []int64{3000}, 1)
		require.Equal(t, errMap.Error(), errDisk.Error())
		// Rows before the cut read (the cut page gets no verdict).
		require.NoError(t, s.Gather("x", make([]byte, rb), []int64{385}, 1)) // page 24, cut at byte 100000
		s.Close()
	}
}

// Page sums that do not cover the array, or of another page size, are
// refused.
func TestDiskTierPageSumsChecked(t *testing.T) {
	_, want, _, path := blockArray(t)
	p := pageSumsOf(t, path)
	short := *p
	short.Sums = short.Sums[:10]
	_, err := cache.OpenDisk(path, 0, want, nil, cache.DiskOptions{Pages: &short})
	require.ErrorContains(t, err, "10 page sums for 3500 rows")
	big := *p
	big.Size = 8192
	_, err = cache.OpenDisk(path, 0, want, nil, cache.DiskOptions{Pages: &big})
	require.ErrorContains(t, err, "8192-byte pages")
}
