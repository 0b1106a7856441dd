package cuda

import (
	"errors"
	"fmt"

	"github.com/graphferry/graphferry/engine/device"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/pipeline"
)

// NewBackend returns the engine's device backend (engine/device) over the
// devices open opens: a device loader's stages are the device sampler
// stage (Sampler, OutputDevice) and, when node data is asked for, a
// Gatherer (the hot rows the options ask for in device memory, the rest
// read in place from pinned host memory). The CUDA library registers it
// over OpenGPU (gpu.go); the emulator's tests over the emulator.
func NewBackend(open func(ordinal int) (Device, error)) device.Backend { return backend{open} }

type backend struct {
	open func(ordinal int) (Device, error)
}

// stage is a Sampler as the engine's device.Sampler (its forks are).
type stage struct{ *Sampler }

func (s stage) Fork(threads int) (device.Sampler, error) {
	f, err := s.Sampler.Fork(threads)
	if err != nil {
		return nil, err
	}
	return stage{f}, nil
}

var (
	_ device.Sampler        = stage{}
	_ pipeline.Materializer = stage{}
)

func (b backend) Open(r device.Request) (device.Stages, error) {
	dev, err := b.open(r.Options.Ordinal)
	if err != nil {
		return device.Stages{}, fmt.Errorf("CUDA device %d: %w", r.Options.Ordinal, err)
	}
	var s *Sampler
	var gat *Gatherer
	teardown := func() error {
		var errs []error
		if gat != nil {
			errs = append(errs, gat.Close())
		}
		if s != nil {
			errs = append(errs, s.Close())
		}
		return errors.Join(append(errs, dev.Close())...)
	}
	fail := func(err error) (device.Stages, error) { return device.Stages{}, errors.Join(err, teardown()) }
	o := r.Options
	if s, err = NewSampler(dev, r.Part, r.Sample, SamplerOptions{Output: OutputDevice, Placement: o.Topology, Reserve: o.Reserve}); err != nil {
		return fail(err)
	}
	var store feature.Gatherer
	if len(r.Names) > 0 {
		gopt := GatherOptions{Names: r.Names}
		if o.HotOn {
			gopt.Policy, gopt.Graph, gopt.Size = "degree", r.Part.Graph, o.Hot
		}
		if gat, err = NewGatherer(dev, r.Store, gopt); err != nil {
			return fail(err)
		}
		store = gat
	}
	return device.Stages{Sampler: stage{s}, Store: store, Device: dev, Close: teardown}, nil
}
