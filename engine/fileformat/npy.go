package fileformat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// npyMagic starts every .npy file.
const npyMagic = "\x93NUMPY"

// NPY is a .npy array whose data is memory-mapped read-only from the file.
// Data aliases the mapping: it must not be written, and it is invalid after
// Close.
type NPY struct {
	DType mem.DType
	Shape []int64
	Data  []byte
	close func() error
}

// Tensor returns the array as a tensor aliasing the mapping.
func (n *NPY) Tensor() mem.Tensor { return mem.Tensor{DType: n.DType, Shape: n.Shape, Data: n.Data} }

// Close unmaps the file. It is idempotent.
func (n *NPY) Close() error {
	if n == nil || n.close == nil {
		return nil
	}
	c := n.close
	n.close, n.Data = nil, nil
	return c()
}

// npyDescrs maps the supported little-endian descr strings to dtypes.
var npyDescrs = map[string]mem.DType{
	"<f4": mem.Float32, "<f2": mem.Float16, "<f8": mem.Float64,
	"<i8": mem.Int64, "<i4": mem.Int32,
	"|i1": mem.Int8, "|u1": mem.Uint8, "|b1": mem.Bool,
	"<i1": mem.Int8, "<u1": mem.Uint8, "<b1": mem.Bool,
}

// npyDescr returns the descr numpy writes for d.
func npyDescr(d mem.DType) (string, error) {
	switch d {
	case mem.Float32:
		return "<f4", nil
	case mem.Float16:
		return "<f2", nil
	case mem.Float64:
		return "<f8", nil
	case mem.Int64:
		return "<i8", nil
	case mem.Int32:
		return "<i4", nil
	case mem.Int8:
		return "|i1", nil
	case mem.Uint8:
		return "|u1", nil
	case mem.Bool:
		return "|b1", nil
	}
	return "", fmt.Errorf("dataset: dtype %v cannot be stored in .npy", d)
}

// ReadNPY memory-maps the .npy file at path (format versions 1.0, 2.0 and
// 3.0) and parses its header. Only C-order little-endian arrays of <f4, <f2,
// <f8, <i8, <i4, |i1, |u1 and |b1 are accepted.
func ReadNPY(path string) (*NPY, error) {
	a, _, err := ReadNPYWith(path, false)
	return a, err
}

// ReadNPYWith is ReadNPY, optionally accepting fortran_order True (reported in
// fortran; Shape is then the logical shape, Data column-major).
func ReadNPYWith(path string, allowFortran bool) (*NPY, bool, error) {
	data, release, err := fileio.MapFile(path)
	if err != nil {
		return nil, false, err
	}
	dt, shape, off, fortran, err := parseNPY(data, allowFortran)
	if err != nil {
		release()
		return nil, false, fmt.Errorf("dataset: %s: %w", path, err)
	}
	return &NPY{DType: dt, Shape: shape, Data: data[off:], close: release}, fortran, nil
}

// parseNPY parses a whole .npy file image and returns the dtype, the shape,
// the offset of the data and the fortran_order flag (an error unless
// allowFortran), checking that the data size matches.
func parseNPY(b []byte, allowFortran bool) (dt mem.DType, shape []int64, off int, fortran bool, err error) {
	dt, shape, off, fortran, err = parseNPYImage(b)
	if err == nil && fortran && !allowFortran {
		err = fmt.Errorf("fortran_order True is not supported (save a C-contiguous array)")
	}
	return dt, shape, off, fortran, err
}

// parseNPYImage does the work of parseNPY.
func parseNPYImage(b []byte) (mem.DType, []int64, int, bool, error) {
	if len(b) < 10 || string(b[:6]) != npyMagic {
		return 0, nil, 0, false, fmt.Errorf("not a .npy file (bad magic)")
	}
	major, minor := b[6], b[7]
	var hlen, hstart int
	switch major {
	case 1:
		hlen, hstart = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return 0, nil, 0, false, fmt.Errorf("truncated .npy header")
		}
		h := binary.LittleEndian.Uint32(b[8:12])
		if uint64(h) > uint64(len(b)) {
			return 0, nil, 0, false, fmt.Errorf("header length %d exceeds the file size %d", h, len(b))
		}
		hlen, hstart = int(h), 12
	default:
		return 0, nil, 0, false, fmt.Errorf("unsupported .npy format version %d.%d", major, minor)
	}
	if hstart+hlen > len(b) {
		return 0, nil, 0, false, fmt.Errorf("header length %d exceeds the file size %d", hlen, len(b))
	}
	h, err := parseNPYHeader(string(b[hstart : hstart+hlen]))
	if err != nil {
		return 0, nil, 0, false, err
	}
	dt, ok := npyDescrs[h.descr]
	if !ok {
		if strings.HasPrefix(h.descr, ">") {
			return 0, nil, 0, false, fmt.Errorf("big-endian dtype %q is not supported", h.descr)
		}
		return 0, nil, 0, false, fmt.Errorf("dtype %q is not supported (want one of <f4 <f2 <f8 <i8 <i4 |i1 |u1 |b1)", h.descr)
	}
	// Number of data bytes, without overflow.
	nbytes := uint64(dt.Size())
	for _, s := range h.shape {
		hi, lo := bits.Mul64(nbytes, uint64(s))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, nil, 0, false, fmt.Errorf("shape %v is too large", h.shape)
		}
		nbytes = lo
	}
	off := hstart + hlen
	if have := uint64(len(b) - off); have != nbytes {
		return 0, nil, 0, false, fmt.Errorf("data has %d bytes, shape %v of %v needs %d", have, h.shape, dt, nbytes)
	}
	return dt, h.shape, off, h.fortran, nil
}

