// Package engine holds no code: this test pins the layering of the
// engine's packages, which their package documents state one by one.
package engine

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is the module path; engine packages are module + "/engine/...".
const module = "github.com/graphferry/graphferry"

// layers is the engine's layering, lowest first. A package may import
// engine packages of lower layers only: never one of its own layer or
// above. A package's in-package tests (package x in x_test.go files) are
// held to the same rule; external test packages (package x_test) are
// clients and may import anything in the engine.
//
//  0. the base: error classes, memory, the random generator, parallel
//     loops, the statistical test helpers, the garbage collector helpers of
//     the cgo tests (gctest), and the row cache of the disk tier
//     (rowcache);
//  1. the data structures and the wire: the CSC graph, node data stores and
//     the gatherer interfaces, communicators, the exchange coordinator; the
//     bounds of what callers pass (bounds);
//  2. what is built on one of them: the partition into patches, the
//     link-prediction blocks, the dataset packages' file plumbing (and
//     their test helpers);
//  3. sampling (CSP over a communicator) and the single-file formats;
//  4. the on-disk dataset layout;
//  5. what reads datasets or runs samplers: the pipeline, the hot tier
//     (cache, which must not import the pipeline), npy conversion, rank
//     partitioning, the synthetic generators;
//  6. the edge-level loaders' batches (linkload, a pipeline Maker), the
//     subgraph loaders' (subload, another), the device seam (device: a device
//     backend's stages and its batches' device memory), and the test graph that core's and distributed's tests share;
//  7. the Graph facade and its node loaders (core);
//  8. distributed loading over a core.Graph.
var layers = [][]string{
	{"errs", "mem", "rng", "internal/par", "stattest", "gctest", "rowcache"},
	{"graph", "feature", "comm", "coordinator", "diskio", "bounds"},
	{"partition", "linkpred", "internal/fileio", "internal/datatest"},
	{"sample", "fileformat"},
	{"dataset"},
	{"pipeline", "cache", "convert", "rankpart", "gen"},
	{"internal/testgraph", "linkload", "subload", "device"},
	{"core"},
	{"distributed"},
}

// testOnly are packages that only test files may import.
var testOnly = []string{"stattest", "gctest", "internal/datatest", "internal/testgraph"}

// outside are the module's packages outside the engine that no engine
// package may import: the C API, the CUDA backend and the benchmarks sit
// above it.
var outside = []string{"capi", "cuda", "bench"}

// importsOf parses the imports of every .go file of the engine, by package
// directory (relative to engine/, "/" separated): non-test files, in-package
// test files, external test files.
type pkgImports struct {
	code, tests, xtests map[string]bool
}

func importsOf(t *testing.T) map[string]*pkgImports {
	t.Helper()
	out := map[string]*pkgImports{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." {
			return nil // this test
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		p := out[dir]
		if p == nil {
			p = &pkgImports{code: map[string]bool{}, tests: map[string]bool{}, xtests: map[string]bool{}}
			out[dir] = p
		}
		set := p.code
		if strings.HasSuffix(path, "_test.go") {
			set = p.tests
			if strings.HasSuffix(f.Name.Name, "_test") {
				set = p.xtests
			}
		}
		for _, imp := range f.Imports {
			s, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if rel, ok := strings.CutPrefix(s, module+"/"); ok {
				set[rel] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// layerOf returns the layer of engine package pkg ("engine/..."), or -1.
func layerOf(pkg string) int {
	rel, ok := strings.CutPrefix(pkg, "engine/")
	if !ok {
		return -1
	}
	for i, l := range layers {
		if slices.Contains(l, rel) {
			return i
		}
	}
	return -1
}

func TestLayering(t *testing.T) {
	pkgs := importsOf(t)
	require.NotEmpty(t, pkgs)
	for dir, p := range pkgs {
		pkg := "engine/" + dir
		layer := layerOf(pkg)
		if layer < 0 {
			t.Errorf("%s is in no layer of layering_test.go: place it there (and say in its package document what it may import)", pkg)
			continue
		}
		check := func(imports map[string]bool, what string, layered bool) {
			for imp := range imports {
				for _, o := range outside {
					if imp == o || strings.HasPrefix(imp, o+"/") {
						t.Errorf("%s (%s) imports %s: nothing in engine/ may import capi, cuda or bench", pkg, what, imp)
					}
				}
				if !strings.HasPrefix(imp, "engine/") {
					continue
				}
				if what == "code" && slices.Contains(testOnly, strings.TrimPrefix(imp, "engine/")) {
					t.Errorf("%s imports %s, which only tests may import", pkg, imp)
				}
				if !layered {
					continue
				}
				switch l := layerOf(imp); {
				case l < 0:
					t.Errorf("%s (%s) imports %s, which is in no layer", pkg, what, imp)
				case l >= layer:
					t.Errorf("%s (%s, layer %d) imports %s (layer %d): a package may import lower layers only", pkg, what, layer, imp, l)
				}
			}
		}
		check(p.code, "code", true)
		check(p.tests, "tests", true)
		check(p.xtests, "external tests", false)
	}
	// Every layered package exists, so that the list stays the truth.
	for _, l := range layers {
		for _, rel := range l {
			_, err := os.Stat(filepath.FromSlash(rel))
			require.NoError(t, err, "layering_test.go lists %s", rel)
		}
	}
}
