package fileio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The tools that write a folder (a conversion, a generated dataset, a
// partition's rank folders) write into a folder of the caller's choosing.
// A folder that holds anything already is refused unless the caller asks
// to overwrite: its files would otherwise sit beside the new ones (the
// parts of a partition beside the source dataset's files, a conversion
// over an unrelated folder), and a folder that is the source, inside it or
// above it mixes outputs into inputs. Overwriting removes what the tool
// itself writes (Output.Owns) and nothing else; a source inside what would
// be removed is refused even then. PrepareOutput is the one check the
// three tools share (engine/convert, engine/gen, engine/rankpart).

// Output describes a tool's output folder (PrepareOutput).
type Output struct {
	// Tool names the tool in messages ("partition", "convert", "generate").
	Tool string
	// Sources are the folders the tool reads (none for generate).
	Sources []string
	// Overwrite writes into a folder that is not empty, or is a source,
	// inside one or above one: what Owns names is removed first.
	Overwrite bool
	// Owns says whether the entry name of the output folder (a folder when
	// dir) is something the tool writes, which overwriting removes.
	Owns func(name string, dir bool) bool
}

// PrepareOutput checks the output folder dst of o.Tool: a folder that
// holds anything, or that is one of o.Sources, inside one or above one, is
// an error naming it unless o.Overwrite (dst must be a folder or not
// exist). Nothing is changed until the tool calls ready, right before it
// writes (after reading and checking its input, so that a failed run
// leaves an older output whole): ready removes the entries o.Owns names
// (with o.Overwrite; never one that holds a source) and creates dst.
func PrepareOutput(dst string, o Output) (ready func() error, err error) {
	if dst == "" {
		return nil, fmt.Errorf("%s: no output folder given (an empty path)", o.Tool)
	}
	ask := fmt.Sprintf("ask to overwrite (the overwrite option, --overwrite) to write there anyway, replacing only what %s writes", o.Tool)
	out := resolved(dst)
	for _, src := range o.Sources {
		in := resolved(src)
		var where string
		switch {
		case out == in || sameFile(dst, src):
			where = "is the source folder"
		case inside(out, in):
			where = fmt.Sprintf("is inside the source folder %s", src)
		case inside(in, out):
			where = fmt.Sprintf("holds the source folder %s", src)
		default:
			continue
		}
		if !o.Overwrite {
			return nil, fmt.Errorf("%s: the output folder %s %s: outputs would mix with inputs; choose another folder, or %s", o.Tool, dst, where, ask)
		}
	}
	entries, err := os.ReadDir(dst)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: the output folder %s: %w", o.Tool, dst, err)
	}
	var owned []string
	if len(entries) > 0 && !o.Overwrite {
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		what := "is not empty"
		if slices.Contains(names, "graphferry.json") || slices.Contains(names, "partition.json") {
			what = "holds a dataset or a partition"
		}
		return nil, fmt.Errorf("%s: the output folder %s %s (%s); choose an empty or new folder, or %s", o.Tool, dst, what, listed(names), ask)
	}
	for _, e := range entries {
		if o.Owns == nil || !o.Owns(e.Name(), e.IsDir()) {
			continue
		}
		path := filepath.Join(dst, e.Name())
		for _, src := range o.Sources {
			if in, p := resolved(src), resolved(path); in == p || inside(in, p) {
				return nil, fmt.Errorf("%s: overwriting %s would remove %s, which holds the source folder %s: choose another folder", o.Tool, dst, path, src)
			}
		}
		owned = append(owned, path)
	}
	return func() error {
		for _, path := range owned {
			if err := os.RemoveAll(path); err != nil {
				return fmt.Errorf("%s: overwriting %s: %w", o.Tool, dst, err)
			}
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fmt.Errorf("%s: %w", o.Tool, err)
		}
		return nil
	}, nil
}

// resolved is path absolute with its symbolic links resolved, as far as it
// exists (the rest appended as it is).
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// inside says whether path lies strictly inside dir (both resolved).
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// sameFile says whether a and b both exist and are the same folder (a bind
// mount, a hard-linked path).
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// listed names up to three of names, and how many more.
func listed(names []string) string {
	slices.Sort(names)
	if len(names) <= 3 {
		return "holds " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("holds %s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}
