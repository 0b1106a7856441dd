// Package fileformat reads and writes the file formats the engine's
// datasets are made of, each file on its own (which files make a dataset
// is engine/dataset's business):
//
//   - NumPy .npy arrays, memory-mapped (npy.go);
//   - Arrow IPC files, read in parallel after their footer and record
//     batch bodies are checked, so that a damaged file is an error and
//     never an allocation crash or silently different values (arrowio.go,
//     arrowverify.go, arrowbody.go), and written ZSTD-compressed;
//   - edge tables, Arrow IPC files of src, dst and optional weight columns
//     (edges.go), and typed edge tables, whose relation column and type
//     metadata make a heterogeneous graph (typed_edges.go);
//   - the typed topology's metadata (Types, TypesJSON), the JSON that typed
//     edge tables carry in their schema and graphferry.json in its
//     node_types and edge_types (types.go).
//
// Errors read "dataset: ...", as they did when this was part of
// engine/dataset. It imports errs, graph, mem, feature (a name check) and
// internal/fileio and internal/par; nothing of the layouts above it
// (engine/layering_test.go).
package fileformat
