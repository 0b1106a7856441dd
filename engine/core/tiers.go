package core

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/graphferry/graphferry/engine/bounds"
	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/diskio"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/rowcache"
)

// Tier says where a dataset's feature matrix is read from.
type Tier int

const (
	// TierAuto decides by the memory budget: the memory map when
	// everything fits in it (or there is no budget), else the disk tier.
	TierAuto Tier = iota
	// TierMemory reads rows through the memory map of the feature file
	// (the kernel's page cache).
	TierMemory
	// TierDisk reads rows with direct reads under a CPU cache (engine/cache's
	// Disk).
	TierDisk
)

// String returns "auto", "memory" or "disk".
func (t Tier) String() string {
	switch t {
	case TierMemory:
		return "memory"
	case TierDisk:
		return "disk"
	}
	return "auto"
}

// OpenOptions configure OpenWith.
type OpenOptions struct {
	// Dataset are the dataset's open options (checksums).
	Dataset dataset.OpenOptions
	// MemoryBudget is the memory, in bytes, the graph may keep resident
	// (0: no budget, everything mapped as before). OpenWith decides from it
	// what is resident, what is cached and what stays on disk, and Plan
	// says what it decided.
	MemoryBudget int64
	// FeatureTier forces where features are read from (TierAuto: by the
	// budget).
	FeatureTier Tier
	// CacheBytes is the CPU cache's size on the disk tier: < 0 or 0 with
	// a budget: what the budget leaves; 0 without one: no cache.
	CacheBytes int64
	// CachePolicy is the CPU cache's eviction policy.
	CachePolicy rowcache.Policy
	// Reader configures the disk tier's reads.
	Reader diskio.Options
}

// Plan is what OpenWith decided about memory: the sizes it counted and
// where each part of the graph lives. Bytes are estimates of resident
// memory.
type Plan struct {
	// Budget is the memory budget (0: none).
	Budget int64
	// NumNodes and NumEdges are the graph's counts.
	NumNodes, NumEdges int64
	// Topology is the CSC's bytes (row offsets, sources, edge ids,
	// weights): resident, unless TopologyMapped.
	Topology int64
	// TopologyMapped says the CSC is the dataset's CSC files mapped
	// read-only (dataset.WriteCSC): the kernel pages it like file data, so
	// it is not counted against the budget.
	TopologyMapped bool
	// Open is the most memory opening held at once (dataset.OpenBytes):
	// the node columns and, without CSC files, the build of the CSC from
	// edges.arrow (its counters and the record batches being decoded);
	// opening refuses a budget below it before allocating it. What the
	// build held beyond the topology is returned to the system before the
	// open returns.
	Open int64
	// NodeColumns is the bytes of the other node data (labels, masks, ...),
	// resident.
	NodeColumns int64
	// Sampling is the loaders' working memory counted against the budget:
	// per sampler worker (one per core) a node table of 4 bytes a node (up
	// to 2^24 nodes) and 32 MiB of workspace and batches.
	Sampling int64
	// Features is the feature matrix's bytes, FeatureFile its file.
	Features    int64
	FeatureFile string
	// FeatureTier is where features are read from: TierMemory (mapped)
	// or TierDisk.
	FeatureTier Tier
	// CacheBytes and CachePolicy are the disk tier's CPU cache; Backend
	// and Direct its reads.
	CacheBytes  int64
	CachePolicy rowcache.Policy
	Backend     string
	Direct      bool
	// Verified says what the disk tier checks its reads against.
	Verified string
	// Reason says why the features are where they are.
	Reason string
}

// samplerWorkspace is the per-worker workspace and batch memory a plan
// sets aside (BenchmarkDatasetEpoch measures 27-32 MiB per worker on
// products-like).
const samplerWorkspace = 32 << 20

// planMemory fills the sizes of a plan for g opened from ds and decides
// the feature tier.
func planMemory(g *Graph, ds *dataset.Dataset, dir string, opt OpenOptions) (Plan, error) {
	csc := g.part.Graph
	p := Plan{Budget: opt.MemoryBudget, NumNodes: csc.NumNodes, NumEdges: csc.NumEdges(), CachePolicy: opt.CachePolicy}
	if opt.MemoryBudget < 0 {
		return p, errorf(nil, "memory budget %d bytes (want >= 0; 0: none)", opt.MemoryBudget)
	}
	p.Topology = 8 * int64(len(csc.Indptr))
	if csc.IsCompact() {
		p.Topology += 4 * int64(len(csc.Indices32))
	} else {
		p.Topology += 8 * int64(len(csc.Indices))
	}
	p.Topology += 8*int64(len(csc.EdgeIDs)) + 4*int64(len(csc.Weights))
	for name, t := range ds.NodeData {
		if name != dataset.FeatKey {
			p.NodeColumns += int64(len(t.Data))
		}
	}
	workers := int64(runtime.GOMAXPROCS(0))
	table := int64(0)
	if p.NumNodes <= 1<<24 {
		table = 4 * p.NumNodes
	}
	p.Sampling = workers * (table + samplerWorkspace)
	if f, ok := ds.NodeData[dataset.FeatKey]; ok && ds.Meta.Feature != nil {
		p.Features = int64(len(f.Data))
		p.FeatureFile = filepath.Join(dir, ds.Meta.Feature.File)
	}
	p.TopologyMapped = ds.TopologyMapped() && csc == ds.Graph // not copied by the partition
	p.Open = ds.OpenBytes
	resident := p.NodeColumns + p.Sampling
	if !p.TopologyMapped {
		resident += p.Topology
	}
	switch {
	case p.Features == 0:
		p.FeatureTier, p.Reason = TierMemory, "the dataset has no feature matrix"
	case opt.FeatureTier == TierMemory:
		p.FeatureTier, p.Reason = TierMemory, "asked for"
	case opt.FeatureTier == TierDisk:
		p.FeatureTier, p.Reason = TierDisk, "asked for"
	case opt.MemoryBudget == 0:
		p.FeatureTier, p.Reason = TierMemory, "no memory budget"
	case resident+p.Features <= opt.MemoryBudget:
		p.FeatureTier = TierMemory
		p.Reason = fmt.Sprintf("features and the resident part (%s) fit in the budget", bytesString(resident+p.Features))
	default:
		p.FeatureTier = TierDisk
		p.Reason = fmt.Sprintf("features (%s) and the resident part (%s) exceed the budget", bytesString(p.Features), bytesString(resident))
	}
	if p.FeatureTier == TierDisk {
		switch {
		case opt.CacheBytes > 0:
			p.CacheBytes = opt.CacheBytes
		case opt.MemoryBudget > 0:
			p.CacheBytes = max(0, opt.MemoryBudget-resident)
		}
		p.CacheBytes = min(p.CacheBytes, p.Features+p.Features/8) // no use caching more than every row
	}
	return p, nil
}

