package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/graphferry/graphferry/engine/errs"
)

// ID names one collective exchange. The same logical exchange must carry the
// same ID on every rank: Stage names the concurrent stage that issues it
// (a sampler worker, the loader; each with its own communicator) and Seq
// counts that stage's exchanges. On each rank, a stage's Seq values must
// increase from one exchange to the next (gaps are allowed, but every rank
// must use the same values).
type ID struct {
	Stage uint32
	Seq   uint64
}

func (id ID) String() string { return fmt.Sprintf("stage %d #%d", id.Stage, id.Seq) }

// Transport carries the coordinator's small control messages between ranks.
// It is the only thing CCC needs from a communicator: point-to-point
// messages between the leader and each follower (no collective, no
// any-source receive).
//
// Requirements:
//   - Messages from one rank to another arrive in the order they were sent,
//     unmodified, each exactly once.
//   - The coordinator calls Send from one goroutine, and Recv from one
//     goroutine per peer; Send and the Recvs run concurrently with each
//     other. (A leader receives from every follower; a follower receives
//     from the leader only.)
//   - Recv blocks until a message arrives. Send may return once the message
//     is buffered or may block until it is received; the peer always has a
//     Recv posted while it is running.
//   - Both return promptly with an error once ctx is done, and return an
//     error within bounded time once the peer has died (a connection reset,
//     a backend's time-out): this is what bounds the time the other ranks
//     take to notice a dead rank.
//   - A message is at most MaxMessageSize bytes.
//   - The coordinator never modifies a message after Send, and never modifies
//     a message Recv returned, so neither side needs to copy.
//
// It must not be the communicator the exchanges themselves use: a control
// message must never wait behind an exchange.
type Transport interface {
	// Send delivers msg to rank to.
	Send(ctx context.Context, to int, msg []byte) error
	// Recv returns the next message from rank from.
	Recv(ctx context.Context, from int) ([]byte, error)
}

// DefaultTimeout is Config.Timeout's default.
const DefaultTimeout = 5 * time.Minute

// followerWait is how many time-outs a follower waits for the launch of an
// exchange it registered before it gives the leader up: the leader fails
// an exchange that a rank does not register within one (and a quarter),
// and tells the followers, well before.
const followerWait = 3

// notifyTimeout bounds each last message (a failure notice, a goodbye) so that
// a peer that stopped receiving cannot hold a failing or closing coordinator.
const notifyTimeout = 5 * time.Second

// Config configures a Coordinator.
type Config struct {
	// Rank is this rank, in [0, Size).
	Rank int
	// Size is the number of ranks, at least 1.
	Size int
	// Leader is the rank that fixes the launch order, in [0, Size). Every
	// rank must name the same leader.
	Leader int
	// Transport carries the control messages. It may be nil only when Size
	// is 1 or Off is set.
	Transport Transport
	// Off makes the coordinator a pass-through: Run calls the exchange at
	// once, with no ordering and no messages (single-rank use, and to show
	// what happens without CCC). Every rank must agree on Off.
	Off bool
	// Window is the number of coordinated exchanges that may run at once on
	// a rank. The default, 1, is deadlock-free over any collective. A larger
	// window is deadlock-free only when the collectives in flight progress
	// independently of each other (see the package documentation); every
	// rank must use the same value.
	Window int
	// Timeout bounds how long an exchange may stay registered on some ranks
	// but not on all; after it, every rank fails with ErrMismatch. It must
	// exceed the longest legitimate skew between ranks. Zero means
	// DefaultTimeout (5 minutes); a negative value waits forever. The
	// leader's value decides; a follower fails on its own (ErrPeerLost,
	// naming the leader) when an exchange it registered is not launched
	// within three times its value, so that a dead leader is noticed even
	// when the transport does not report it.
	Timeout time.Duration
}

