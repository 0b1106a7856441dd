package sample

import (
	"fmt"
	"unsafe"
)

// Messages are little arrays of int64 carried as bytes by comm.Comm.
//
// shuffle (requester -> owner), one per owner with tasks:
//
//	[key, v_0, ..., v_{n-1}]              v: internal ids owned by the receiver
//
// reshuffle (owner -> requester), answering the tasks in the order received:
//
//	[c_0, ..., c_{n-1}, u_0, ..., u_{m-1}, e_0, ..., e_{m-1}]
//
// where c_i is the number of neighbours sampled for v_i, m = sum c_i, u the
// sampled neighbours (internal ids) and e their edge ids, task after task.
// An empty message (no tasks) is a nil buffer.

// int64Bytes views s as bytes (no copy).
func int64Bytes(s []int64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*8)
}

// bytesInt64 views b as int64s, copying only when b is not 8-byte aligned.
func bytesInt64(b []byte) ([]int64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("sample: received a message of %d bytes (want a multiple of 8)", len(b))
	}
	if len(b) == 0 {
		return nil, nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%8 == 0 {
		return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8), nil
	}
	s := make([]int64, len(b)/8)
	copy(int64Bytes(s), b)
	return s, nil
}
