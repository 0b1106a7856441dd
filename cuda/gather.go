package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// GatherOptions configure a Gatherer.
type GatherOptions struct {
	// Names are the node data that get tiers (default: every name of the
	// store but per-type data). Others are gathered by the host.
	Names []string
	// Policy ranks the nodes whose rows go to the hot tier, as
	// engine/cache: "degree" (in-degree of Graph, PaGraph's), "presample"
	// (Scores: how often each node's rows are read over a few sampled
	// epochs, pipeline.Pipeline.ReadCounts), or "" (no hot tier).
	Policy string
	Graph  *graph.CSC
	Scores []int64
	// Size of the hot tier (cache.Size: bytes, a fraction of the nodes, or
	// Auto: the device's free memory, when Budget is 0, less Reserve). The
	// rows of every name with a tier count.
	Size cache.Size
	// Contexts is how many host gathers (GatherTiers) run at once, each on
	// a stream of its own; <= 0: 2.
	Contexts int
}

// Gatherer is node data in tiers on a device: the hot rows (a policy's
// top nodes) in device memory, the whole of every array in pinned host
// memory, which the gather kernel reads over the bus: the store's arrays
// that are off the Go heap (mem.OffHeap: memory-mapped dataset files, a
// caller's memory handed in through the C API) registered in place, the
// others (and any the driver refuses) copied into pinned allocations of
// the driver. One kernel (gf_gather) gathers from both tiers into one output, rows
// in input order, dtypes kept, in 16-byte words when rows and addresses are
// aligned.
//
// It is a feature.TierGatherer: a pipeline's loader stage gathers through
// it into the pipeline's allocator's buffers (the mixed mode: CPU sampling,
// GPU gathering), and the device Sampler gathers a batch's node data
// through it on its own stream, into device memory (OutputDevice) or on to
// the host (OutputHost). Safe for concurrent use.
type Gatherer struct {
	dev      Device
	store    *feature.Store
	n        int64
	tiers    map[string]*tier
	hot      []int64
	slotHost []int32 // node -> hot row, -1: cold
	slot     Ptr     // the same on the device (0: no hot row)
	hotBytes int64
	ctxs     chan *gatherCtx

	mu     sync.Mutex
	closed bool
	undo   []func() error
}

// tier is one name's tiers.
type tier struct {
	t        mem.Tensor // the store's (dtype and shape)
	rowBytes int64
	hot      Ptr // len(hot) rows in device memory (0: none)
	cold     Ptr // every row, pinned host memory
	// coldCopied: the array was copied into a pinned allocation (it is on
	// the Go heap, or the driver refused to register it in place).
	coldCopied bool
}

var _ feature.TierGatherer = (*Gatherer)(nil)

// NewGatherer places store's node data on dev in tiers (see Gatherer).
// The store's arrays must not change while the gatherer lives (the cold
// tier reads those off the Go heap in place; the others are copied now).
func NewGatherer(dev Device, store *feature.Store, opts GatherOptions) (*Gatherer, error) {
	if dev == nil || store == nil {
		return nil, errors.New("cuda: device or store is nil")
	}
	g := &Gatherer{dev: dev, store: store, n: store.NumNodes(), tiers: map[string]*tier{}}
	ok := false
	defer func() {
		if !ok {
			_ = g.Close()
		}
	}()
	names := opts.Names
	if names == nil {
		for _, name := range store.Names() {
			if !store.IsLocal(name) {
				names = append(names, name)
			}
		}
	}
	var rowBytes int64
	for _, name := range names {
		t, found := store.Get(name)
		if !found || store.IsLocal(name) {
			return nil, fmt.Errorf("cuda: no node data named %q with a row per node (have %v)", name, store.Names())
		}
		if _, dup := g.tiers[name]; dup {
			return nil, fmt.Errorf("cuda: %q is named twice", name)
		}
		g.tiers[name] = &tier{t: t, rowBytes: int64(t.RowBytes())}
		rowBytes += int64(t.RowBytes())
	}
	if err := g.pickHot(opts, rowBytes); err != nil {
		return nil, err
	}
	contexts := opts.Contexts
	if contexts <= 0 {
		contexts = 2
	}
	g.ctxs = make(chan *gatherCtx, contexts)
	for range contexts {
		st, err := dev.NewStream()
		if err != nil {
			return nil, err
		}
		c := &gatherCtx{g: g, st: st, m: batchMem{pool: NewPool(dev, st)}}
		g.undo = append(g.undo, c.close)
		g.ctxs <- c
	}
	c := <-g.ctxs
	defer func() { g.ctxs <- c }()
	for _, name := range names {
		if err := g.placeTier(c, g.tiers[name]); err != nil {
			return nil, fmt.Errorf("cuda: node data %q: %w", name, err)
		}
	}
	if len(g.hot) > 0 {
		p, err := g.alloc(g.n * 4)
		if err != nil {
			return nil, err
		}
		g.slot = p
		if err := c.st.CopyIn(p, int32Bytes(g.slotHost)); err != nil {
			return nil, err
		}
		if err := c.st.Sync(); err != nil {
			return nil, err
		}
	}
	ok = true
	return g, nil
}

