package rowcache

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Policy is an eviction policy.
type Policy int

const (
	// S3FIFO is S3-FIFO (the default).
	S3FIFO Policy = iota
	// SIEVE is SIEVE.
	SIEVE
	// LRU evicts the least recently used row.
	LRU
)

// policyNames are the policies' names, by Policy.
var policyNames = []string{"s3fifo", "sieve", "lru"}

// String returns the policy's name ("s3fifo", "sieve", "lru").
func (p Policy) String() string {
	if p >= 0 && int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy returns the policy named s (case-insensitive; "s3-fifo" too).
func ParsePolicy(s string) (Policy, error) {
	name := strings.ReplaceAll(strings.ToLower(s), "-", "")
	for i, n := range policyNames {
		if n == name {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("rowcache: unknown policy %q (want one of %s)", s, strings.Join(policyNames, ", "))
}

// EntryOverhead is the bookkeeping counted per cached row beside its
// bytes: the index entry, the queue links, the flags and, for S3-FIFO, the
// ghost entries.
const EntryOverhead = 64

// Rows returns how many rows of rowBytes bytes a cache of bytes bytes
// holds.
func Rows(bytes int64, rowBytes int) int64 {
	if bytes <= 0 || rowBytes <= 0 {
		return 0
	}
	return bytes / (int64(rowBytes) + EntryOverhead)
}

// Stats are a cache's counters since it was made.
type Stats struct {
	Hits, Misses, Inserts, Evictions int64
}

// Cache is a row cache: at most Capacity rows of RowBytes bytes each, keyed
// by row id (>= 0). Safe for concurrent use.
type Cache struct {
	rowBytes int
	capacity int32
	policy   Policy

	mu    sync.Mutex
	index *table[int32] // id -> slot
	keys  []int64       // slot -> id
	data  []byte        // slot s holds data[s*rowBytes:(s+1)*rowBytes]
	used  int32         // slots handed out so far: slots used..capacity-1 were never used
	free  []int32       // slots freed by evictions
	pol   policy

	closed bool // Close freed data: nothing is inserted any more

	// onEvict, when set (tests), is called with every evicted id.
	onEvict func(id int64)

	hits, misses, inserts, evictions atomic.Int64
}

// policy keeps the eviction order over slots.
type policy interface {
	// hit records a hit on slot.
	hit(s int32)
	// admit places slot s, which now holds id, in the order.
	admit(s int32, id int64)
	// evict removes at least one row from the order, calling free with the
	// slot of each.
	evict(free func(s int32))
}

// New returns a cache of bytes bytes (counted as Rows) for rows of rowBytes
// bytes, with policy p. A size too small for one row gives a cache that
// holds nothing.
func New(bytes int64, rowBytes int, p Policy) (*Cache, error) {
	if rowBytes <= 0 {
		return nil, fmt.Errorf("rowcache: row size %d (want > 0)", rowBytes)
	}
	if bytes < 0 {
		return nil, fmt.Errorf("rowcache: size %d bytes (want >= 0)", bytes)
	}
	if p < 0 || int(p) >= len(policyNames) {
		return nil, fmt.Errorf("rowcache: policy %d is invalid", int(p))
	}
	rows := Rows(bytes, rowBytes)
	if rows > 1<<31-1 {
		return nil, fmt.Errorf("rowcache: %d rows, too many (at most 2^31-1)", rows)
	}
	c := &Cache{rowBytes: rowBytes, capacity: int32(rows), policy: p, index: newTable[int32](rows)}
	c.keys = make([]int64, rows)
	// The rows live outside the Go heap (an anonymous mapping, freed by
	// Close): a large cache on the heap would let the collector's headroom
	// (GOGC) grow the process by as much again, past a memory budget.
	if size := rows * int64(rowBytes); size > 0 {
		data, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			return nil, fmt.Errorf("rowcache: mapping %d bytes for the rows: %w", size, err)
		}
		adviseHuge(data)
		c.data = data
	}
	switch p {
	case LRU:
		c.pol = newLRU(rows)
	case SIEVE:
		c.pol = newSieve(rows)
	default:
		c.pol = newS3FIFO(rows, c.keys)
	}
	return c, nil
}

// Capacity returns the number of rows the cache holds when full.
func (c *Cache) Capacity() int64 { return int64(c.capacity) }

// RowBytes returns the row size.
func (c *Cache) RowBytes() int { return c.rowBytes }

// Policy returns the eviction policy.
func (c *Cache) Policy() Policy { return c.policy }

// Bytes returns the memory the cache's rows take when full.
func (c *Cache) Bytes() int64 { return int64(len(c.data)) }

// Len returns the number of cached rows.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.index.len()
}

// Stats returns the cache's counters.
func (c *Cache) Stats() Stats {
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Inserts: c.inserts.Load(), Evictions: c.evictions.Load()}
}

