package linkpred

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The streams are pinned: these values come from the package's own
// SplitMix64 copy that engine/rng replaced, so a change to how a
// (seed, key, tag, position) becomes draws cannot silently change
// "reproducible" negatives.
func TestStreamsArePinned(t *testing.T) {
	want := []struct {
		root         uint64
		small, large uint64
		unit         float64
	}{
		{0xcb00d389461e306f, 382, 270511386210, 0.13140547861287832},
		{0xd792d09025e05b90, 819, 524997324254, 0.03882648774647646},
		{0x4b5ba93726250cb9, 811, 369654902547, 0.13592719107002027},
		{0x850c4571a9c306b5, 198, 519634329278, 0.019340913690029993},
	}
	for i, tag := range []uint64{tagPerSource, tagGlobal, tagBinary, tagTriplet} {
		root := Stream{Seed: 7, Key: 3<<32 | 5}.root(tag)
		require.Equal(t, want[i].root, root, "tag %d", i)
		r := at(root, 11)
		require.Equal(t, want[i].small, r.Below(1000), "tag %d", i)
		require.Equal(t, want[i].large, r.Below(1<<40), "tag %d", i)
		require.Equal(t, want[i].unit, r.Unit(), "tag %d", i)
	}
}