var (
	// ErrFailed is matched (errors.Is) by every error a Coordinator returns
	// once it, or the coordinator of any other rank, has failed.
	ErrFailed = errors.New("ccc: coordination failed")
	// ErrMismatch: the ranks registered exchanges that cannot pair up (a
	// stage at different sequence numbers on different ranks, an exchange
	// some rank never registered within Config.Timeout, a rank that closed
	// with exchanges still pending elsewhere).
	ErrMismatch = errors.New("ccc: exchanges do not pair up across ranks")
	// ErrPeerLost: the transport lost contact with a rank (it died, or its
	// link failed).
	ErrPeerLost = errors.New("ccc: lost contact with a rank")
	// ErrClosed: the coordinator was closed; it also wraps errs.ErrClosed.
	ErrClosed = fmt.Errorf("ccc: coordinator %w", errs.ErrClosed)
)

// Error is the failure of a coordinator, the same on every rank: the rank
// the failure is attributed to and what happened there. It matches ErrFailed
// and, where it applies, ErrMismatch, ErrPeerLost or ErrClosed; on the rank
// where an exchange failed it also wraps that exchange's error. Unless it
// is a close (ErrClosed), it also matches errs.ErrIO on every rank: the
// group's exchanges failed, whatever the rank where it arose (a caller
// mapping error classes, as the C API does, reports it as such).
type Error struct {
	// Rank is the rank where the failure arose: whose exchange failed or
	// whose context was cancelled, which rank was lost, or which rank (the
	// leader, usually) detected a mismatch.
	Rank int
	// Msg says what happened, naming the exchange.
	Msg string

	class error // ErrMismatch, ErrPeerLost, ErrClosed or nil
	cause error // the local error behind it, nil on other ranks
}

func (e *Error) Error() string { return fmt.Sprintf("ccc: rank %d: %s", e.Rank, e.Msg) }

// Is reports whether target is ErrFailed, or errs.ErrIO for a failure
// other than a close.
func (e *Error) Is(target error) bool {
	return target == ErrFailed || target == errs.ErrIO && e.class != ErrClosed
}

