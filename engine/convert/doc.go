// Package convert converts a dataset in the .npy layout (indptr.npy,
// indices.npy, feat.npy, label.npy, split indices or masks and meta.json,
// the layout of the shared test datasets) into the engine's dataset layout
// (engine/dataset): ConvertNPY. It imports dataset, fileformat (to read
// the arrays), graph, mem and internal/fileio (engine/layering_test.go); nothing
// imports it but the C API (gf_dataset_convert_npy).
package convert
