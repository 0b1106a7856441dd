package fileio

import (
	"encoding/json"
	"fmt"
	"hash/crc32"

	"github.com/graphferry/graphferry/engine/errs"
)

// A metadata file (graphferry.json, partition.json) declares what its data
// files hold: which files there are with their sizes and sums, and the
// dtype and shape each array is read as. The file sums cover the bytes of
// the data files; the declared sum covers the declarations themselves, so
// that an edit of the metadata file that stays self-consistent (a feature
// declared 3-D over the same bytes, an entry removed) is an error unless
// the dataset is rewritten through graphferry's own writers.

// DeclaredKey is the metadata files' key of the declared sum.
const DeclaredKey = "declared"

// DeclaredSum is the CRC-32C (8 hex digits) of decl's JSON encoding. decl
// is a struct built field by field from the metadata (never the metadata
// struct itself, which may gain fields), so that the sum of a file written
// by one version is the sum another version computes.
func DeclaredSum(decl any) (string, error) {
	js, err := json.Marshal(decl)
	if err != nil {
		return "", fmt.Errorf("dataset: %w", err)
	}
	return fmt.Sprintf("%08x", crc32.Checksum(js, castagnoli)), nil
}

// ReadDeclared returns the declared sum recorded in the metadata file
// image raw ("" for a file written before it was recorded).
func ReadDeclared(raw []byte) string {
	var d struct {
		Declared string `json:"declared"`
	}
	_ = json.Unmarshal(raw, &d) // the caller parsed raw already
	return d.Declared
}

// CheckDeclared compares the declared sum recorded in path (recorded) with
// the one decl gives; "" recorded passes (a file written before sums of
// declarations were recorded).
func CheckDeclared(path, recorded string, decl any) error {
	if recorded == "" {
		return nil
	}
	got, err := DeclaredSum(decl)
	if err != nil {
		return err
	}
	if got != recorded {
		return fmt.Errorf("dataset: %s: its declarations (counts, files, dtypes, shapes, types) sum to %s, the file records %q: "+
			"it was edited by hand; rewrite the dataset with graphferry's tools (%w)", path, got, recorded, errs.ErrIO)
	}
	return nil
}
