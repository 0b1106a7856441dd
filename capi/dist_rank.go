package main

/*
#include <stdlib.h>
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"io"
	"unsafe"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/distributed"
	"github.com/graphferry/graphferry/engine/mem"
)

//export gfgo_part_open
func gfgo_part_open(dir *C.char, rank C.int32_t, flags C.uint32_t, out *C.uintptr_t) C.int {
	return call("gf_part_open", func() error {
		if out == nil {
			return errorf(gfEInval, "out_part is NULL")
		}
		*out = 0
		d, err := goString(dir, "dir")
		if err != nil {
			return err
		}
		if flags&^C.GF_PART_VERIFY != 0 {
			return errorf(gfEInval, "flags = %#x has unknown bits (known: GF_PART_VERIFY)", uint32(flags))
		}
		p, err := distributed.OpenPart(d, int(rank), dataset.OpenOptions{VerifyChecksums: flags&C.GF_PART_VERIFY != 0})
		if err != nil {
			return err
		}
		putHandle(out, newHandle(kindPart, p))
		return nil
	})
}

//export gfgo_part_close
func gfgo_part_close(h C.uintptr_t) {
	call("gf_part_close", func() error {
		if p, ok := forget[*distributed.Part](kindPart, h); ok {
			return p.Close()
		}
		return nil
	})
}

//export gfgo_part_get_info
func gfgo_part_get_info(h C.uintptr_t, out *C.gf_part_info) C.int {
	return call("gf_part_get_info", func() error {
		p, err := lookup[*distributed.Part](kindPart, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_info is NULL")
		}
		if size := uintptr(out.struct_size); size != unsafe.Sizeof(C.gf_part_info{}) {
			return errorf(gfEInval, "out_info->struct_size = %d (want sizeof(gf_part_info) = %d)", size, unsafe.Sizeof(C.gf_part_info{}))
		}
		*out = C.gf_part_info{
			struct_size: out.struct_size, rank: C.int32_t(p.Rank()), num_parts: C.int32_t(p.Parts()),
			layout: C.int32_t(p.Layout()), num_hops: C.int32_t(p.Hops()), num_nodes: C.int64_t(p.NumNodes()),
			num_owned: C.int64_t(p.NumOwned()), num_edges: C.int64_t(p.NumEdges()),
		}
		return nil
	})
}

//export gfgo_part_owned_nodes
func gfgo_part_owned_nodes(h C.uintptr_t, out **C.DLManagedTensor) C.int {
	return call("gf_part_owned_nodes", func() error {
		p, err := lookup[*distributed.Part](kindPart, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_tensor is NULL")
		}
		*out = nil
		ids := p.OwnedNodes()
		buf, err := cAlloc{}.Alloc(8 * len(ids))
		if err != nil {
			return err
		}
		copy(buf, mem.Bytes(ids))
		return exportOut(mem.Tensor{DType: mem.Int64, Shape: []int64{int64(len(ids))}, Data: buf}, out)
	})
}

//export gfgo_part_get_node_data
func gfgo_part_get_node_data(h C.uintptr_t, name *C.char, out **C.DLManagedTensor) C.int {
	return getNodeData("gf_part_get_node_data", kindPart, h, name, out, (*distributed.Part).OwnedNodeData)
}

//export gfgo_part_node_data_names
func gfgo_part_node_data_names(h C.uintptr_t, out **C.char) C.int {
	return nodeDataNames("gf_part_node_data_names", kindPart, h, out, (*distributed.Part).NodeDataNames)
}

//export gfgo_loader_open_part
func gfgo_loader_open_part(h C.uintptr_t, seedsT *C.DLTensor, o *C.gf_loader_options, c *C.gf_comm, out *C.uintptr_t) C.int {
	return call("gf_loader_open_part", func() error {
		p, err := lookup[*distributed.Part](kindPart, h)
		if err != nil {
			return err
		}
		// loaderArgs reads a loader's arguments for a graph handle: the
		// part's graph is named by a handle of its own for the call only.
		gh := newHandle(kindGraph, p.Graph())
		defer forget[*core.Graph](kindGraph, C.uintptr_t(gh))
		_, seeds, req, cfg, err := loaderArgs(C.uintptr_t(gh), seedsT, o, out, false)
		if err != nil {
			return err
		}
		return openCommLoader(c, cfg.allocator, "options->allocator", out, func(hc comm.Comm, a loaderAlloc) (*core.Loader, error) {
			return p.OpenLoader(hc, seeds, req, cfg.opts, a)
		})
	})
}

//export gfgo_part_set_node_time
func gfgo_part_set_node_time(h C.uintptr_t, t *C.DLTensor, c *C.gf_comm) C.int {
	return call("gf_part_set_node_time", func() error {
		p, err := lookup[*distributed.Part](kindPart, h)
		if err != nil {
			return err
		}
		v, err := int64Vector(t, "time")
		if err != nil {
			return err
		}
		if c == nil {
			return p.SetNodeTime(v)
		}
		hc, err := hostComm(c)
		if err != nil {
			return err
		}
		if cl, ok := hc.(io.Closer); ok {
			defer cl.Close()
		}
		return p.ShareNodeTime(hc, v)
	})
}

//export gfgo_part_set_edge_time
func gfgo_part_set_edge_time(h C.uintptr_t, t *C.DLTensor) C.int {
	return call("gf_part_set_edge_time", func() error {
		p, err := lookup[*distributed.Part](kindPart, h)
		if err != nil {
			return err
		}
		v, err := int64Vector(t, "time")
		if err != nil {
			return err
		}
		return p.SetEdgeTime(v)
	})
}
