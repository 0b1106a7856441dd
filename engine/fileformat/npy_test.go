package fileformat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/internal/datatest"
	"github.com/graphferry/graphferry/engine/mem"
)

func TestNPYRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tests := []mem.Tensor{
		{DType: mem.Float32, Shape: []int64{2, 3}, Data: mem.Bytes([]float32{1, 2, 3, 4, 5, 6})},
		{DType: mem.Int64, Shape: []int64{3}, Data: mem.Bytes([]int64{-1, 0, 1 << 40})},
		{DType: mem.Int32, Shape: []int64{1, 1, 2}, Data: mem.Bytes([]int32{7, -7})},
		{DType: mem.Float64, Shape: []int64{}, Data: make([]byte, 8)},
		{DType: mem.Float16, Shape: []int64{2}, Data: mem.Bytes([]uint16{0x3c00, 0})},
		{DType: mem.Int8, Shape: []int64{0}, Data: nil},
		{DType: mem.Uint8, Shape: []int64{0, 5}, Data: nil},
		{DType: mem.Bool, Shape: []int64{4}, Data: []byte{1, 0, 0, 1}},
	}
	for i, want := range tests {
		path := filepath.Join(dir, want.DType.String()+string(rune('a'+i))+".npy")
		require.NoError(t, WriteNPY(path, want))
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Zero(t, (len(raw)-len(want.Data))%64, "data must be 64-byte aligned")
		got, err := ReadNPY(path)
		require.NoError(t, err, "%v", want.Shape)
		assert.Equal(t, want.DType, got.DType)
		assert.Equal(t, want.Shape, got.Shape)
		assert.Equal(t, len(want.Data), len(got.Data))
		if len(want.Data) > 0 {
			assert.Equal(t, want.Data, got.Data)
		}
		assert.Equal(t, want.Shape, got.Tensor().Shape)
		require.NoError(t, got.Close())
		require.NoError(t, got.Close(), "Close is idempotent")
	}
	require.ErrorContains(t, WriteNPY(filepath.Join(dir, "x.npy"), mem.Tensor{DType: mem.BFloat16, Shape: []int64{1}, Data: make([]byte, 2)}), "bfloat16 cannot be stored")
	require.ErrorContains(t, WriteNPY(filepath.Join(dir, "x.npy"), mem.Tensor{DType: mem.Int64, Shape: []int64{2}, Data: make([]byte, 8)}), "has 8 bytes, shape [2] of int64 needs 16")
}

var npyFile = datatest.NPYImage

func TestReadNPYHeaders(t *testing.T) {
	dir := t.TempDir()
	eight := make([]byte, 8)
	tests := []struct {
		name  string
		file  []byte
		shape []int64
		dtype mem.DType
		err   string
	}{
		{"v1", npyFile(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", eight), []int64{2}, mem.Int32, ""},
		{"v2", npyFile(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }\n", eight), []int64{1, 1}, mem.Float64, ""},
		{"v3 double quotes", npyFile(3, `{"descr": "|u1", "fortran_order": False, "shape": (8,)}`, eight), []int64{8}, mem.Uint8, ""},
		{"key order and python2 long", npyFile(1, "{'shape': (2L, 4L), 'fortran_order': False, 'descr': '|b1'}", eight), []int64{2, 4}, mem.Bool, ""},
		{"scalar", npyFile(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", eight), []int64{}, mem.Int64, ""},
		{"fortran", npyFile(1, "{'descr': '<i8', 'fortran_order': True, 'shape': (1,), }", eight), nil, 0, "fortran_order True is not supported"},
		{"big-endian", npyFile(1, "{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }", eight), nil, 0, `big-endian dtype ">i8" is not supported`},
		{"other dtype", npyFile(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }", eight), nil, 0, `dtype "<u2" is not supported`},
		{"structured", npyFile(1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", eight), nil, 0, "structured dtypes are not supported"},
		{"truncated data", npyFile(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", eight), nil, 0, "data has 8 bytes, shape [2] of int64 needs 16"},
		{"extra data", npyFile(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", eight), nil, 0, "data has 8 bytes, shape [3] of int8 needs 3"},
		{"missing key", npyFile(1, "{'descr': '<i8', 'shape': (1,), }", eight), nil, 0, `no "fortran_order" key`},
		{"unknown key", npyFile(1, "{'descr': '<i8', 'x': 1}", eight), nil, 0, `unexpected key "x"`},
		{"bad shape", npyFile(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (-1,), }", eight), nil, 0, "bad shape dimension"},
		{"huge shape", npyFile(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", eight), nil, 0, "is too large"},
		{"bad magic", append([]byte("\x93NUMPZ\x01\x00\x00\x00"), eight...), nil, 0, "bad magic"},
		{"empty", nil, nil, 0, "bad magic"},
		{"version", npyFile(4, "{}", nil), nil, 0, "unsupported .npy format version 4.0"},
		{"header too long", npyFile(1, "{}", nil)[:9], nil, 0, "bad magic"},
		{"header past end", append([]byte(npyMagic), 2, 0, 0xff, 0xff, 0, 0), nil, 0, "exceeds the file size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".npy")
			require.NoError(t, os.WriteFile(path, tc.file, 0o644))
			a, err := ReadNPY(path)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.ErrorContains(t, err, path, "the error names the file")
				return
			}
			require.NoError(t, err)
			defer a.Close()
			assert.Equal(t, tc.shape, a.Shape)
			assert.Equal(t, tc.dtype, a.DType)
		})
	}
	_, err := ReadNPY(filepath.Join(dir, "missing.npy"))
	require.ErrorContains(t, err, "missing.npy")
}

// FuzzReadNPY feeds arbitrary bytes to the .npy reader: it must return an
// array consistent with its header or an error, never panic.
func FuzzReadNPY(f *testing.F) {
	f.Add(npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }\n", make([]byte, 8)))
	f.Add(npyFile(2, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }", []byte{1}))
	f.Add(npyFile(3, "{'descr': '<i8', 'fortran_order': True, 'shape': (0,)}", nil))
	f.Add([]byte("\x93NUMPY"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.npy")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		a, err := ReadNPY(path)
		if err != nil {
			return
		}
		n := int64(a.DType.Size())
		for _, s := range a.Shape {
			require.GreaterOrEqual(t, s, int64(0))
			n *= s
		}
		require.Equal(t, n, int64(len(a.Data)))
		require.NoError(t, a.Close())
	})
}