// Unwrap returns the error class and the local cause, where present.
func (e *Error) Unwrap() []error {
	var out []error
	if e.class != nil {
		out = append(out, e.class)
	}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// Coordinator orders the collective exchanges of one rank's concurrent
// stages the same way on every rank. Build one per rank with New; its
// methods are safe for concurrent use by the rank's stages.
type Coordinator struct {
	rank, size, leader int
	t                  Transport
	off                bool
	window             int
	timeout            time.Duration

	// runCtx is cancelled when the coordinator stops (fails or closes):
	// exchanges in flight see it through the context Run passes them.
	runCtx    context.Context
	cancelRun context.CancelFunc
	// ioCtx is cancelled once the last messages are sent; it stops the
	// receivers and the time-out check.
	ioCtx    context.Context
	cancelIO context.CancelFunc
	wg       sync.WaitGroup
	outSig   chan struct{} // wakes the sender; capacity 1

	mu       sync.Mutex
	err      error         // nil while running; *Error after a failure, ErrClosed after Close
	done     chan struct{} // closed when err is set
	stages   map[uint32]*stageState
	waiting  map[ID]chan struct{} // registered here, not yet launched; closed to launch
	orders   []ID                 // launch orders not yet started (window full)
	head     int                  // orders[head:] are pending
	inflight int                  // exchanges launched here and still running
	out      []outMsg             // messages for the sender
	outFinal bool                 // out holds the last messages: send them and stop

	// Leader only.
	pending  map[ID]*entry     // registered by some ranks, not yet by all
	stageSeq map[uint32]uint64 // the Seq pending for each stage (at most one)
	gone     []bool            // per rank: closed cleanly
	goneN    int

	// Follower only.
	leaderGone bool
	since      map[ID]time.Time // when each exchange of waiting was registered here
}

type stageState struct {
	last uint64 // last Seq registered
	used bool   // last is set
	busy bool   // an exchange of this stage is registered or running here
}

type entry struct {
	ranks []bool // ranks[r]: rank r registered it
	n     int
	since time.Time
}

type outMsg struct {
	to  int
	msg []byte
}

// New returns the coordinator of cfg.Rank. Every rank must build its own with
// the same Size, Leader, Off and Window. Unless cfg.Off, it starts goroutines
// that end when the coordinator fails or is closed; call Close when every
// stage is done.
func New(cfg Config) (*Coordinator, error) {
	if cfg.Size < 1 {
		return nil, fmt.Errorf("ccc: Size = %d (want >= 1)", cfg.Size)
	}
	if cfg.Rank < 0 || cfg.Rank >= cfg.Size {
		return nil, fmt.Errorf("ccc: Rank = %d is out of range [0, %d)", cfg.Rank, cfg.Size)
	}
	if cfg.Leader < 0 || cfg.Leader >= cfg.Size {
		return nil, fmt.Errorf("ccc: Leader = %d is out of range [0, %d)", cfg.Leader, cfg.Size)
	}
	if cfg.Window < 0 {
		return nil, fmt.Errorf("ccc: Window = %d (want >= 0; 0 means 1)", cfg.Window)
	}
	if cfg.Transport == nil && cfg.Size > 1 && !cfg.Off {
		return nil, fmt.Errorf("ccc: Transport is nil with Size = %d (a transport is needed unless Size is 1 or Off is set)", cfg.Size)
	}
	c := &Coordinator{
		rank: cfg.Rank, size: cfg.Size, leader: cfg.Leader,
		t: cfg.Transport, off: cfg.Off, window: cfg.Window, timeout: cfg.Timeout,
		done: make(chan struct{}),
	}
	if c.window == 0 {
		c.window = 1
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.off {
		return c, nil
	}
	c.runCtx, c.cancelRun = context.WithCancel(context.Background())
	c.ioCtx, c.cancelIO = context.WithCancel(context.Background())
	c.outSig = make(chan struct{}, 1)
	c.stages = map[uint32]*stageState{}
	c.waiting = map[ID]chan struct{}{}

	c.wg.Add(1)
	go c.send()
	if c.isLeader() {
		c.pending = map[ID]*entry{}
		c.stageSeq = map[uint32]uint64{}
		c.gone = make([]bool, c.size)
		for r := 0; r < c.size; r++ {
			if r != c.rank {
				c.wg.Add(1)
				go c.receive(r)
			}
		}
	} else {
		c.since = map[ID]time.Time{}
		c.wg.Add(1)
		go c.receive(c.leader)
	}
	if c.timeout > 0 && c.size > 1 {
		c.wg.Add(1)
		go c.watch()
	}
	return c, nil
}

func (c *Coordinator) isLeader() bool { return c.rank == c.leader }

// Run runs exchange, one collective exchange of the calling stage, when the
// leader's launch order reaches id: only after every rank has registered id,
// and, on every rank, after the exchanges ordered before it (at most Window
// of them still running). Until then it waits; the stage's other work goes
// on in other goroutines meanwhile.
//
// exchange must do that one collective and nothing that waits for another
// stage. Its context is cancelled if ctx is, or if the coordination fails on
// any rank, so that a collective blocked on a failed peer returns.
//
// One exchange per stage at a time: a stage calls Run for id.Seq only after
// its Run for the previous Seq has returned.
//
// Run returns nil if exchange returned nil. Otherwise the coordinator fails
// on every rank and Run returns an *Error: here it wraps exchange's error,
// elsewhere it carries its text. A cancelled ctx fails the coordinator the
// same way (the other ranks can never complete an exchange this rank left),
// and so does misuse (a nil exchange, a stage with two exchanges
// outstanding, a Seq that does not increase). Once the coordinator has failed or been closed, Run
// returns that error at once. With Config.Off, Run just calls exchange.
func (c *Coordinator) Run(ctx context.Context, id ID, exchange func(ctx context.Context) error) error {
	if c == nil {
		return errors.New("ccc: Run on a nil *Coordinator")
	}
	if exchange == nil {
		err := fmt.Errorf("ccc: Run(%v) with a nil exchange", id)
		if !c.off {
			// The other ranks would wait for this exchange: misuse fails
			// them all.
			c.fail(&Error{Rank: c.rank, Msg: fmt.Sprintf("exchange %v: nil exchange function", id), cause: err}, -1)
			return c.Err()
		}
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if c.off {
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		if err != nil {
			return err
		}
		return exchange(ctx)
	}
	if err := ctx.Err(); err != nil {
		c.fail(&Error{Rank: c.rank, Msg: fmt.Sprintf("exchange %v: context done before registering: %v", id, err), cause: err}, -1)
		return c.Err()
	}

	launch, st, err := c.register(id)
	if err != nil {
		return err
	}
	select {
	case <-launch:
	case <-c.done:
		return c.Err()
	case <-ctx.Done():
		select {
		case <-launch: // launched already: run it with the cancelled context
		default:
			c.fail(&Error{Rank: c.rank, Msg: fmt.Sprintf("exchange %v: context done while waiting for its launch: %v", id, ctx.Err()), cause: ctx.Err()}, -1)
			return c.Err()
		}
	}

	ectx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.runCtx, func() { cancel(c.Err()) })
	xerr := exchange(ectx)
	stop()
	cancel(nil)

	c.mu.Lock()
	c.inflight--
	st.busy = false
	c.pump()
	c.mu.Unlock()
	if xerr != nil {
		c.fail(&Error{Rank: c.rank, Msg: fmt.Sprintf("exchange %v: %v", id, xerr), cause: xerr}, -1)
		return c.Err()
	}
	return nil
}

// register records id as ready on this rank and tells the leader. It returns
// the channel closed when id is launched here.
func (c *Coordinator) register(id ID) (chan struct{}, *stageState, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, nil, c.err
	}
	st := c.stages[id.Stage]
	if st == nil {
		st = &stageState{}
		c.stages[id.Stage] = st
	}
	switch {
	case st.busy:
		c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("exchange %v registered while stage %d has an exchange outstanding (#%d); a stage runs one exchange at a time", id, id.Stage, st.last)}, -1)
		return nil, nil, c.err
	case st.used && id.Seq <= st.last:
		c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("exchange %v registered after #%d of the same stage; sequence numbers must increase", id, st.last)}, -1)
		return nil, nil, c.err
	}
	st.busy, st.used, st.last = true, true, id.Seq
	launch := make(chan struct{})
	c.waiting[id] = launch
	if c.isLeader() {
		c.ready(c.rank, id)
	} else if c.leaderGone {
		c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("exchange %v registered after the leader (rank %d) closed; it can never launch", id, c.leader), class: ErrMismatch}, -1)
	} else {
		c.queue(c.leader, encodeID(msgReady, id))
		c.since[id] = time.Now()
	}
	if c.err != nil {
		return nil, nil, c.err
	}
	return launch, st, nil
}

