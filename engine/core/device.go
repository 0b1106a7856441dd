package core

import (
	"errors"
	"io"
	"slices"

	"github.com/graphferry/graphferry/engine/device"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// openDevice is OpenLoaderOn for a loader whose options name a device: the
// device backend's stages (device.Open: the sampler stage, the node data
// gathered on the device) in the pipeline over the graph's partition and
// node data, and the device.Session that holds the batches' device memory
// (Loader.Device).
func (g *Graph) openDevice(d device.Options, seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	var sess *device.Session
	l, err := g.OpenLoaderWith(func(in Internals) (*pipeline.Pipeline, io.Closer, error) {
		names := slices.Compact(slices.Sorted(slices.Values(slices.Concat(lopt.FeatureNames, lopt.LabelNames))))
		st, err := device.Open(device.Request{Options: d, Part: in.Part, Store: in.Store, Sample: req, Names: names})
		if err != nil {
			return nil, nil, err
		}
		sess = device.NewSession(d, st)
		var store feature.Gatherer = in.Store
		if st.Store != nil {
			store = st.Store
		}
		pl, err := pipeline.New(st.Sampler, in.Part, store, seeds, lopt, alloc)
		if err != nil {
			return nil, nil, errors.Join(err, sess.Discard())
		}
		return pl, sess, nil
	})
	if err != nil {
		return nil, err
	}
	l.dev = sess
	return l, nil
}

// Device returns the session of a device loader's batches (nil: a host
// loader). A device loader's Next delivers each batch to it
// (device.Session.Deliver): release the batch with Session.Release.
func (l *Loader) Device() *device.Session { return l.dev }
