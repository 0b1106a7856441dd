package diskio

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
)

// writeFile writes n pseudo-random bytes to a file in a temporary folder.
func writeFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "feat.bin")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path, data
}

// configs are the reader configurations every test runs: each backend,
// direct and buffered.
func configs() map[string]Options {
	return map[string]Options{
		"uring-direct":   {Backend: URing},
		"uring-buffered": {Backend: URing, Buffered: true},
		"pread-direct":   {Backend: Pread},
		"pread-buffered": {Backend: Pread, Buffered: true},
		"auto-small":     {QueueDepth: 3, MaxRequest: 4096},
	}
}

func open(t *testing.T, path string, opt Options) *Reader {
	t.Helper()
	r, err := Open(path, opt)
	if err != nil && opt.Backend == URing {
		t.Skipf("io_uring is not available here: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	if opt.Backend != Auto {
		require.Equal(t, opt.Backend, r.Backend())
	}
	if opt.Buffered {
		require.False(t, r.Direct())
	}
	return r
}

func TestReadRows(t *testing.T) {
	for name, opt := range configs() {
		t.Run(name, func(t *testing.T) {
			for _, rb := range []int{1, 12, 100, 512, 4096, 5000, 70000} {
				const base = 24 // a header before the rows, as .npy files have
				rows := int64(max(64, 600000/rb))
				path, data := writeFile(t, base+int(rows)*rb+7)
				r := open(t, path, opt)
				rnd := rand.New(rand.NewPCG(uint64(rb), 1))
				ids := make([]int64, 200)
				for i := range ids {
					ids[i] = rnd.Int64N(rows)
				}
				ids[3], ids[4], ids[5] = ids[2], 0, rows-1 // a repeat, the first and the last row
				dst := make([]byte, len(ids)*rb)
				c, err := r.ReadRows(dst, ids, rb, base)
				require.NoError(t, err)
				for i, id := range ids {
					off := base + int(id)*rb
					require.Equal(t, data[off:off+rb], dst[i*rb:(i+1)*rb], "row %d (id %d) of %d bytes", i, id, rb)
				}
				require.Positive(t, c.Requests)
				require.LessOrEqual(t, c.Requests, int64(len(ids)))
				require.GreaterOrEqual(t, c.Bytes, int64(rb)*(c.Requests)/2)
				// ReadRowsAt puts the same rows at the given rows of a
				// larger dst (here in reverse, one row in three) and writes
				// nothing else.
				at := make([]byte, 3*len(ids)*rb)
				pos := make([]int, len(ids))
				for i := range pos {
					pos[i] = 3 * (len(ids) - 1 - i)
				}
				c2, err := r.ReadRowsAt(at, pos, ids, rb, base)
				require.NoError(t, err)
				require.Equal(t, c, c2)
				for i := range ids {
					require.Equal(t, dst[i*rb:(i+1)*rb], at[pos[i]*rb:(pos[i]+1)*rb], "row %d of %d bytes", i, rb)
					clear(at[pos[i]*rb : (pos[i]+1)*rb])
				}
				require.Equal(t, make([]byte, len(at)), at)
				// Empty batches read nothing.
				c, err = r.ReadRows(nil, nil, rb, base)
				require.NoError(t, err)
				require.Zero(t, c.Requests)
			}
		})
	}
}

// Neighbouring rows share requests: 64 consecutive rows of 64 bytes are one
// 4 KiB direct read (or one buffered read of their bytes).
func TestCoalescing(t *testing.T) {
	path, _ := writeFile(t, 1<<20)
	r := open(t, path, Options{Backend: Pread, MaxRequest: 8192})
	ids := make([]int64, 64)
	for i := range ids {
		ids[i] = int64(63 - i)
	}
	c, err := r.ReadRows(make([]byte, 64*64), ids, 64, 0)
	require.NoError(t, err)
	require.EqualValues(t, 1, c.Requests)
	require.EqualValues(t, 4096, c.Bytes)
	// Rows 4 KiB apart under an 8 KiB cap: two blocks a request.
	ids = []int64{0, 64, 128, 192, 256, 320}
	c, err = r.ReadRows(make([]byte, len(ids)*64), ids, 64, 0)
	require.NoError(t, err)
	if r.Direct() {
		require.EqualValues(t, 3, c.Requests) // 0+64 (8 KiB), 128+192, 256+320
	}
	// Far apart rows: one request each.
	ids = []int64{0, 1000, 2000, 3000}
	c, err = r.ReadRows(make([]byte, len(ids)*64), ids, 64, 0)
	require.NoError(t, err)
	require.EqualValues(t, 4, c.Requests)
}

// A file truncated while open: the rows past its new end are a
// ShortReadError (errs.ErrIO) naming the file and the byte; rows before it
// still read.
func TestTruncated(t *testing.T) {
	for name, opt := range configs() {
		t.Run(name, func(t *testing.T) {
			path, data := writeFile(t, 64*1024)
			r := open(t, path, opt)
			require.NoError(t, os.Truncate(path, 10000))
			dst := make([]byte, 3*100)
			_, err := r.ReadRows(dst, []int64{1, 200, 3}, 100, 0)
			var short *ShortReadError
			require.True(t, errors.As(err, &short), "%v", err)
			require.ErrorIs(t, err, errs.ErrIO)
			require.Equal(t, path, short.Path)
			require.EqualValues(t, 20000, short.Offset)
			require.ErrorContains(t, err, "byte 20000 is past the end of the file")
			_, err = r.ReadRows(dst, []int64{1, 99, 3}, 100, 0) // bytes 9900..9999 are the last
			require.NoError(t, err)
			require.Equal(t, data[9900:10000], dst[100:200])
		})
	}
}

func TestArguments(t *testing.T) {
	path, _ := writeFile(t, 8192)
	r := open(t, path, Options{})
	_, err := r.ReadRows(make([]byte, 10), []int64{1}, 8, 0)
	require.Error(t, err)
	_, err = r.ReadRows(make([]byte, 8), []int64{-1}, 8, 0)
	require.Error(t, err)
	_, err = r.ReadRows(make([]byte, 8), []int64{1}, 8, -4)
	require.Error(t, err)
	_, err = r.ReadRowsAt(make([]byte, 16), []int{2}, []int64{1}, 8, 0)
	require.ErrorContains(t, err, "pos[0] = 2")
	_, err = r.ReadRowsAt(make([]byte, 16), []int{-1}, []int64{1}, 8, 0)
	require.ErrorContains(t, err, "pos[0] = -1")
	_, err = r.ReadRowsAt(make([]byte, 16), []int{0, 1}, []int64{1}, 8, 0)
	require.ErrorContains(t, err, "2 positions for 1 rows")
	_, err = Open(filepath.Join(t.TempDir(), "missing"), Options{})
	require.ErrorIs(t, err, errs.ErrIO)
	require.NoError(t, r.Close())
	_, err = r.ReadRows(make([]byte, 8), []int64{1}, 8, 0)
	require.ErrorContains(t, err, "closed")
}

// Concurrent batches on one reader (run under -race).
func TestConcurrentBatches(t *testing.T) {
	for _, b := range []Backend{URing, Pread} {
		path, data := writeFile(t, 1<<20)
		r := open(t, path, Options{Backend: b, QueueDepth: 8})
		errc := make(chan error, 4)
		for w := range 4 {
			go func() {
				rnd := rand.New(rand.NewPCG(uint64(w), 3))
				for range 20 {
					ids := make([]int64, 50)
					for i := range ids {
						ids[i] = rnd.Int64N(1 << 20 / 128)
					}
					dst := make([]byte, len(ids)*128)
					if _, err := r.ReadRows(dst, ids, 128, 0); err != nil {
						errc <- err
						return
					}
					for i, id := range ids {
						if string(dst[i*128:(i+1)*128]) != string(data[id*128:(id+1)*128]) {
							errc <- errors.New("wrong row")
							return
						}
					}
				}
				errc <- nil
			}()
		}
		for range 4 {
			require.NoError(t, <-errc)
		}
	}
}

// Options.Check sees every request's bytes as read, from aligned offsets
// (buffered reads too), before the rows are copied out, and its error
// fails the batch.
func TestCheck(t *testing.T) {
	path, data := writeFile(t, 100_000)
	for name, opt := range configs() {
		var mu sync.Mutex
		var seen int
		opt.Check = func(off int64, b []byte) error {
			mu.Lock()
			defer mu.Unlock()
			require.Zero(t, off%Align, name)
			require.Equal(t, data[off:off+int64(len(b))], b, name)
			seen += len(b)
			if off <= 50_000 && 50_000 < off+int64(len(b)) {
				return errors.New("bad page")
			}
			return nil
		}
		r := open(t, path, opt)
		rows := []int64{3, 700, 12}
		dst := make([]byte, 3*100)
		_, err := r.ReadRows(dst, rows, 100, 7)
		require.NoError(t, err, name)
		for i, v := range rows {
			require.Equal(t, data[7+v*100:7+v*100+100], dst[i*100:(i+1)*100], name)
		}
		require.GreaterOrEqual(t, seen, 2*Align, name)       // rows 3 and 12 share a page
		_, err = r.ReadRows(dst[:100], []int64{499}, 100, 7) // bytes 49907 to 50006
		require.EqualError(t, err, "bad page", name)
	}
}
