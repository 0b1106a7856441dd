package main

/*
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"github.com/graphferry/graphferry/engine/graph"
)

// The edge table arrives through the Arrow C Data Interface. It is read in
// place (borrowed) and copied into the graph; only once the graph is built
// are the caller's structs released, so that a rejected table is left to the
// caller untouched.

const maxArrowChildren = 64

type arrowColumn struct {
	format string
	array  *C.struct_ArrowArray
}

func arrowColumns(schema *C.struct_ArrowSchema, array *C.struct_ArrowArray) (map[string]arrowColumn, int64, error) {
	if schema == nil {
		return nil, 0, errorf(gfEInval, "schema is NULL")
	}
	if array == nil {
		return nil, 0, errorf(gfEInval, "array is NULL")
	}
	if schema.release == nil {
		return nil, 0, errorf(gfEInval, "schema was already released")
	}
	if array.release == nil {
		return nil, 0, errorf(gfEInval, "array was already released")
	}
	if schema.format == nil || C.GoString(schema.format) != "+s" {
		return nil, 0, errorf(gfEType, "schema must describe a struct array (a record batch; format \"+s\")")
	}
	if schema.n_children < 0 || schema.n_children > maxArrowChildren || schema.n_children != array.n_children {
		return nil, 0, errorf(gfEInval, "schema has %d children and array %d (want equal, at most %d)", int64(schema.n_children), int64(array.n_children), maxArrowChildren)
	}
	if array.null_count > 0 || array.length < 0 || array.offset < 0 {
		return nil, 0, errorf(gfEInval, "the table array has length %d, offset %d and %d nulls (want no nulls)", int64(array.length), int64(array.offset), int64(array.null_count))
	}
	n := int(schema.n_children)
	cols := map[string]arrowColumn{}
	if n == 0 {
		return cols, int64(array.length), nil
	}
	if schema.children == nil || array.children == nil {
		return nil, 0, errorf(gfEInval, "schema or array has NULL children")
	}
	sch := unsafe.Slice(schema.children, n)
	arr := unsafe.Slice(array.children, n)
	for i := 0; i < n; i++ {
		if sch[i] == nil || arr[i] == nil || sch[i].format == nil {
			return nil, 0, errorf(gfEInval, "child %d of the table is NULL", i)
		}
		name := ""
		if sch[i].name != nil {
			name = C.GoString(sch[i].name)
		}
		cols[name] = arrowColumn{format: C.GoString(sch[i].format), array: arr[i]}
	}
	return cols, int64(array.length), nil
}

// arrowInts copies an int64 ("l") or int32 ("i") column without nulls.
func arrowInts(cols map[string]arrowColumn, name string, rows, tableOffset int64) ([]int64, error) {
	c, ok := cols[name]
	if !ok {
		return nil, errorf(gfEInval, "the edge table has no column %q", name)
	}
	a := c.array
	if a.length != C.int64_t(rows) {
		return nil, errorf(gfEInval, "column %q has %d rows, the table %d", name, int64(a.length), rows)
	}
	if a.null_count != 0 {
		return nil, errorf(gfEInval, "column %q has nulls (null_count = %d)", name, int64(a.null_count))
	}
	if a.n_buffers != 2 || a.buffers == nil || a.offset < 0 {
		return nil, errorf(gfEInval, "column %q is not a primitive array (n_buffers = %d)", name, int64(a.n_buffers))
	}
	off := int64(a.offset) + tableOffset
	out := make([]int64, rows)
	if rows == 0 {
		return out, nil
	}
	data := unsafe.Slice(a.buffers, 2)[1]
	if data == nil {
		return nil, errorf(gfEInval, "column %q has a NULL data buffer", name)
	}
	switch c.format {
	case "l":
		copy(out, unsafe.Slice((*int64)(data), off+rows)[off:])
	case "i":
		for i, v := range unsafe.Slice((*int32)(data), off+rows)[off:] {
			out[i] = int64(v)
		}
	default:
		return nil, errorf(gfEType, "column %q has Arrow format %q, want int64 (\"l\") or int32 (\"i\")", name, c.format)
	}
	return out, nil
}

func arrowWeights(cols map[string]arrowColumn, rows, tableOffset int64) ([]float32, error) {
	c, ok := cols["weight"]
	if !ok {
		return nil, nil
	}
	a := c.array
	if a.length != C.int64_t(rows) || a.null_count != 0 || a.n_buffers != 2 || a.buffers == nil || a.offset < 0 {
		return nil, errorf(gfEInval, "column \"weight\" must be a float array of %d rows without nulls", rows)
	}
	out := make([]float32, rows)
	if rows == 0 {
		return out, nil
	}
	data := unsafe.Slice(a.buffers, 2)[1]
	if data == nil {
		return nil, errorf(gfEInval, "column \"weight\" has a NULL data buffer")
	}
	off := int64(a.offset) + tableOffset
	switch c.format {
	case "f":
		copy(out, unsafe.Slice((*float32)(data), off+rows)[off:])
	case "g":
		for i, v := range unsafe.Slice((*float64)(data), off+rows)[off:] {
			if v > math.MaxFloat32 {
				return nil, errorf(gfEInval, "weight[%d] = %g does not fit in float32", i, v)
			}
			out[i] = float32(v)
		}
	default:
		return nil, errorf(gfEType, "column \"weight\" has Arrow format %q, want float32 (\"f\") or float64 (\"g\")", c.format)
	}
	return out, nil
}

//export gfgo_graph_from_arrow
func gfgo_graph_from_arrow(schema *C.struct_ArrowSchema, array *C.struct_ArrowArray, o *C.gf_graph_options, out *C.uintptr_t) C.int {
	return call("gf_graph_from_arrow", func() error {
		if out == nil {
			return errorf(gfEInval, "out_graph is NULL")
		}
		*out = 0
		popt, coopt, _, err := checkGraphOptions(o, inputEdges)
		if err != nil {
			return err
		}
		cols, rows, err := arrowColumns(schema, array)
		if err != nil {
			return err
		}
		src, err := arrowInts(cols, "src", rows, int64(array.offset))
		if err != nil {
			return err
		}
		dst, err := arrowInts(cols, "dst", rows, int64(array.offset))
		if err != nil {
			return err
		}
		w, err := arrowWeights(cols, rows, int64(array.offset))
		if err != nil {
			return err
		}
		g, err := graph.FromCOO(src, dst, w, coopt)
		if err != nil {
			return err
		}
		if err := newGraph(g, popt, out); err != nil {
			return err
		}
		C.gf__release_arrow(schema, array)
		return nil
	})
}
