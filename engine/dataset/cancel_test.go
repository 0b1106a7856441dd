package dataset

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenContext: an open whose context is done stops with its error,
// whether or not it verifies; Write stopped by one writes no
// graphferry.json (what it wrote is not a dataset).
func TestOpenContext(t *testing.T) {
	dir := writeTestDataset(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, verify := range []bool{false, true} {
		_, err := OpenWith(dir, OpenOptions{VerifyChecksums: verify, Context: ctx})
		require.ErrorIs(t, err, context.Canceled, "verify=%v", verify)
	}
	d, err := OpenWith(dir, OpenOptions{Context: context.Background()})
	require.NoError(t, err)
	defer d.Close()

	out := t.TempDir()
	require.ErrorIs(t, WriteContext(ctx, out, d), context.Canceled)
	_, err = os.Stat(out + "/" + MetaFile)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, WriteContext(context.Background(), out, d))
}