// Lookup copies the cached rows among ids into dst (row i to
// dst[i*RowBytes:]), records the hits, and returns miss with the positions
// i of the ids it does not hold appended, in order.
func (c *Cache) Lookup(ids []int64, dst []byte, miss []int) []int {
	if c.capacity == 0 {
		for i := range ids {
			miss = append(miss, i)
		}
		c.misses.Add(int64(len(ids)))
		return miss
	}
	rb := c.rowBytes
	hits := 0
	c.mu.Lock()
	for i, id := range ids {
		s, ok := c.index.get(id)
		if !ok {
			miss = append(miss, i)
			continue
		}
		c.pol.hit(s)
		copy(dst[i*rb:(i+1)*rb], c.data[int(s)*rb:(int(s)+1)*rb])
		hits++
	}
	c.mu.Unlock()
	c.hits.Add(int64(hits))
	c.misses.Add(int64(len(ids) - hits))
	return miss
}

// Insert adds the rows of ids (row i at rows[i*RowBytes:]), evicting as
// the policy says when full; an id already cached is left as it is (a
// negative one is not cached).
func (c *Cache) Insert(ids []int64, rows []byte) { c.insert(ids, nil, rows) }

// InsertAt adds the rows ids[p] for p in pos, row ids[p] at
// rows[p*RowBytes:] (the misses of a Lookup, once read into its dst), as
// Insert does.
func (c *Cache) InsertAt(ids []int64, pos []int, rows []byte) { c.insert(ids, pos, rows) }

// insert is Insert (pos nil: every id, row i at i) and InsertAt.
func (c *Cache) insert(ids []int64, pos []int, rows []byte) {
	if c.capacity == 0 {
		return
	}
	rb := c.rowBytes
	var added int64
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	n := len(ids)
	if pos != nil {
		n = len(pos)
	}
	for k := range n {
		i := k
		if pos != nil {
			i = pos[k]
		}
		id := ids[i]
		if _, ok := c.index.get(id); ok || id < 0 {
			continue // cached, or not a row id
		}
		for int32(c.index.len()) >= c.capacity {
			c.pol.evict(c.release)
		}
		var s int32
		if n := len(c.free); n > 0 {
			s = c.free[n-1]
			c.free = c.free[:n-1]
		} else {
			s = c.used
			c.used++
		}
		c.keys[s] = id
		c.index.put(id, s)
		copy(c.data[int(s)*rb:(int(s)+1)*rb], rows[i*rb:(i+1)*rb])
		c.pol.admit(s, id)
		added++
	}
	c.mu.Unlock()
	c.inserts.Add(added)
}

// Close frees the cached rows; the cache then holds nothing and takes
// nothing (lookups miss). Idempotent.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.index = newTable[int32](0)
	data := c.data
	c.data = nil
	if len(data) == 0 {
		return nil
	}
	return syscall.Munmap(data)
}

// release frees slot s, which the policy evicted (under mu).
func (c *Cache) release(s int32) {
	old := c.keys[s]
	c.index.del(old)
	c.free = append(c.free, s)
	c.evictions.Add(1)
	if c.onEvict != nil {
		c.onEvict(old)
	}
}

// queue is a doubly linked list of slots, newest at head; the links of
// every queue of a policy live in one links.
type queue struct {
	head, tail int32 // -1 when empty
	size       int32
}

// links holds, per slot, its neighbours: prev towards the head (newer),
// next towards the tail (older).
type links struct{ prev, next []int32 }

func newLinks(n int64) links { return links{prev: make([]int32, n), next: make([]int32, n)} }

func newQueue() queue { return queue{head: -1, tail: -1} }

func (l links) pushHead(q *queue, s int32) {
	l.prev[s], l.next[s] = -1, q.head
	if q.head >= 0 {
		l.prev[q.head] = s
	} else {
		q.tail = s
	}
	q.head = s
	q.size++
}

func (l links) remove(q *queue, s int32) {
	p, n := l.prev[s], l.next[s]
	if p >= 0 {
		l.next[p] = n
	} else {
		q.head = n
	}
	if n >= 0 {
		l.prev[n] = p
	} else {
		q.tail = p
	}
	q.size--
}

// lru: a hit moves the row to the head; the tail is evicted.
type lru struct {
	l links
	q queue
}

func newLRU(n int64) *lru { return &lru{l: newLinks(n), q: newQueue()} }

func (p *lru) hit(s int32) {
	p.l.remove(&p.q, s)
	p.l.pushHead(&p.q, s)
}

func (p *lru) admit(s int32, _ int64) { p.l.pushHead(&p.q, s) }

func (p *lru) evict(free func(int32)) {
	s := p.q.tail
	p.l.remove(&p.q, s)
	free(s)
}

// sieve: a FIFO queue with a visited bit per row and a hand.
type sieve struct {
	l       links
	q       queue
	visited []bool
	hand    int32 // -1: start from the tail
}