// ready records, on the leader, that rank r registered id, and launches id
// once every rank has.
func (c *Coordinator) ready(r int, id ID) {
	if c.goneN > 0 {
		q := slices.Index(c.gone, true)
		c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("rank %d registered exchange %v after rank %d closed; it can never launch", r, id, q), class: ErrMismatch}, -1)
		return
	}
	if seq, ok := c.stageSeq[id.Stage]; ok && seq != id.Seq {
		// At most one Seq of a stage can be pending: a rank registers #n+1
		// only after #n ran, and #n ran only once every rank had it.
		other := ID{Stage: id.Stage, Seq: seq}
		c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("rank %d registered exchange %v while %s registered %v; every rank must issue the same exchanges per stage",
			r, id, rankList("rank", c.pending[other].ranks, true), other), class: ErrMismatch}, -1)
		return
	}
	e := c.pending[id]
	if e == nil {
		e = &entry{ranks: make([]bool, c.size), since: time.Now()}
		c.pending[id] = e
		c.stageSeq[id.Stage] = id.Seq
	}
	if e.ranks[r] {
		c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("rank %d registered exchange %v twice", r, id)}, -1)
		return
	}
	e.ranks[r] = true
	e.n++
	if e.n < c.size {
		return
	}
	delete(c.pending, id)
	delete(c.stageSeq, id.Stage)
	if c.size > 1 {
		msg := encodeID(msgLaunch, id) // shared by every follower: never modified
		for f := 0; f < c.size; f++ {
			if f != c.rank {
				c.queue(f, msg)
			}
		}
	}
	c.order(id)
}

