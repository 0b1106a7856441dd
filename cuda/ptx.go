package cuda

import (
	"fmt"
	"strconv"
	"strings"
)

// The PTX the CUDA library embeds is JIT-compiled by the driver, which
// accepts a PTX ISA version only if it is at least as new as the CUDA
// release that introduced it (PTX has no minor-version compatibility). The
// driver floor is therefore read off the PTX's .version line, and checked
// before the module is loaded so that the error says what to update.

// ptxISAToCUDA maps a PTX ISA version to the CUDA release (1000*major +
// 10*minor, as cuDriverGetVersion) that introduced it (NVIDIA's PTX ISA
// release notes).
var ptxISAToCUDA = map[string]int{
	"7.0": 11000, "7.1": 11010, "7.2": 11020, "7.3": 11030, "7.4": 11040,
	"7.5": 11050, "7.6": 11060, "7.7": 11070, "7.8": 11080,
	"8.0": 12000, "8.1": 12010, "8.2": 12020, "8.3": 12030, "8.4": 12040,
	"8.5": 12050, "8.6": 12070, "8.7": 12080, "8.8": 12090,
	"9.0": 13000,
}

// linuxDriverFor is the first Linux driver release of each CUDA release
// (NVIDIA's CUDA toolkit release notes, table 3: "CUDA Toolkit and
// corresponding driver versions", the GA release of each).
var linuxDriverFor = map[int]string{
	12000: "525.60.13", 12010: "530.30.02", 12020: "535.54.03", 12030: "545.23.06",
	12040: "550.54.14", 12050: "555.42.02", 12060: "560.28.03", 12080: "570.26",
	12090: "575.51.03", 13000: "580.65.06",
}

// ptxHeader returns the .version and .target of a PTX text ("" when absent).
func ptxHeader(ptx string) (isa, target string) {
	for _, line := range strings.SplitN(ptx, "\n", 64) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case ".version":
			isa = f[1]
		case ".target":
			target = strings.TrimSuffix(f[1], ",")
		}
	}
	return isa, target
}

// driverForISA is the lowest driver version (cuDriverGetVersion's scale)
// that loads PTX of ISA version isa.
func driverForISA(isa string) (int, error) {
	if v, ok := ptxISAToCUDA[isa]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("cuda: the embedded kernels have PTX ISA version %q, which graphferry does not know the driver floor of (rebuild with make lib-cuda)", isa)
}

// cudaVersion formats a cuDriverGetVersion value: 12010 -> "12.1".
func cudaVersion(v int) string {
	if v <= 0 {
		return "unknown"
	}
	return strconv.Itoa(v/1000) + "." + strconv.Itoa(v%1000/10)
}

// driverRelease names the first Linux driver release of CUDA version v.
func driverRelease(v int) string {
	if r, ok := linuxDriverFor[v]; ok {
		return r
	}
	return "of CUDA " + cudaVersion(v)
}

// PTXRequirements describes what the embedded PTX needs: its ISA version,
// its target and the lowest driver (cuDriverGetVersion's scale) that loads
// it. ptx is the text (the CUDA library's embedded kernels).
func PTXRequirements(ptx string) (isa, target string, needDriver int, err error) {
	isa, target = ptxHeader(ptx)
	needDriver, err = driverForISA(isa)
	return isa, target, needDriver, err
}

// BuildID is "gfbuild:<source id>" (capi/source_id.sh) in the Go test
// binary that cuda/tools/build.sh --test builds for the GPU machine (set
// with -ldflags -X; empty otherwise, so that a binary holds no other
// "gfbuild:" text); the tests log it and tests/gpu/run.sh checks it against
// the checkout.
var BuildID = ""