// pickHot ranks the nodes by the policy and cuts at the size.
func (g *Gatherer) pickHot(opts GatherOptions, rowBytes int64) error {
	g.slotHost = make([]int32, g.n)
	for i := range g.slotHost {
		g.slotHost[i] = -1
	}
	var score []int64
	switch opts.Policy {
	case "":
		return nil
	case "degree":
		var err error
		if score, err = cache.ByInDegree(opts.Graph); err != nil {
			return err
		}
	case "presample":
		score = opts.Scores
	default:
		return fmt.Errorf("cuda: unknown hot-tier policy %q (degree, presample)", opts.Policy)
	}
	if int64(len(score)) != g.n {
		return fmt.Errorf("cuda: the %s policy scores %d nodes, the store has %d", opts.Policy, len(score), g.n)
	}
	size := opts.Size
	if size.Auto && size.Budget == 0 {
		free, _, err := g.dev.MemInfo()
		if err != nil {
			return err
		}
		size.Budget = free
	}
	rows, err := size.Rows(g.n, rowBytes)
	if err != nil {
		return err
	}
	g.hot = cache.Rank(score)[:rows]
	for i, v := range g.hot {
		g.slotHost[v] = int32(i)
	}
	g.hotBytes = rows * rowBytes
	return nil
}

// alloc is device memory freed by Close.
func (g *Gatherer) alloc(bytes int64) (Ptr, error) {
	p, err := g.dev.Alloc(bytes)
	if err != nil {
		return 0, err
	}
	g.undo = append(g.undo, func() error { return g.dev.Free(p) })
	return p, nil
}

// placeTier pins the array in host memory (the cold tier) and gathers its
// hot rows from there into device memory.
func (g *Gatherer) placeTier(c *gatherCtx, tr *tier) error {
	pl, err := place(g.dev, [][]byte{tr.t.Data}, PlacePinned, 0)
	if err != nil {
		return err
	}
	g.undo = append(g.undo, pl.release)
	tr.cold, tr.coldCopied = pl.ptrs[0], pl.copied > 0
	if len(g.hot) == 0 || tr.rowBytes == 0 {
		return nil
	}
	if tr.hot, err = g.alloc(int64(len(g.hot)) * tr.rowBytes); err != nil {
		return err
	}
	hot := *tr
	hot.hot = 0 // every row of the fill comes from the cold tier
	return c.gather(&hot, tr.hot, g.hot, nil)
}

// Hot returns the hot node ids, in the order of the hot rows.
func (g *Gatherer) Hot() []int64 { return g.hot }

// HotBytes returns the device memory the hot rows take.
func (g *Gatherer) HotBytes() int64 { return g.hotBytes }

// NumNodes returns the store's node count.
func (g *Gatherer) NumNodes() int64 { return g.n }

// Names returns the store's names.
func (g *Gatherer) Names() []string { return g.store.Names() }

// Get returns the store's tensor name.
func (g *Gatherer) Get(name string) (mem.Tensor, bool) { return g.store.Get(name) }

// Gather is GatherTiers without the counts.
func (g *Gatherer) Gather(name string, dst []byte, ids []int64, threads int) error {
	_, err := g.GatherTiers(name, dst, ids, threads)
	return err
}

// GatherTiers copies the rows ids of name into host memory dst (len(ids)
// rows, in input order): the GPU gathers them from the tiers into device
// memory, which is copied to dst (page-locked dst: one DMA), one wait.
// Names without tiers are gathered by the host from the store.
func (g *Gatherer) GatherTiers(name string, dst []byte, ids []int64, threads int) (feature.TierCounts, error) {
	tr, ok := g.tiers[name]
	if !ok {
		if err := g.store.Gather(name, dst, ids, threads); err != nil {
			return feature.TierCounts{}, err
		}
		src, _ := g.store.Get(name)
		return feature.HostCounts(len(ids), src.RowBytes()), nil
	}
	if int64(len(dst)) != int64(len(ids))*tr.rowBytes {
		return feature.TierCounts{}, fmt.Errorf("cuda: len(dst) = %d, want len(ids)*RowBytes = %d*%d", len(dst), len(ids), tr.rowBytes)
	}
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return feature.TierCounts{}, errors.New("cuda: the gatherer is closed")
	}
	c := <-g.ctxs
	defer func() { g.ctxs <- c }()
	out, err := c.m.get(int64(len(dst)))
	if err != nil {
		return feature.TierCounts{}, err
	}
	defer c.m.put(out)
	if err := c.gather(tr, out, ids, dst); err != nil {
		return feature.TierCounts{}, err
	}
	return g.counts(tr, ids), nil
}