// order appends id to this rank's launch order.
func (c *Coordinator) order(id ID) {
	c.orders = append(c.orders, id)
	c.pump()
}

// pump launches the next ordered exchanges while the window has room.
func (c *Coordinator) pump() {
	for c.err == nil && c.inflight < c.window && c.head < len(c.orders) {
		id := c.orders[c.head]
		c.head++
		launch, ok := c.waiting[id]
		if !ok {
			c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("the leader launched exchange %v, which this rank has not registered", id)}, -1)
			return
		}
		delete(c.waiting, id)
		delete(c.since, id)
		c.inflight++
		close(launch)
	}
	if c.head == len(c.orders) {
		c.orders, c.head = c.orders[:0], 0
	}
}

// queue hands msg to the sender.
func (c *Coordinator) queue(to int, msg []byte) {
	c.out = append(c.out, outMsg{to: to, msg: msg})
	select {
	case c.outSig <- struct{}{}:
	default:
	}
}

// fail stops the coordinator with e (the first failure wins) and notifies the
// peers; except is a rank not to notify (the one that told us), or -1.
func (c *Coordinator) fail(e *Error, except int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(e, except)
}

func (c *Coordinator) failLocked(e *Error, except int) {
	if c.err != nil {
		return
	}
	c.err = e
	close(c.done)
	if c.off {
		return
	}
	c.cancelRun()
	c.out = c.out[:0]
	msg := encodeFail(e)
	if c.isLeader() {
		for f := 0; f < c.size; f++ {
			if f != c.rank && f != except && !c.gone[f] {
				c.queue(f, msg)
			}
		}
	} else if except != c.leader && !c.leaderGone {
		c.queue(c.leader, msg)
	}
	c.finishLocked()
}

// finishLocked tells the sender that out holds the last messages.
func (c *Coordinator) finishLocked() {
	c.outFinal = true
	select {
	case c.outSig <- struct{}{}:
	default:
	}
}

// send is the one goroutine that calls Transport.Send. It exits after the
// last messages (failure notices or goodbyes) and then stops the receivers.
func (c *Coordinator) send() {
	defer c.wg.Done()
	defer c.cancelIO()
	var batch []outMsg
	for {
		c.mu.Lock()
		for len(c.out) == 0 && !c.outFinal {
			c.mu.Unlock()
			<-c.outSig
			c.mu.Lock()
		}
		batch, c.out = c.out, batch[:0]
		final := c.outFinal
		c.mu.Unlock()

		for i, m := range batch {
			if final {
				ctx, cancel := context.WithTimeout(c.ioCtx, notifyTimeout)
				_ = c.t.Send(ctx, m.to, m.msg) // best effort: we are stopping anyway
				cancel()
				continue
			}
			if err := c.t.Send(c.ioCtx, m.to, m.msg); err != nil {
				c.fail(&Error{Rank: m.to, Msg: fmt.Sprintf("lost contact with rank %d (send from rank %d: %v)", m.to, c.rank, err), class: ErrPeerLost, cause: err}, m.to)
			}
			if c.Err() != nil {
				clear(batch[i:])
				break // drop the rest: the failure notices are queued
			}
		}
		clear(batch)
		if final {
			c.mu.Lock()
			empty := len(c.out) == 0
			c.mu.Unlock()
			if empty {
				return
			}
		}
	}
}

