// Package dataset is the engine's on-disk dataset layout: a directory
// holding graphferry.json (Meta: counts, the feature matrix's description,
// the size and CRC-32C of every file), edges.arrow (the edge table, edge
// id = row), nodes.arrow (labels, masks and other node columns), feat.bin
// (a raw, memory-mappable feature matrix) and, for a typed dataset, the
// node and edge types and their per-type arrays (typed.go). Open reads and
// checks one (sizes always, checksums on demand: a damaged or changed file
// is an error wrapping errs.ErrIO, never a different graph); Write writes
// one.
//
// The formats of the single files are engine/fileformat's; converting the
// .npy layout into this one is engine/convert's, and splitting a dataset
// into per-rank folders engine/rankpart's. It imports those below it
// (fileformat, graph, mem, feature, errs, internal/fileio), none above
// (engine/layering_test.go).
package dataset
