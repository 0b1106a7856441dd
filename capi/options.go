package main

/*
#include <stdint.h>
#include "graphferry.h"

// The first released layout (0.1.0) of each options struct that has grown
// since, declared here so that the compiler computes its size and offsets
// for this platform. Fields are only ever appended (the header's promise),
// so an old layout is a prefix of today's.
typedef struct {
  uint32_t struct_size;
  int32_t num_hops;
  const int32_t *fanouts;
  int32_t replace;
  int32_t frontier;
  uint64_t seed;
  int32_t num_threads;
} gf__sample_options_0_1_0;

// The layout of 0.2 (up to layer_dependency, sizeof 64 on LP64): its
// trailing padding is where num_relations now lies.
typedef struct {
  uint32_t struct_size;
  int32_t num_hops;
  const int32_t *fanouts;
  int32_t replace;
  int32_t frontier;
  uint64_t seed;
  int32_t num_threads;
  int32_t scheme;
  int32_t biased;
  int32_t layer_without_replacement;
  const DLTensor *exclude_edges;
  int32_t layer_dependency;
} gf__sample_options_layer_dependency;
*/
import "C"

import (
	"reflect"
	"unsafe"
)

// structLayout says which struct_size values an options struct accepts: any
// from the end of the last field of its first released layout up to today's
// sizeof. A program compiled against an older header passes the older
// sizeof; the fields it knows are read and the ones appended since read as
// zero (every field's zero value is its default).
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
	// field: its trailing padding (where today's layout may hold a field)
	// is not read, since C does not promise that padding is zeroed.
	older map[uintptr]uintptr
}

// fieldEnds lists the offset just past each named field of the C struct
// type of v (cgo's padding fields, named _, are skipped).
func fieldEnds(v any) []uintptr {
	t := reflect.TypeOf(v)
	var ends []uintptr
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "_" {
			continue
		}
		ends = append(ends, f.Offset+f.Type.Size())
	}
	return ends
}

// newLayout describes a struct whose first released layout is today's.
func newLayout(name string, v any) *structLayout {
	ends := fieldEnds(v)
	return &structLayout{name: name, min: ends[len(ends)-1], size: reflect.TypeOf(v).Size(), ends: ends}
}

var (
	graphOptionsLayout = func() *structLayout {
		l := newLayout("gf_graph_options", C.gf_graph_options{})
		// The first layout ended with flags (44), padded to 48; the memory
		// budget and tier fields came after.
		l.min = unsafe.Offsetof(C.gf_graph_options{}.flags) + unsafe.Sizeof(C.gf_graph_options{}.flags)
		l.older = map[uintptr]uintptr{unsafe.Offsetof(C.gf_graph_options{}.memory_budget): l.min}
		return l
	}()
	walkOptionsLayout   = newLayout("gf_walk_options", C.gf_walk_options{})
	loaderOptionsLayout = func() *structLayout {
		l := newLayout("gf_loader_options", C.gf_loader_options{})
		// The first layout ended with label_names; seed_times came after.
		l.min = unsafe.Offsetof(C.gf_loader_options{}.label_names) + unsafe.Sizeof(C.gf_loader_options{}.label_names)
		// Releases had 72, 80 (seed_times) and 88 (allocator), then the
		// device fields (device, stream, the hot tier, the topology's
		// placement: 124) and coo (128); 104 was an early 0.1.0 draft's
		// sizeof, with gf_sample_options by value.
		l.refused = map[uintptr]string{104: "an early 0.1.0 draft's layout (gf_sample_options embedded by value), which is refused"}
		return l
	}()
	sampleOptionsLayout = func() *structLayout {
		l := newLayout("gf_sample_options", C.gf_sample_options{})
		first := fieldEnds(C.gf__sample_options_0_1_0{})
		l.min = first[len(first)-1]
		ld := fieldEnds(C.gf__sample_options_layer_dependency{})
		l.older = map[uintptr]uintptr{
			sizeofSample010: l.min,
			unsafe.Sizeof(C.gf__sample_options_layer_dependency{}): ld[len(ld)-1],
		}
		return l
	}()
	// sizeofSample010 is sizeof(gf_sample_options) of 0.1.0's first layout.
	sizeofSample010 = unsafe.Sizeof(C.gf__sample_options_0_1_0{})
)

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