// receive reads the messages of peer until the coordinator stops or the peer
// says goodbye.
func (c *Coordinator) receive(peer int) {
	defer c.wg.Done()
	for {
		b, err := c.t.Recv(c.ioCtx, peer)
		if err != nil {
			c.fail(&Error{Rank: peer, Msg: fmt.Sprintf("lost contact with rank %d (receive on rank %d: %v)", peer, c.rank, err), class: ErrPeerLost, cause: err}, peer)
			return
		}
		if !c.handle(peer, b) {
			return
		}
	}
}

// handle applies one message from peer; it returns false when no more
// messages from peer are expected.
func (c *Coordinator) handle(peer int, b []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return true // keep draining until the sender stops the receivers
	}
	m, err := decode(b, c.size)
	if err == nil && (c.isLeader() && m.kind == msgLaunch || !c.isLeader() && m.kind == msgReady) {
		err = fmt.Errorf("unexpected message kind %d", m.kind)
	}
	if err != nil {
		c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("protocol error from rank %d: %v", peer, err)}, -1)
		return true
	}
	switch m.kind {
	case msgReady:
		c.ready(peer, m.id)
	case msgLaunch:
		c.order(m.id)
	case msgFail:
		c.failLocked(&Error{Rank: m.rank, Msg: m.text, class: classErr(m.class)}, peer)
	case msgBye:
		if c.isLeader() {
			c.gone[peer] = true
			c.goneN++
			if id, e, ok := c.oldestPending(); ok {
				c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("rank %d closed while exchange %v is registered by %s; it can never launch", peer, id, rankList("rank", e.ranks, true)), class: ErrMismatch}, peer)
			}
		} else {
			c.leaderGone = true
			// Exchanges already in the launch order start without the
			// leader; one that is registered but not ordered never will.
			if len(c.waiting) > len(c.orders)-c.head {
				c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("the leader (rank %d) closed while exchange %v is registered here; it can never launch", c.leader, c.unordered()), class: ErrMismatch}, peer)
			}
		}
		return false
	}
	return true
}

// watch is the time-out check. The leader's: an exchange some ranks
// registered and others did not within the time-out fails every rank,
// naming them. A follower's: an exchange registered here that the leader
// has not launched within followerWait times the time-out (the leader's
// own check would have failed it long before, had the leader been there to
// tell) fails,
// naming the leader: a leader that died without its transport reporting
// it still ends the wait.
func (c *Coordinator) watch() {
	defer c.wg.Done()
	period := max(c.timeout/4, time.Millisecond)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-c.ioCtx.Done():
			return
		case now := <-tick.C:
			c.mu.Lock()
			if c.err == nil && c.isLeader() {
				if id, e, ok := c.oldestPending(); ok && now.Sub(e.since) > c.timeout {
					c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("exchange %v was registered by %s but not by %s within %v", id, rankList("rank", e.ranks, true), rankList("rank", e.ranks, false), c.timeout), class: ErrMismatch}, -1)
				}
			} else if c.err == nil {
				if id, at, ok := c.oldestUnlaunched(); ok && now.Sub(at) > followerWait*c.timeout {
					c.failLocked(&Error{Rank: c.leader, Msg: fmt.Sprintf("exchange %v, registered on rank %d, was not launched by the leader (rank %d) within %d times the time-out (%v): the leader did not answer", id, c.rank, c.leader, followerWait, c.timeout), class: ErrPeerLost}, -1)
				}
			}
			c.mu.Unlock()
		}
	}
}