// npyHeader is the parsed header dictionary.
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int64
}

// parseNPYHeader parses the Python dict literal of a .npy header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
func parseNPYHeader(s string) (npyHeader, error) {
	p := &pyParser{s: s}
	var h npyHeader
	seen := map[string]bool{}
	p.ws()
	if !p.eat('{') {
		return h, p.errorf("expected '{'")
	}
	for {
		p.ws()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return h, err
		}
		p.ws()
		if !p.eat(':') {
			return h, p.errorf("expected ':' after key %q", key)
		}
		p.ws()
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return h, fmt.Errorf("descr: %w (structured dtypes are not supported)", err)
			}
		case "fortran_order":
			if h.fortran, err = p.boolean(); err != nil {
				return h, err
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return h, err
			}
		default:
			return h, p.errorf("unexpected key %q", key)
		}
		seen[key] = true
		p.ws()
		if p.eat(',') {
			continue
		}
		p.ws()
		if !p.eat('}') {
			return h, p.errorf("expected ',' or '}'")
		}
		break
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf(".npy header has no %q key", k)
		}
	}
	return h, nil
}

// pyParser scans the small subset of Python literals used in .npy headers.
type pyParser struct {
	s string
	i int
}

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf(".npy header at offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *pyParser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str parses a quoted string without escapes.
func (p *pyParser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", p.errorf("expected a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", p.errorf("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *pyParser) boolean() (bool, error) {
	switch {
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	}
	return false, p.errorf("expected True or False")
}

// tuple parses a tuple of non-negative integers: (), (3,), (3, 4).
func (p *pyParser) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, p.errorf("expected '(' for the shape")
	}
	shape := []int64{}
	for {
		p.ws()
		if p.eat(')') {
			return shape, nil
		}
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j < len(p.s) && p.s[j] == 'L' { // Python 2 long suffix
			j++
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(p.s[p.i:j], "L"), 10, 64)
		if err != nil {
			return nil, p.errorf("bad shape dimension %q", p.s[p.i:j])
		}
		shape = append(shape, v)
		p.i = j
		p.ws()
		if p.eat(')') {
			return shape, nil
		}
		if !p.eat(',') {
			return nil, p.errorf("expected ',' or ')' in the shape")
		}
	}
}

// WriteNPY writes t to path as a version 1.0 .npy file (2.0 if the header
// does not fit), with the header padded so the data is 64-byte aligned.
func WriteNPY(path string, t mem.Tensor) error {
	descr, err := npyDescr(t.DType)
	if err != nil {
		return err
	}
	if err := fileio.CheckTensor("tensor", t); err != nil {
		return err
	}
	dims := make([]string, len(t.Shape))
	for i, s := range t.Shape {
		dims[i] = strconv.FormatInt(s, 10)
	}
	shape := strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape)
	var buf bytes.Buffer
	buf.WriteString(npyMagic)
	// Header: dict padded with spaces and a final newline to a multiple of 64.
	pad := func(prefix int) string {
		total := prefix + len(dict) + 1
		return dict + strings.Repeat(" ", (64-total%64)%64) + "\n"
	}
	if h := pad(10); len(h) <= math.MaxUint16 {
		buf.Write([]byte{1, 0})
		buf.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(h))))
		buf.WriteString(h)
	} else {
		h = pad(12)
		buf.Write([]byte{2, 0})
		buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(h))))
		buf.WriteString(h)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("dataset: %w", err)
	}
	if _, err := f.Write(t.Data); err != nil {
		f.Close()
		return fmt.Errorf("dataset: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}
