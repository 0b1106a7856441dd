package feature

import "github.com/graphferry/graphferry/engine/mem"

// Gatherer is a source of node data that a loader gathers batches from:
// named tensors with one row per node, gathered by internal node id.
// *Store is the plain implementation; engine/cache's Tiered puts a hot tier
// in front of a Store; engine/pipeline's loader stage gathers through it.
type Gatherer interface {
	// NumNodes returns the number of rows of every tensor.
	NumNodes() int64
	// Names returns the names of the tensors (for error messages).
	Names() []string
	// Get returns the tensor called name (its dtype and row shape decide
	// the batch tensor's).
	Get(name string) (mem.Tensor, bool)
	// Gather copies the rows ids of name into dst, len(ids) rows.
	Gather(name string, dst []byte, ids []int64, threads int) error
}

var _ TierGatherer = (*Store)(nil)

// RowSource reads the rows of a store's array from somewhere other than
// its memory: the disk tier (engine/cache's Disk: a CPU cache over direct
// reads of the array's file). Safe for concurrent reads.
type RowSource interface {
	// ReadRows copies the rows ids (validated) into dst, len(ids) rows of
	// the array's row size, and says where they came from.
	ReadRows(dst []byte, ids []int64, threads int) (TierCounts, error)
	// Close releases the source; the store calls it once, when it lets go
	// of the array.
	Close() error
}

// NumTiers is the number of memory kinds node data can be gathered from
// (mem.KindHost, mem.KindPinned, mem.KindDevice): the length of
// TierCounts.Bytes.
const NumTiers = 3

// TierCounts says where the rows of a gather came from: bytes read per
// memory kind (indexed by mem.Kind), and how many rows came from a hot tier
// (a cache) and how many from the full store. Of the store's (cold) rows,
// an array on the disk tier (a RowSource) serves some from its CPU cache
// (CacheRows, their bytes counted as host memory) and reads the others
// from disk (DiskRows, their bytes in DiskBytes, not in Bytes).
type TierCounts struct {
	Bytes    [NumTiers]int64
	HotRows  int64
	ColdRows int64
	// CacheRows and DiskRows split the cold rows of a disk-tier array:
	// served by its CPU cache, read from disk.
	CacheRows, DiskRows int64
	// DiskBytes is the bytes of the rows read from disk; DiskRead the
	// bytes the reads fetched (whole aligned blocks, neighbouring rows
	// coalesced) in DiskRequests requests.
	DiskBytes, DiskRead, DiskRequests int64
}

// Add adds o to c.
func (c *TierCounts) Add(o TierCounts) {
	for i := range c.Bytes {
		c.Bytes[i] += o.Bytes[i]
	}
	c.HotRows += o.HotRows
	c.ColdRows += o.ColdRows
	c.CacheRows += o.CacheRows
	c.DiskRows += o.DiskRows
	c.DiskBytes += o.DiskBytes
	c.DiskRead += o.DiskRead
	c.DiskRequests += o.DiskRequests
}

// HostCounts is what a gather of rows rows of rowBytes bytes from a plain
// store counts as: cold rows read from host memory.
func HostCounts(rows, rowBytes int) TierCounts {
	var tc TierCounts
	tc.Bytes[mem.KindHost] = int64(rows) * int64(rowBytes)
	tc.ColdRows = int64(rows)
	return tc
}

// TierGatherer is a Gatherer with tiers (engine/cache's Tiered):
// GatherTiers is Gather, and also says where the rows came from. A loader
// uses it when its Gatherer implements it; a plain Gatherer's rows count
// as cold rows read from host memory (HostCounts).
type TierGatherer interface {
	Gatherer
	GatherTiers(name string, dst []byte, ids []int64, threads int) (TierCounts, error)
}
