// Command capi is graphferry's C interface: built with
// `go build -buildmode=c-shared` into libgraphferry.so, it implements
// include/graphferry.h as a thin skin over the engine. It is the only package
// of graphferry that uses cgo.
//
// The public gf_* functions are defined in graphferry.c, which guards against
// use in a forked child and forwards to the gfgo_* exports here. The library
// exports only those gf_* functions (GF_API in the header): C code is
// compiled with hidden visibility, and the linker script graphferry.map.o
// makes every other symbol, Go's and cgo's included, local. Every export
// validates its arguments, converts them, calls the engine, and turns errors
// and panics into a status code plus a thread-local message. Handles given
// to C are opaque integers looked up in a registry, never Go pointers; every
// buffer handed to C is malloc'd.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -std=gnu99 -Wall -fvisibility=hidden -DGF_BUILD
#cgo LDFLAGS: ${SRCDIR}/graphferry.map.o
#include <stdlib.h>
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/errs"
)

func main() {}

// The engine's default thread count is this process's share of the host
// when a launcher started several ranks on it (LOCAL_WORLD_SIZE).
func init() { core.FitThreadsToHost(os.Getenv) }

// Status codes, mirroring include/graphferry.h.
const (
	gfOK         = C.GF_OK
	gfEInval     = C.GF_EINVAL
	gfEType      = C.GF_ETYPE
	gfENoMem     = C.GF_ENOMEM
	gfEBadHandle = C.GF_EBADHANDLE
	gfEState     = C.GF_ESTATE
	gfEIO        = C.GF_EIO
	gfENotSup    = C.GF_ENOTSUP
	gfEInternal  = C.GF_EINTERNAL
	gfECanceled  = C.GF_ECANCELED
	gfDone       = C.GF_DONE
	gfNotReady   = C.GF_NOT_READY
)

// apiError is an error with a status code.
type apiError struct {
	code C.int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func errorf(code C.int, format string, args ...any) error {
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}

// errDone ends an iteration (GF_DONE); it is not an error.
var errDone = errors.New("done")

// errNotReady ends a bounded wait that got nothing (GF_NOT_READY); it is not
// an error.
var errNotReady = errors.New("not ready")

// poisoned is set after a panic: the library's state can no longer be
// trusted, so every later call fails fast.
var poisoned atomic.Value // string: the first panic's message

func setError(msg string) {
	cs := C.CString(msg)
	C.gf__set_error(cs)
	C.free(unsafePointer(cs))
}

// call runs f as the body of the C function fn: it turns a returned error
// into a status code and a message prefixed with fn, and a panic into
// GF_EINTERNAL.
func call(fn string, f func() error) (rc C.int) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprintf("%s: internal error: %v", fn, r)
			if poisoned.CompareAndSwap(nil, msg) {
				fmt.Fprintf(os.Stderr, "graphferry: %s\n%s\n", msg, debug.Stack())
			}
			setError(msg + " (graphferry is disabled in this process; please report this bug)")
			rc = gfEInternal
		}
	}()
	if p := poisoned.Load(); p != nil {
		setError(fmt.Sprintf("%s: graphferry is disabled after an earlier internal error (%s)", fn, p))
		return gfEInternal
	}
	err := f()
	if err == nil {
		return gfOK
	}
	if err == errDone {
		return gfDone
	}
	if err == errNotReady {
		return gfNotReady
	}
	setError(fn + ": " + err.Error())
	return statusOf(err)
}

// statusOf maps an error to its status code: an apiError carries its own;
// an engine error by the class (engine/errs) it wraps; a file-system error
// is GF_EIO; anything else is an invalid argument or invalid data.
//
// errs.ErrClosed becomes GF_EBADHANDLE, not GF_ESTATE: the engine reports it
// when the object a handle names was closed before or during the call, and
// the handle is then unusable, which is what GF_EBADHANDLE tells the caller
// (the code a call made just after the close gets); GF_ESTATE would suggest
// that the object is alive and a later call may succeed.
func statusOf(err error) C.int {
	var ae *apiError
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &ae):
		return ae.code
	case errors.Is(err, errs.ErrIO), errors.As(err, &pathErr),
		errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return gfEIO
	case errors.Is(err, errs.ErrNoMem):
		return gfENoMem
	case errors.Is(err, errs.ErrState):
		return gfEState
	case errors.Is(err, errs.ErrClosed):
		return gfEBadHandle
	case errors.Is(err, errs.ErrNotSupported):
		return gfENotSup
	case errors.Is(err, errs.ErrType):
		return gfEType
	}
	return gfEInval
}

// ---------------------------------------------------------------------------
// Handles

type handleKind uint8

const (
	kindGraph handleKind = iota + 1
	kindLoader
	kindBatch
	kindEdgeSampler
	kindPart
)

func (k handleKind) String() string {
	switch k {
	case kindGraph:
		return "graph"
	case kindLoader:
		return "loader"
	case kindBatch:
		return "batch"
	case kindEdgeSampler:
		return "edge sampler"
	case kindPart:
		return "part"
	}
	return "unknown"
}

// handleStride spaces handle values so that the kind is in the low bits and
// a closed handle's number is never given out again.
const handleStride = 16

var registry = struct {
	sync.Mutex
	next uint64
	objs map[uint64]any
}{next: 1, objs: map[uint64]any{}}

func newHandle(kind handleKind, obj any) uint64 {
	registry.Lock()
	defer registry.Unlock()
	h := registry.next*handleStride + uint64(kind)
	registry.next++
	registry.objs[h] = obj
	return h
}

func badHandle(kind handleKind, h uint64) error {
	if h == 0 {
		return errorf(gfEBadHandle, "%s handle is NULL", kind)
	}
	if handleKind(h%handleStride) == kind && h/handleStride < registry.next {
		return errorf(gfEBadHandle, "%s handle %#x was already closed", kind, h)
	}
	return errorf(gfEBadHandle, "%#x is not a %s handle", h, kind)
}

func lookup[T any](kind handleKind, h C.uintptr_t) (T, error) {
	var zero T
	registry.Lock()
	obj, ok := registry.objs[uint64(h)]
	registry.Unlock()
	if !ok || handleKind(uint64(h)%handleStride) != kind {
		registry.Lock()
		err := badHandle(kind, uint64(h))
		registry.Unlock()
		return zero, err
	}
	return obj.(T), nil
}

// forget removes a handle from the registry and returns its object, or
// false if it was not registered (already closed: closing twice is a no-op).
func forget[T any](kind handleKind, h C.uintptr_t) (T, bool) {
	var zero T
	registry.Lock()
	defer registry.Unlock()
	obj, ok := registry.objs[uint64(h)]
	if !ok || handleKind(uint64(h)%handleStride) != kind {
		return zero, false
	}
	delete(registry.objs, uint64(h))
	return obj.(T), true
}

// liveHandles reports how many handles are open (used by tests).
func liveHandles() int {
	registry.Lock()
	defer registry.Unlock()
	return len(registry.objs)
}

// putHandle stores h through out, which the caller checked is non-nil.
func putHandle(out *C.uintptr_t, h uint64) { *out = C.uintptr_t(h) }
