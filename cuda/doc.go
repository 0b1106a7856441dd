// Package cuda is graphferry's CUDA device backend: node-wise sampling,
// append-unique and node data gathering as CUDA kernels (cuda/kernels) that
// give, for the same seed, the same batches as the CPU engine
// (engine/sample, engine/pipeline): nodes in the same order, the same
// blocks, the same edge ids, the same rows.
//
// The package has two halves:
//
//   - Device-independent code (no build tag): the Device, Stream and Event
//     interfaces; a stream-ordered device memory Pool; the Sampler, a
//     pipeline.BatchSampler and pipeline.Materializer that samples a batch
//     on a Device with one host synchronisation, its forks sharing the
//     topology (in device memory or pinned host memory) with a stream and a
//     pool each, and makes batches in device memory or copied to the host;
//     the Gatherer, feature tiers (hot rows in device memory, the rest read
//     in place from pinned host memory by one gather kernel); SelfCheck and
//     PipelineCheck, which compare the kernels' batches and the mode-2
//     pipeline with the CPU engine's; EpochBench and MeasureGather. It is
//     pure Go and is tested in every build against an emulated device: the
//     kernels' own source compiled as host C++ (cuda/emu), driven over a
//     pipe.
//   - The GPU Device (build tag cuda, gpu.go): gorgonia.org/cu and the CUDA
//     driver API, the primary context (the one PyTorch uses), non-blocking
//     streams, events, pinned and registered host memory, the kernels as
//     PTX embedded at build time (make lib-cuda compiles cuda/kernels with
//     NVRTC for compute_70).
//
// gorgonia.org/cu calls cuInit in its package init and exits the process when
// that fails, so only the CUDA library (libgraphferry_cuda.so, built with
// -tags cuda) links it; the default library never imports this package.
//
// Layer-wise, disjoint, temporal and typed sampling and random walks stay on
// the CPU engine.
package cuda
