// Package rankpart splits a dataset (engine/dataset) into one folder per
// rank for distributed training, and reads one rank's folder back.
//
// Partition (a Partitioner) writes DST/partition.json (PartMeta: the
// method, the layout, the edge cut, the size and CRC-32C of every file),
// DST/assignment.npy (the rank of every node) and DST/part-<r>/, a dataset
// over rank r's local nodes with its id maps (global_ids.npy,
// global_eids.npy) and, in the dsp and hybrid layouts, the owned nodes'
// features (feat.npy). Layout says what a folder holds: DSP's patches
// (owned nodes and their in-edges), PaGraph's self-reliant
// neighbourhoods, or FastSample's hybrid (the whole topology, the owned
// features). OpenPart reads what one rank needs and nothing of the other
// ranks' folders, checking every file against partition.json.
//
// A typed (heterogeneous) source is partitioned the same way (see typed.go
// for the layout): partition.json records its types, every rank's folder
// stays an untyped dataset whose id maps give each local node's type and
// each local edge's relation by offset lookup on its global id, and the
// per-type node data is written per rank beside it (PartRank.NodeArrays).
// OpenPart checks every local edge against the types and every per-type
// array against the rank's nodes of its type (errors wrap ErrTypes).
//
// Turning an opened Part into a graph that samples with the other ranks is
// engine/distributed's business. It imports dataset, fileformat,
// partition, graph, feature, mem and internal/fileio (engine/layering_test.go).
package rankpart
