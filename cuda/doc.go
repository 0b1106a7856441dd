// Package cuda is graphferry's CUDA device backend: node-wise sampling and
// append-unique as CUDA kernels (cuda/kernels) that give, for the same seed,
// the same batches as the CPU engine (engine/sample): nodes in the same
// order, the same blocks, the same edge ids.
//
// The package has two halves:
//
//   - Device-independent code (no build tag): the Device interface (memory,
//     copies, kernel launches), a device memory pool, the Sampler that runs
//     a batch hop by hop on a Device, and SelfCheck, which compares the
//     Sampler's batches with the CPU engine's. It is pure Go and is tested
//     in every build against an emulated device: the kernels' own source
//     compiled as host C++ (cuda/emu), driven over a pipe.
//   - The GPU Device (build tag cuda, gpu.go): gorgonia.org/cu over the CUDA
//     driver API, the primary context (the one PyTorch uses), one
//     non-blocking stream, the kernels as PTX embedded at build time (make
//     lib-cuda compiles cuda/kernels with NVRTC for compute_80).
//
// gorgonia.org/cu calls cuInit in its package init and exits the process when
// that fails, so only the CUDA library (libgraphferry_cuda.so, built with
// -tags cuda) links it; the default library never imports this package.
//
// Layer-wise sampling and random walks stay on the CPU engine.
package cuda
