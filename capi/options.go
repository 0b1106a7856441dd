package main

/*
#include <stdlib.h>
#include "graphferry.h"
*/
import "C"

import (
	"reflect"
	"runtime"
	"unsafe"
)

// structLayout says which struct_size values a struct accepts: any from the
// end of the last field of its first layout up to today's sizeof. A program
// compiled against an older header passes the older sizeof; the fields it
// knows are read and the ones appended since read as zero (every field's
// zero value is its default). The layouts come from the header
// (boundary_gen.go: the earlier layouts it marks, made by
// python/tools/cgen.py).
type structLayout struct {
	name string
	// min is the offset just past the last field of the first layout.
	min uintptr
	// size is sizeof today.
	size uintptr
	// ends are the offsets just past each field of today's layout,
	// ascending: only whole fields are read.
	ends []uintptr
	// refused are sizes no released layout had that an unreleased draft
	// did (with other fields), by what to call them in the message.
	refused map[uintptr]string
	// older maps the sizeof of each earlier layout to the end of its last
	// field when the two differ: its trailing padding (where today's
	// layout may hold a field) is not read, since C does not promise that
	// padding is zeroed.
	older map[uintptr]uintptr
	// firstSize is sizeof of the first layout.
	firstSize uintptr
}

// fields lists the named fields of the C struct type t (cgo's padding
// fields, named _, are skipped).
func fields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.Name != "_" {
			out = append(out, f)
		}
	}
	return out
}

// newLayout describes the struct of type today (a C struct value) whose
// earlier layouts, oldest first, held its first earlier[i] fields (the
// header marks them: boundary_gen.go). Fields are only appended, so an
// earlier layout is a prefix of today's: its last field ends where today's
// same field does, and its sizeof is that end rounded up to the largest
// alignment of its fields, as C lays a struct out.
func newLayout(name string, today any, earlier ...int) *structLayout {
	t := reflect.TypeOf(today)
	fs := fields(t)
	ends := make([]uintptr, len(fs))
	for i, f := range fs {
		ends[i] = f.Offset + f.Type.Size()
	}
	l := &structLayout{name: name, size: t.Size(), ends: ends, older: map[uintptr]uintptr{}}
	l.min, l.firstSize = ends[len(ends)-1], l.size
	for i, n := range earlier {
		align := uintptr(1)
		for _, f := range fs[:n] {
			align = max(align, uintptr(f.Type.Align()))
		}
		end := ends[n-1]
		size := (end + align - 1) / align * align
		if i == 0 {
			l.min, l.firstSize = end, size
		}
		if size != end {
			l.older[size] = end
		}
	}
	return l
}

// gf_loader_options of an early 0.1.0 draft (gf_sample_options embedded by
// value) had sizeof 104, which today's layout also ends a field at.
func init() {
	loaderOptionsLayout.refused = map[uintptr]string{104: "an early 0.1.0 draft's layout (gf_sample_options embedded by value), which is refused"}
}

// readLength returns how many leading bytes of a struct of struct_size
// bytes to read, or false if struct_size is outside the accepted range.
func (l *structLayout) readLength(structSize uintptr) (uintptr, bool) {
	if structSize < l.min || structSize > l.size {
		return 0, false
	}
	if n, ok := l.older[structSize]; ok {
		return n, true
	}
	n := uintptr(0)
	for _, end := range l.ends {
		if end <= structSize {
			n = end
		}
	}
	return n, true
}

// readOptions copies the caller's options struct *p, whose first field is
// uint32_t struct_size, into a zeroed struct of today's layout and returns
// the copy: fields the caller's (older) layout lacks read as zero, and no
// byte past the caller's struct_size is read. A nil p gives nil. arg names
// the argument in error messages.
func readOptions[T any](p *T, arg string, l *structLayout) (*T, error) {
	if p == nil {
		return nil, nil
	}
	size := uintptr(*(*uint32)(unsafe.Pointer(p)))
	if what, ok := l.refused[size]; ok {
		return nil, errorf(gfEInval, "%s->struct_size = %d is %s; zero-initialise the struct and set struct_size = sizeof(%s)", arg, size, what, l.name)
	}
	n, ok := l.readLength(size)
	if !ok {
		return nil, errorf(gfEInval, "%s->struct_size = %d is outside the accepted range [%d, %d] of %s sizes (zero-initialise the struct and set struct_size = sizeof(%s))",
			arg, size, l.min, l.size, l.name, l.name)
	}
	out := new(T)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(out)), n), unsafe.Slice((*byte)(unsafe.Pointer(p)), n))
	return out, nil
}

// cTable copies a caller's table of callbacks (read by readOptions) into C
// memory, freed once owner is unreachable: C code calls the functions
// through the copy, so that it never reads Go memory (memcheck may take
// a stretch of the Go heap for a dead goroutine stack and report C's
// reads of it: include/graphferry-valgrind.supp), and Go never holds the
// user value in a pointer slot of its own. Whoever calls through the copy
// keeps owner alive until the call returns (runtime.KeepAlive).
func cTable[T, O any](owner *O, t *T) (*T, error) {
	n := unsafe.Sizeof(*t)
	p := C.malloc(C.size_t(n))
	if p == nil {
		return nil, errorf(gfENoMem, "out of memory for a copy of a %d-byte callback table", n)
	}
	// Bytes, not a typed store: no write barrier on the malloc'd words.
	copy(unsafe.Slice((*byte)(p), n), unsafe.Slice((*byte)(unsafe.Pointer(t)), n))
	runtime.AddCleanup(owner, func(p unsafe.Pointer) { C.free(p) }, p)
	return (*T)(p), nil
}