// counts says where the rows of ids (host ids) came from: hot rows from
// device memory, the others from pinned host memory.
func (g *Gatherer) counts(tr *tier, ids []int64) feature.TierCounts {
	var hot int64
	if tr.hot != 0 {
		hot = g.hotOf(ids)
	}
	return tierCounts(hot, int64(len(ids)), tr.rowBytes)
}

// hotOf counts the ids (host ids) that are hot.
func (g *Gatherer) hotOf(ids []int64) int64 {
	var hot int64
	if len(g.hot) > 0 {
		for _, v := range ids {
			if v >= 0 && v < g.n && g.slotHost[v] >= 0 {
				hot++
			}
		}
	}
	return hot
}

func tierCounts(hot, rows, rowBytes int64) feature.TierCounts {
	var tc feature.TierCounts
	tc.HotRows, tc.ColdRows = hot, rows-hot
	tc.Bytes[mem.KindDevice] = hot * rowBytes
	tc.Bytes[mem.KindPinned] = (rows - hot) * rowBytes
	return tc
}

// gatherWidth is the widest word (16, 8, 4, 2 or 1 bytes) that divides the
// row size and every address.
func gatherWidth(rowBytes int64, ptrs ...Ptr) int64 {
	for _, w := range []int64{16, 8, 4, 2} {
		if rowBytes%w != 0 {
			continue
		}
		ok := true
		for _, p := range ptrs {
			ok = ok && int64(p)%w == 0
		}
		if ok {
			return w
		}
	}
	return 1
}

// gatherOn queues gf_gather on st: the rows of ids[0:*n) (at most maxRows)
// of tr into out, errors to the status word at status.
func (g *Gatherer) gatherOn(st Stream, tr *tier, ids, n Ptr, maxRows int64, out, status Ptr) error {
	if tr.rowBytes == 0 || maxRows == 0 {
		return nil
	}
	var slot Ptr
	if tr.hot != 0 {
		slot = g.slot
	}
	w := gatherWidth(tr.rowBytes, tr.hot, tr.cold, out)
	return launch(st, "gf_gather", maxRows*(tr.rowBytes/w), uint64(ids), uint64(n), uint64(slot), uint64(tr.hot), uint64(tr.cold),
		uint64(g.n), uint64(tr.rowBytes), uint64(w), uint64(out), uint64(status))
}

// Close frees the tiers (device memory, pinned copies, registrations).
func (g *Gatherer) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	return undoAll(&g.undo)
}

// gatherCtx is one stream for host gathers, with its staging memory.
type gatherCtx struct {
	g     *Gatherer
	st    Stream
	m     batchMem
	stage HostMem
}

func (c *gatherCtx) close() error {
	var errs []error
	if c.stage.Bytes != nil {
		errs = append(errs, c.g.dev.FreeHost(c.stage))
	}
	return errors.Join(append(errs, c.m.pool.Close(), c.st.Close())...)
}

// gather gathers the rows ids (host ids) of tr into device memory out, and
// when dst is not nil copies them on into host memory dst, with one wait.
func (c *gatherCtx) gather(tr *tier, out Ptr, ids []int64, dst []byte) error {
	words := int64(3 + len(ids))
	if int64(len(c.stage.Bytes)) < (words+2)*8 {
		if c.stage.Bytes != nil {
			if err := c.g.dev.FreeHost(c.stage); err != nil {
				return err
			}
			c.stage = HostMem{}
		}
		h, err := c.g.dev.AllocHost(max(4096, 2*(words+2)*8))
		if err != nil {
			return err
		}
		c.stage = h
	}
	// Staging and device: n, the status word, ids; the status is read back
	// after them.
	w := int64s(c.stage.Bytes)
	w[0], w[1], w[2] = int64(len(ids)), 0, 0
	copy(w[3:], ids)
	buf, err := c.m.get(words * 8)
	if err != nil {
		return err
	}
	defer c.m.put(buf)
	if err := c.st.CopyIn(buf, c.stage.Bytes[:words*8]); err != nil {
		return err
	}
	if err := c.g.gatherOn(c.st, tr, buf+24, buf, int64(len(ids)), out, buf+8); err != nil {
		return err
	}
	if dst != nil {
		if err := c.st.CopyOut(dst, out); err != nil {
			return err
		}
	}
	status := c.stage.Bytes[words*8 : (words+2)*8]
	if err := c.st.CopyOut(status, buf+8); err != nil {
		return err
	}
	if err := c.st.Sync(); err != nil {
		return err
	}
	if s := int64s(status); s[0] != 0 {
		return statusError(uint64(s[0]), s[1], c.g.n)
	}
	return nil
}
