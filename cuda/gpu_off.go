//go:build !cuda

package cuda

import "errors"

// Open returns the GPU device of the given ordinal; without the build tag
// cuda (the default library) there is none.
func Open(ordinal int) (Device, error) {
	return nil, errors.New("cuda: graphferry was built without CUDA (build tag cuda); use libgraphferry_cuda.so")
}