func newSieve(n int64) *sieve {
	return &sieve{l: newLinks(n), q: newQueue(), visited: make([]bool, n), hand: -1}
}

func (p *sieve) hit(s int32) { p.visited[s] = true }

func (p *sieve) admit(s int32, _ int64) {
	p.visited[s] = false
	p.l.pushHead(&p.q, s)
}

func (p *sieve) evict(free func(int32)) {
	o := p.hand
	if o < 0 {
		o = p.q.tail
	}
	for p.visited[o] {
		p.visited[o] = false
		if o = p.l.prev[o]; o < 0 {
			o = p.q.tail
		}
	}
	p.hand = p.l.prev[o]
	p.l.remove(&p.q, o)
	free(o)
}

// s3fifo: small and main FIFO queues and a ghost FIFO of ids.
type s3fifo struct {
	l          links
	small      queue
	main       queue
	freq       []uint8
	keys       []int64      // the cache's slot -> id
	smallCap   int32        // the small queue's share: 10% of the rows, at least one
	mainCap    int32        // the rest
	ghostCap   int          // ghost entries kept: as many as the main queue holds
	ghost      []ghostEntry // FIFO, oldest first from ghostHead; entries whose id left are dead
	ghostHead  int
	ghostLive  int
	ghostSeq   uint64         // sequence number of the last ghost entry (from 1)
	ghostIndex *table[uint64] // id -> sequence number of its live ghost entry
}

type ghostEntry struct {
	id  int64
	seq uint64
}

func newS3FIFO(n int64, keys []int64) *s3fifo {
	small := max(1, int32(n/10))
	p := &s3fifo{
		l: newLinks(n), small: newQueue(), main: newQueue(),
		freq: make([]uint8, n), keys: keys,
		smallCap: small, mainCap: int32(n) - small,
	}
	p.ghostCap = max(1, int(p.mainCap))
	p.ghostIndex = newTable[uint64](int64(p.ghostCap) + 1) // addGhost adds before it drops
	return p
}

func (p *s3fifo) hit(s int32) { p.freq[s] = min(p.freq[s]+1, 3) }

func (p *s3fifo) admit(s int32, id int64) {
	p.freq[s] = 0
	if _, ghost := p.ghostIndex.get(id); ghost {
		p.ghostIndex.del(id)
		p.ghostLive--
		p.l.pushHead(&p.main, s)
		return
	}
	p.l.pushHead(&p.small, s)
}

// evict is the paper's evict: from the small queue while it holds its
// share of the rows (or the main queue is empty), else from the main one.
func (p *s3fifo) evict(free func(int32)) {
	if p.small.size >= p.smallCap || p.main.size == 0 {
		p.evictSmall(free)
		return
	}
	p.evictMain(free)
}

// evictSmall takes rows off the small queue's tail until one leaves for
// the ghost: a row hit since it was inserted moves to the main queue
// instead (which evicts from the main queue when that overflows).
func (p *s3fifo) evictSmall(free func(int32)) {
	for p.small.size > 0 {
		t := p.small.tail
		p.l.remove(&p.small, t)
		if p.freq[t] >= 1 {
			p.freq[t] = 0
			p.l.pushHead(&p.main, t)
			if p.main.size > p.mainCap {
				p.evictMain(free)
			}
			continue
		}
		p.addGhost(p.keys[t])
		free(t)
		return
	}
}

// evictMain reinserts the main queue's tail with its frequency lowered
// while it is above 0, and evicts the first row whose frequency is 0.
func (p *s3fifo) evictMain(free func(int32)) {
	for p.main.size > 0 {
		t := p.main.tail
		p.l.remove(&p.main, t)
		if p.freq[t] > 0 {
			p.freq[t]--
			p.l.pushHead(&p.main, t)
			continue
		}
		free(t)
		return
	}
}

// addGhost appends id to the ghost FIFO and drops its oldest live entries
// beyond its capacity (a ghost hit removes an entry from the middle: its
// slot stays, dead, until the head passes it).
func (p *s3fifo) addGhost(id int64) {
	p.ghostSeq++
	p.ghost = append(p.ghost, ghostEntry{id: id, seq: p.ghostSeq})
	p.ghostIndex.put(id, p.ghostSeq)
	p.ghostLive++
	for p.ghostLive > p.ghostCap {
		e := p.ghost[p.ghostHead]
		p.ghostHead++
		if seq, ok := p.ghostIndex.get(e.id); ok && seq == e.seq {
			p.ghostIndex.del(e.id)
			p.ghostLive--
		}
	}
	if p.ghostHead > len(p.ghost)/2 && p.ghostHead > 64 {
		p.ghost = append(p.ghost[:0], p.ghost[p.ghostHead:]...)
		p.ghostHead = 0
	}
}