// oldestUnlaunched returns, on a follower, the exchange registered here
// the longest ago that the leader has not launched, and when.
func (c *Coordinator) oldestUnlaunched() (ID, time.Time, bool) {
	ordered := map[ID]bool{}
	for _, id := range c.orders[c.head:] {
		ordered[id] = true
	}
	var (
		best   ID
		bestAt time.Time
		found  bool
	)
	for id, at := range c.since {
		if !ordered[id] && (!found || at.Before(bestAt)) {
			best, bestAt, found = id, at, true
		}
	}
	return best, bestAt, found
}

func (c *Coordinator) oldestPending() (ID, *entry, bool) {
	var (
		best  ID
		bestE *entry
	)
	for id, e := range c.pending {
		if bestE == nil || e.since.Before(bestE.since) || e.since.Equal(bestE.since) && less(id, best) {
			best, bestE = id, e
		}
	}
	return best, bestE, bestE != nil
}

// unordered returns the smallest ID registered here but not yet in the
// launch order.
func (c *Coordinator) unordered() ID {
	ordered := map[ID]bool{}
	for _, id := range c.orders[c.head:] {
		ordered[id] = true
	}
	first := true
	var best ID
	for id := range c.waiting {
		if !ordered[id] && (first || less(id, best)) {
			best, first = id, false
		}
	}
	return best
}

func less(a, b ID) bool { return a.Stage < b.Stage || a.Stage == b.Stage && a.Seq < b.Seq }

func minID(m map[ID]chan struct{}) ID {
	first := true
	var best ID
	for id := range m {
		if first || less(id, best) {
			best, first = id, false
		}
	}
	return best
}

// rankList names the ranks r with ranks[r] == want, e.g. "ranks [0 2]".
func rankList(word string, ranks []bool, want bool) string {
	var b strings.Builder
	n := 0
	for r, v := range ranks {
		if v == want {
			if n > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprint(&b, r)
			n++
		}
	}
	if n == 1 {
		return word + " " + b.String()
	}
	return word + "s [" + b.String() + "]"
}

// Err returns nil while the coordinator runs, the *Error that stopped it
// after a failure, and ErrClosed after Close.
func (c *Coordinator) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done returns a channel closed when the coordinator stops (fails or is
// closed), for stages that want to select on it.
func (c *Coordinator) Done() <-chan struct{} { return c.done }

// Close stops the coordinator of this rank, after every stage of this rank
// has finished its exchanges (a Run still waiting for its launch makes Close
// fail the coordinator on every rank, since the other ranks could never
// complete that exchange). It tells the peers goodbye, waits for the
// coordinator's goroutines and returns the failure that stopped the
// coordinator, if any. Closing twice is harmless.
func (c *Coordinator) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	if c.err == nil {
		switch {
		case c.off:
			c.err = ErrClosed
			close(c.done)
		case len(c.waiting) > 0:
			c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("closed while exchange %v was waiting for its launch", minID(c.waiting)), class: ErrClosed}, -1)
		case c.isLeader() && len(c.pending) > 0:
			id, e, _ := c.oldestPending()
			c.failLocked(&Error{Rank: c.rank, Msg: fmt.Sprintf("the leader closed while exchange %v is registered by %s; it can never launch", id, rankList("rank", e.ranks, true)), class: ErrMismatch}, -1)
		default:
			c.err = ErrClosed
			close(c.done)
			c.cancelRun()
			// Launch orders still queued go out before the goodbye.
			bye := encodeID(msgBye, ID{})
			if c.isLeader() {
				for f := 0; f < c.size; f++ {
					if f != c.rank && !c.gone[f] {
						c.queue(f, bye)
					}
				}
			} else if !c.leaderGone {
				c.queue(c.leader, bye)
			}
			c.finishLocked()
		}
	}
	err := c.err
	c.mu.Unlock()
	c.wg.Wait()
	if err == ErrClosed {
		return nil
	}
	return err
}