// openTiers puts the features on the disk tier when the plan says so.
func (g *Graph) openTiers(ds *dataset.Dataset, opt OpenOptions) error {
	if g.plan.FeatureTier != TierDisk {
		return nil
	}
	t, _ := g.store.Get(dataset.FeatKey)
	var rows []int64
	if g.part.NewToOld != nil {
		rows = g.part.NewToOld
	}
	// What the disk tier checks its reads against: the feature file's page
	// sums (every page of every read), else its block sums (on its mapping:
	// a block read whole and checked the first time a row in it is read, as
	// through the mapping), else nothing (a dataset written before either).
	dopt := cache.DiskOptions{CacheBytes: g.plan.CacheBytes, Policy: g.plan.CachePolicy, Reader: opt.Reader}
	pages, size, record, err := ds.FeaturePageSums(filepath.Dir(g.plan.FeatureFile))
	switch {
	case err != nil:
		return err
	case pages != nil:
		dopt.Pages = &cache.PageSums{Size: size, Sums: pages, Record: filepath.Base(record)}
		g.plan.Verified = "every page read, against " + filepath.Base(record)
	default:
		dopt.Blocks = feature.BlockSumsOf(ds.NodeData[dataset.FeatKey].Data)
		g.plan.Verified = "not checked (the dataset records no page or block sums)"
		if dopt.Blocks != nil {
			g.plan.Verified = "each 256 KiB block, read whole the first time a row in it is read"
		}
	}
	d, err := cache.OpenDisk(g.plan.FeatureFile, 0, t, rows, dopt)
	if err != nil {
		return err
	}
	g.plan.Backend, g.plan.Direct = d.Reader().Backend().String(), d.Reader().Direct()
	g.plan.CacheBytes = d.Cache().Capacity() * int64(d.Cache().RowBytes()+rowcache.EntryOverhead)
	return g.store.SetSource(dataset.FeatKey, d)
}

// Plan returns what the Graph's open decided about memory (a Graph not
// opened from a dataset directory has the zero plan but its counts).
func (g *Graph) Plan() Plan {
	p := g.plan
	p.NumNodes, p.NumEdges = g.NumNodes(), g.NumEdges()
	return p
}

// Report is the plan in words, one fact a line.
func (p Plan) Report() string {
	var b strings.Builder
	budget := "none"
	if p.Budget > 0 {
		budget = bytesString(p.Budget)
	}
	fmt.Fprintf(&b, "memory budget: %s\n", budget)
	fmt.Fprintf(&b, "graph: %d nodes, %d edges\n", p.NumNodes, p.NumEdges)
	if p.TopologyMapped {
		fmt.Fprintf(&b, "topology: %s mapped from the dataset's CSC files, paged by the kernel (not resident)\n", bytesString(p.Topology))
		fmt.Fprintf(&b, "resident: node columns %s, sampling %s\n", bytesString(p.NodeColumns), bytesString(p.Sampling))
	} else {
		fmt.Fprintf(&b, "resident: topology %s, node columns %s, sampling %s\n", bytesString(p.Topology), bytesString(p.NodeColumns), bytesString(p.Sampling))
	}
	if p.Open > 0 {
		built := ""
		if !p.TopologyMapped {
			built = ", building the topology from edges.arrow"
		}
		fmt.Fprintf(&b, "opening: held at most %s (node columns%s)\n", bytesString(p.Open), built)
	}
	switch {
	case p.Features == 0:
		fmt.Fprintf(&b, "features: none\n")
	case p.FeatureTier == TierDisk:
		fmt.Fprintf(&b, "features: %s on disk (%s), read with %s%s reads under a %s CPU cache of %s\n",
			bytesString(p.Features), p.FeatureFile, map[bool]string{true: "direct ", false: "buffered "}[p.Direct], p.Backend, p.CachePolicy, bytesString(p.CacheBytes))
		if p.Verified != "" {
			fmt.Fprintf(&b, "disk reads verified: %s\n", p.Verified)
		}
	default:
		fmt.Fprintf(&b, "features: %s memory-mapped (%s), read through the page cache\n", bytesString(p.Features), p.FeatureFile)
	}
	if p.Reason != "" {
		fmt.Fprintf(&b, "why: %s\n", p.Reason)
	}
	return b.String()
}

// bytesString writes n bytes in binary units.
func bytesString(n int64) string { return bounds.Bytes(uint64(max(n, 0))) }
