package coordinator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
)

// hangGuard bounds every test that could hang if the code under test were
// wrong; it is never reached when the code is right.
const hangGuard = 10 * time.Second

// group builds one coordinator per rank over a Mesh, rank 0 leading.
func group(t testing.TB, size int, cfg Config) ([]*Coordinator, *Mesh) {
	t.Helper()
	mesh := NewMesh(size)
	cs := make([]*Coordinator, size)
	for r := range cs {
		c := cfg
		c.Rank, c.Size, c.Transport = r, size, mesh.Endpoint(r)
		var err error
		cs[r], err = New(c)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			_ = c.Close()
		}
	})
	return cs, mesh
}

// checkedExchange is a stage's exchange over f: it checks that every rank's
// contribution belongs to the same exchange id.
func checkedExchange(f *fakeNet, rank int, id ID) func(context.Context) error {
	return func(ctx context.Context) error {
		got, err := f.exchange(ctx, rank, id)
		if err != nil {
			return err
		}
		for j, v := range got {
			if v != payload(j, id) {
				return fmt.Errorf("rank %d, exchange %v: value from rank %d is %#x (want %#x)", rank, id, j, v, payload(j, id))
			}
		}
		return nil
	}
}

// poll polls cond until it holds (true) or the hang guard expires (false).
// Unlike require, it may be called from any goroutine.
func poll(cond func() bool) bool {
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Microsecond)
	}
	return true
}

// wait waits for wg under the hang guard.
func wait(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("%s did not finish within %v", what, hangGuard)
	}
}

// crossedOrder runs the Figure 8 scenario of DSP on two ranks with stages
// A (0) and B (1), each issuing one exchange: rank 0 starts A first and rank
// 1 starts B first; the second exchange of each rank starts only once
// second() says so. It returns the errors of the four Runs.
func crossedOrder(ctx context.Context, cs []*Coordinator, f *fakeNet, second func(rank int) bool) []error {
	a, b := ID{Stage: 0, Seq: 1}, ID{Stage: 1, Seq: 1}
	order := [2][2]ID{{a, b}, {b, a}}
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		for i, id := range order[r] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i == 1 {
					for !second(r) {
						if ctx.Err() != nil {
							errs[2*r+i] = ctx.Err()
							return
						}
						time.Sleep(100 * time.Microsecond)
					}
				}
				errs[2*r+i] = cs[r].Run(ctx, id, checkedExchange(f, r, id))
			}()
		}
	}
	wg.Wait()
	return errs
}

func TestCrossedOrderDeadlocksWithoutCoordinator(t *testing.T) {
	cs, _ := group(t, 2, Config{Off: true})
	f := newFakeNet(2, true)
	a, b := ID{Stage: 0, Seq: 1}, ID{Stage: 1, Seq: 1}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	result := make(chan []error, 1)
	go func() {
		// The second exchanges start once rank 0 runs A and rank 1 runs B:
		// the opposite orders are forced, not left to the scheduler.
		result <- crossedOrder(ctx, cs, f, func(int) bool { return f.holds(0, a) && f.holds(1, b) })
	}()

	// The deadlock is detected from the collective's state (a cycle of
	// ranks waiting on each other's slots), within 2 s.
	var cycle string
	deadline := time.Now().Add(2 * time.Second)
	for cycle == "" && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		cycle = f.deadlock()
	}
	require.NotEmpty(t, cycle, "no deadlock detected within 2 s without the coordinator")
	require.Contains(t, cycle, "rank 0 holds stage 0 #1")
	require.Contains(t, cycle, "rank 1 holds stage 1 #1")
	select {
	case errs := <-result:
		t.Fatalf("the exchanges returned although deadlocked: %v", errs)
	default:
	}

	cancel() // unblock the fake collective
	errs := <-result
	for _, err := range errs {
		require.ErrorIs(t, err, context.Canceled)
	}
}

func TestCrossedOrderCompletesWithCoordinator(t *testing.T) {
	cs, _ := group(t, 2, Config{})
	f := newFakeNet(2, true)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()

	// Each rank's second exchange is registered after its first, as above
	// (here "first" means registered: with CCC it may not run yet).
	first := [2]uint32{0, 1}
	errs := crossedOrder(ctx, cs, f, func(r int) bool {
		cs[r].mu.Lock()
		defer cs[r].mu.Unlock()
		return cs[r].stages[first[r]] != nil
	})
	for i, err := range errs {
		require.NoError(t, err, "run %d", i)
	}
	require.Empty(t, f.deadlock())
	for _, c := range cs {
		require.NoError(t, c.Close())
	}
}

// randomStages runs, for one seed, ranks x stages goroutines, each issuing
// perStage exchanges after seeded random delays. Rank r starts stage
// r % stages first: the other stages of rank r start only once that stage's
// first exchange has started (without the coordinator: holds the rank's
// slot; with it: is registered), so ranks 0 and 1 start different stages
// first whatever the scheduler does. A watchdog stops the run as soon as the
// collective deadlocks; it returns the deadlock ("" if none) and each
// stage's error (a wrong pairing is an error).
func randomStages(t *testing.T, seed uint64, ranks, stages, perStage int, cfg Config, slotted bool) (string, []error) {
	t.Helper()
	cs, _ := group(t, ranks, cfg)
	f := newFakeNet(ranks, slotted)
	ctx, cancel := context.WithTimeoutCause(context.Background(), hangGuard, fmt.Errorf("seed %d: hang guard expired", seed))
	defer cancel()

	// A watchdog that stops the run as soon as the collective deadlocks.
	stopWatch := make(chan struct{})
	var deadlock string
	var watched sync.WaitGroup
	watched.Add(1)
	go func() {
		defer watched.Done()
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(time.Millisecond):
				if d := f.deadlock(); d != "" {
					deadlock = d
					cancel()
					return
				}
			}
		}
	}()

	rng := rand.New(rand.NewPCG(seed, 0xcc))
	delays := make([][][]time.Duration, ranks)
	for r := range delays {
		delays[r] = make([][]time.Duration, stages)
		for s := range delays[r] {
			delays[r][s] = make([]time.Duration, perStage)
			for i := range delays[r][s] {
				delays[r][s][i] = time.Duration(rng.IntN(200)) * time.Microsecond
			}
		}
	}
	started := func(r int) bool {
		first := uint32(r % stages)
		if cfg.Off {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.holding[r] != nil && f.holding[r].id.Stage == first
		}
		cs[r].mu.Lock()
		defer cs[r].mu.Unlock()
		return cs[r].stages[first] != nil
	}

	errs := make([]error, ranks*stages)
	var wg sync.WaitGroup
	for r := 0; r < ranks; r++ {
		for s := 0; s < stages; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s != r%stages && !started(r) {
					if err := context.Cause(ctx); err != nil {
						errs[r*stages+s] = err
						return
					}
					time.Sleep(50 * time.Microsecond)
				}
				for i := 0; i < perStage; i++ {
					time.Sleep(delays[r][s][i])
					id := ID{Stage: uint32(s), Seq: uint64(2*i + 1)} // gaps are fine
					if err := cs[r].Run(ctx, id, checkedExchange(f, r, id)); err != nil {
						errs[r*stages+s] = err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(stopWatch)
	watched.Wait()
	if deadlock == "" && errors.Join(errs...) == nil {
		for r, c := range cs {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("rank %d: Close: %w", r, err))
			}
		}
	}
	return deadlock, errs
}

// requireClean asserts that a randomStages run neither deadlocked nor failed.
func requireClean(t *testing.T, seed uint64, deadlock string, errs []error) {
	t.Helper()
	require.Emptyf(t, deadlock, "seed %d: deadlock", seed)
	for i, err := range errs {
		require.NoErrorf(t, err, "seed %d, stage goroutine %d", seed, i)
	}
}

func TestNoDeadlockOverSeeds(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 40
	}
	for seed := uint64(0); seed < uint64(seeds); seed++ {
		ranks := 2 + int(seed%3)    // 2..4
		stages := 2 + int(seed/3%2) // 2..3
		deadlock, errs := randomStages(t, seed, ranks, stages, 3, Config{Timeout: hangGuard}, true)
		requireClean(t, seed, deadlock, errs)
	}
}

// The schedules above are hostile: without the coordinator, each deadlocks.
func TestRandomSchedulesDeadlockWithoutCoordinator(t *testing.T) {
	for seed := uint64(0); seed < 12; seed++ {
		deadlock, _ := randomStages(t, seed, 2+int(seed%3), 2+int(seed/3%2), 3, Config{Off: true}, true)
		require.NotEmptyf(t, deadlock, "seed %d: no deadlock without the coordinator", seed)
	}
}

// A window of 2 is safe when the collectives in flight progress
// independently (no shared slot), and the pairing stays right.
func TestWindowTwoWithIndependentCollectives(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		deadlock, errs := randomStages(t, seed, 2+int(seed%3), 3, 3, Config{Window: 2, Timeout: hangGuard}, false)
		requireClean(t, seed, deadlock, errs)
	}
}

func TestSingleRankWithoutTransport(t *testing.T) {
	c, err := New(Config{Size: 1})
	require.NoError(t, err)
	ran := 0
	for i := uint64(1); i <= 3; i++ {
		require.NoError(t, c.Run(context.Background(), ID{Stage: 7, Seq: i}, func(context.Context) error { ran++; return nil }))
	}
	require.Equal(t, 3, ran)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	err = c.Run(context.Background(), ID{Stage: 7, Seq: 9}, func(context.Context) error { return nil })
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, errs.ErrClosed)
}

func TestOffIsPassThrough(t *testing.T) {
	c, err := New(Config{Rank: 1, Size: 3, Off: true}) // no transport needed
	require.NoError(t, err)
	// No ordering and no sequence checks: the same id twice is fine.
	for range 2 {
		called := false
		require.NoError(t, c.Run(context.Background(), ID{}, func(context.Context) error { called = true; return nil }))
		require.True(t, called)
	}
	boom := errors.New("boom")
	require.ErrorIs(t, c.Run(context.Background(), ID{}, func(context.Context) error { return boom }), boom)
	require.ErrorContains(t, c.Run(context.Background(), ID{}, nil), "nil exchange")
	require.NoError(t, c.Err()) // nothing to fail when off
	require.NoError(t, c.Close())
	require.ErrorIs(t, c.Run(context.Background(), ID{}, func(context.Context) error { return nil }), ErrClosed)
}

func TestNewValidates(t *testing.T) {
	mesh := NewMesh(2)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Size: 0}, "Size = 0"},
		{Config{Rank: 2, Size: 2, Transport: mesh.Endpoint(0)}, "Rank = 2"},
		{Config{Rank: -1, Size: 2, Transport: mesh.Endpoint(0)}, "Rank = -1"},
		{Config{Size: 2, Leader: 5, Transport: mesh.Endpoint(0)}, "Leader = 5"},
		{Config{Size: 2, Window: -1, Transport: mesh.Endpoint(0)}, "Window = -1"},
		{Config{Size: 2}, "Transport is nil"},
	} {
		c, err := New(tc.cfg)
		require.ErrorContains(t, err, tc.want)
		require.Nil(t, c)
	}
	var nilC *Coordinator
	require.Error(t, nilC.Run(context.Background(), ID{}, func(context.Context) error { return nil }))
	require.NoError(t, nilC.Close())
}

// runAll runs fn(rank) on every rank concurrently and returns their errors.
func runAll(t *testing.T, n int, fn func(rank int) error) []error {
	t.Helper()
	out := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() { defer wg.Done(); out[r] = fn(r) }()
	}
	wait(t, &wg, "the ranks")
	return out
}

func TestExchangeErrorFailsEveryRank(t *testing.T) {
	cs, _ := group(t, 3, Config{})
	f := newFakeNet(3, true)
	boom := errors.New("boom")
	ctx := context.Background() // no deadline: the failure alone must unblock the ranks
	errs := runAll(t, 3, func(r int) error {
		for i := uint64(1); ; i++ {
			id := ID{Stage: 4, Seq: i}
			ex := checkedExchange(f, r, id)
			if r == 2 && i == 3 {
				ex = func(context.Context) error { return boom } // never enters the collective
			}
			if err := cs[r].Run(ctx, id, ex); err != nil {
				return err
			}
		}
	})
	for r, err := range errs {
		require.ErrorIs(t, err, ErrFailed, "rank %d", r)
		require.ErrorContains(t, err, "ccc: rank 2: exchange stage 4 #3: boom", "rank %d", r)
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, 2, e.Rank)
	}
	require.ErrorIs(t, errs[2], boom) // the local cause stays wrapped where it happened
	for r, c := range cs {
		require.ErrorIs(t, c.Close(), ErrFailed, "rank %d", r)
	}
}

func TestDeadRankFailsOthers(t *testing.T) {
	for _, dead := range []int{0, 2} { // the leader, a follower
		t.Run(fmt.Sprintf("rank%d", dead), func(t *testing.T) {
			cs, mesh := group(t, 3, Config{})
			f := newFakeNet(3, true)
			stuck := ID{Stage: 1, Seq: 5}
			errs := runAll(t, 3, func(r int) error {
				for i := uint64(1); ; i++ {
					id := ID{Stage: 1, Seq: i}
					if r == dead && id == stuck {
						// The rank crashes instead of registering #5: its
						// coordinator's goroutines lose their transport.
						mesh.Kill(r)
						<-cs[r].Done()
						return cs[r].Err()
					}
					if err := cs[r].Run(context.Background(), id, checkedExchange(f, r, id)); err != nil {
						return err
					}
				}
			})
			for r, err := range errs {
				require.ErrorIs(t, err, ErrFailed, "rank %d", r)
				require.ErrorIs(t, err, ErrPeerLost, "rank %d", r)
				if r != dead {
					require.ErrorContains(t, err, fmt.Sprintf("lost contact with rank %d", dead), "rank %d", r)
				}
			}
		})
	}
}

func TestStageAtDifferentSeqIsAMismatch(t *testing.T) {
	cs, _ := group(t, 2, Config{Timeout: -1}) // detected at once, not by a time-out
	errs := runAll(t, 2, func(r int) error {
		return cs[r].Run(context.Background(), ID{Stage: 3, Seq: uint64(1 + r)}, func(context.Context) error {
			return errors.New("must not run")
		})
	})
	for r, err := range errs {
		require.ErrorIs(t, err, ErrMismatch, "rank %d", r)
		require.ErrorContains(t, err, "stage 3 #", "rank %d", r)
		require.NotContains(t, err.Error(), "must not run")
	}
}

func TestExchangeOnlySomeRanksRegisterTimesOut(t *testing.T) {
	cs, _ := group(t, 3, Config{Timeout: 50 * time.Millisecond})
	errs := runAll(t, 3, func(r int) error {
		if r != 1 {
			<-cs[r].Done()
			return cs[r].Err()
		}
		// An exchange no other rank ever registers.
		return cs[r].Run(context.Background(), ID{Stage: 9, Seq: 1}, func(context.Context) error { return nil })
	})
	for r, err := range errs {
		require.ErrorIs(t, err, ErrMismatch, "rank %d", r)
		require.ErrorContains(t, err, "ccc: rank 0: exchange stage 9 #1 was registered by rank 1 but not by ranks [0 2] within 50ms", "rank %d", r)
		require.ErrorIs(t, cs[r].Close(), ErrMismatch, "rank %d", r)
	}
}

func TestMisuseFailsEveryRank(t *testing.T) {
	for name, second := range map[string]ID{
		"seq does not increase": {Stage: 0, Seq: 1},
		"seq goes back":         {Stage: 0, Seq: 0},
	} {
		t.Run(name, func(t *testing.T) {
			cs, _ := group(t, 2, Config{Timeout: -1})
			f := newFakeNet(2, true)
			errs := runAll(t, 2, func(r int) error {
				first := ID{Stage: 0, Seq: 1}
				if err := cs[r].Run(context.Background(), first, checkedExchange(f, r, first)); err != nil {
					return err
				}
				if r == 1 {
					return cs[r].Run(context.Background(), second, checkedExchange(f, r, second))
				}
				<-cs[r].Done()
				return cs[r].Err()
			})
			for r, err := range errs {
				require.ErrorIs(t, err, ErrFailed, "rank %d", r)
				require.ErrorContains(t, err, "sequence numbers must increase", "rank %d", r)
			}
		})
	}
	t.Run("nil exchange", func(t *testing.T) {
		cs, _ := group(t, 2, Config{Timeout: -1})
		errs := runAll(t, 2, func(r int) error {
			if r == 0 {
				<-cs[r].Done()
				return cs[r].Err()
			}
			return cs[r].Run(context.Background(), ID{Stage: 0, Seq: 1}, nil)
		})
		for r, err := range errs {
			require.ErrorIs(t, err, ErrFailed, "rank %d", r)
			require.ErrorContains(t, err, "ccc: rank 1: exchange stage 0 #1: nil exchange function", "rank %d", r)
		}
	})
	t.Run("two outstanding in one stage", func(t *testing.T) {
		cs, _ := group(t, 2, Config{Timeout: -1})
		// Rank 0 registers #1, then #2 of the same stage while #1 waits for
		// rank 1 (which never registers anything).
		errs := runAll(t, 2, func(r int) error {
			if r == 1 {
				<-cs[r].Done()
				return cs[r].Err()
			}
			first := make(chan error, 1)
			go func() {
				first <- cs[0].Run(context.Background(), ID{Stage: 0, Seq: 1}, func(context.Context) error { return nil })
			}()
			if !poll(func() bool {
				cs[0].mu.Lock()
				defer cs[0].mu.Unlock()
				return len(cs[0].waiting) == 1
			}) {
				return errors.New("rank 0 never registered #1")
			}
			err := cs[0].Run(context.Background(), ID{Stage: 0, Seq: 2}, func(context.Context) error { return nil })
			if ferr := <-first; !errors.Is(ferr, ErrFailed) {
				return fmt.Errorf("the first Run returned %v (want ErrFailed)", ferr)
			}
			return err
		})
		for r, err := range errs {
			require.ErrorContains(t, err, "a stage runs one exchange at a time", "rank %d", r)
		}
	})
}

func TestCancelWhileWaitingFailsEveryRank(t *testing.T) {
	cs, _ := group(t, 2, Config{Timeout: -1})
	ctx, cancel := context.WithCancel(context.Background())
	errs := runAll(t, 2, func(r int) error {
		if r == 0 {
			<-cs[r].Done()
			return cs[r].Err()
		}
		go func() {
			poll(func() bool {
				cs[1].mu.Lock()
				defer cs[1].mu.Unlock()
				return len(cs[1].waiting) == 1
			})
			cancel()
		}()
		return cs[1].Run(ctx, ID{Stage: 2, Seq: 1}, func(context.Context) error { return nil })
	})
	require.ErrorIs(t, errs[1], context.Canceled)
	for r, err := range errs {
		require.ErrorIs(t, err, ErrFailed, "rank %d", r)
		require.ErrorContains(t, err, "ccc: rank 1: exchange stage 2 #1: context done while waiting for its launch", "rank %d", r)
	}
}

func TestExchangeSeesCancellationOfPeerFailure(t *testing.T) {
	// Rank 0 is inside a launched collective when rank 1 fails after it
	// entered; rank 0's exchange must be released by the coordinator.
	cs, _ := group(t, 2, Config{Timeout: -1})
	entered := make(chan struct{})
	boom := errors.New("boom after entering")
	errs := runAll(t, 2, func(r int) error {
		return cs[r].Run(context.Background(), ID{Stage: 0, Seq: 1}, func(ctx context.Context) error {
			if r == 1 {
				<-entered
				return boom
			}
			close(entered)
			<-ctx.Done() // a collective that would wait forever for rank 1
			return context.Cause(ctx)
		})
	})
	for r, err := range errs {
		require.ErrorContains(t, err, "ccc: rank 1: exchange stage 0 #1: boom after entering", "rank %d", r)
	}
}

func TestCloseIsCleanAfterMatchedExchanges(t *testing.T) {
	cs, _ := group(t, 3, Config{})
	f := newFakeNet(3, true)
	errs := runAll(t, 3, func(r int) error {
		for i := uint64(1); i <= 5; i++ {
			id := ID{Stage: 0, Seq: i}
			if err := cs[r].Run(context.Background(), id, checkedExchange(f, r, id)); err != nil {
				return err
			}
		}
		return cs[r].Close() // ranks close at different times
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
		require.ErrorIs(t, cs[r].Err(), ErrClosed)
	}
}

func TestClosedPeerMakesPendingExchangeFail(t *testing.T) {
	for _, closer := range []int{0, 1} { // the leader, a follower
		t.Run(fmt.Sprintf("rank%d", closer), func(t *testing.T) {
			cs, _ := group(t, 3, Config{Timeout: -1})
			errs := runAll(t, 3, func(r int) error {
				if r == closer {
					return cs[r].Close()
				}
				return cs[r].Run(context.Background(), ID{Stage: 0, Seq: 1}, func(context.Context) error { return nil })
			})
			for r, err := range errs {
				if r == closer {
					continue // it may close before or after the others registered
				}
				require.ErrorIs(t, err, ErrMismatch, "rank %d", r)
				require.ErrorContains(t, err, "closed", "rank %d", r)
			}
		})
	}
}

// A launch order that reached a follower before the leader's goodbye still
// runs there, even if the follower's window was full when the goodbye came.
func TestOrderedExchangesRunAfterLeaderCloses(t *testing.T) {
	cs, _ := group(t, 2, Config{Timeout: -1})
	entered, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for s := 0; s < 2; s++ {
		for r := 0; r < 2; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[2*s+r] = cs[r].Run(context.Background(), ID{Stage: uint32(s), Seq: 1}, func(context.Context) error {
					if r == 1 && s == 0 {
						close(entered)
						<-release // holds rank 1's window while stage 1 #1 is ordered
					}
					return nil
				})
			}()
		}
		if s == 0 {
			<-entered // stage 0 #1 is first in the launch order
		}
	}
	// The leader runs both exchanges (they need no peer here) and closes.
	require.True(t, poll(func() bool {
		cs[0].mu.Lock()
		defer cs[0].mu.Unlock()
		return len(cs[0].stages) == 2 && !cs[0].stages[0].busy && !cs[0].stages[1].busy
	}))
	require.NoError(t, cs[0].Close())
	require.True(t, poll(func() bool {
		cs[1].mu.Lock()
		defer cs[1].mu.Unlock()
		return cs[1].leaderGone
	}))
	close(release)
	wait(t, &wg, "the exchanges")
	for i, err := range errs {
		require.NoError(t, err, "run %d", i)
	}
	require.NoError(t, cs[1].Close())
}

func TestMeshKillAndMisuse(t *testing.T) {
	m := NewMesh(2)
	ctx := context.Background()
	require.NoError(t, m.Endpoint(0).Send(ctx, 1, []byte("a")))
	m.Kill(0)
	m.Kill(0)                              // twice is harmless
	got, err := m.Endpoint(1).Recv(ctx, 0) // sent before dying: still arrives
	require.NoError(t, err)
	require.Equal(t, "a", string(got))
	_, err = m.Endpoint(1).Recv(ctx, 0)
	require.ErrorIs(t, err, ErrPeerLost)
	require.ErrorIs(t, m.Endpoint(1).Send(ctx, 0, nil), ErrPeerLost)
	require.ErrorIs(t, m.Endpoint(0).Send(ctx, 1, nil), ErrPeerLost)
	require.ErrorContains(t, m.Endpoint(1).Send(ctx, 1, nil), "out of range")
	require.ErrorContains(t, m.Endpoint(5).Send(ctx, 1, nil), "out of range")
	_, err = NewMesh(-1).Endpoint(0).Recv(ctx, 1)
	require.Error(t, err)
	m.Kill(7) // out of range: ignored
}

func TestDecodeRejectsMalformedMessages(t *testing.T) {
	fail := encodeFail(&Error{Rank: 1, Msg: "x", class: ErrMismatch})
	for name, b := range map[string][]byte{
		"empty":        nil,
		"short":        make([]byte, headerLen-1),
		"kind 0":       make([]byte, headerLen),
		"kind 9":       append([]byte{9}, make([]byte, headerLen-1)...),
		"ready + tail": append(encodeID(msgReady, ID{1, 2}), 0),
		"launch class": func() []byte { b := encodeID(msgLaunch, ID{}); b[1] = 1; return b }(),
		"fail rank":    func() []byte { b := append([]byte(nil), fail...); b[2] = 9; return b }(),
		"fail class":   func() []byte { b := append([]byte(nil), fail...); b[1] = 99; return b }(),
		"bye + id":     encodeID(msgBye, ID{Stage: 1}),
	} {
		_, err := decode(b, 2)
		require.Error(t, err, name)
	}
	m, err := decode(fail, 2)
	require.NoError(t, err)
	require.Equal(t, message{kind: msgFail, class: classMismatch, rank: 1, text: "x"}, m)
	m, err = decode(encodeID(msgLaunch, ID{Stage: 3, Seq: 1 << 40}), 2)
	require.NoError(t, err)
	require.Equal(t, ID{Stage: 3, Seq: 1 << 40}, m.id)
}

func FuzzDecode(f *testing.F) {
	f.Add(encodeID(msgReady, ID{1, 2}))
	f.Add(encodeFail(&Error{Rank: 0, Msg: "boom"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decode(b, 4) // must not panic
	})
}

func TestProtocolErrorFromPeerFailsCleanly(t *testing.T) {
	// A follower that sends garbage to the leader makes every rank fail
	// with a protocol error instead of hanging or crashing.
	mesh := NewMesh(2)
	leader, err := New(Config{Rank: 0, Size: 2, Transport: mesh.Endpoint(0), Timeout: -1})
	require.NoError(t, err)
	require.NoError(t, mesh.Endpoint(1).Send(context.Background(), 0, []byte{42}))
	<-leader.Done()
	require.ErrorContains(t, leader.Err(), "protocol error from rank 1")
	require.ErrorIs(t, leader.Close(), ErrFailed)
	// The leader told rank 1 why.
	b, err := mesh.Endpoint(1).Recv(context.Background(), 0)
	require.NoError(t, err)
	m, err := decode(b, 2)
	require.NoError(t, err)
	require.Equal(t, msgFail, m.kind)
	require.Contains(t, m.text, "protocol error from rank 1")
}

func TestFailureNoticeFitsMaxMessageSize(t *testing.T) {
	long := &Error{Rank: 3, Msg: string(make([]byte, 3*MaxMessageSize))}
	b := encodeFail(long)
	require.Len(t, b, MaxMessageSize)
	m, err := decode(b, 4)
	require.NoError(t, err)
	require.Equal(t, 3, m.rank)
	require.Len(t, encodeID(msgReady, ID{}), headerLen)
}

// A follower whose leader never answers (dead, and its transport does not
// say so) gives it up once an exchange it registered has waited three
// time-outs for its launch, naming the leader.
func TestFollowerGivesUpSilentLeader(t *testing.T) {
	const timeout = 50 * time.Millisecond
	mesh := NewMesh(2) // rank 0, the leader, never runs: its links only buffer
	c, err := New(Config{Rank: 1, Size: 2, Transport: mesh.Endpoint(1), Timeout: timeout})
	require.NoError(t, err)
	t0 := time.Now()
	err = c.Run(context.Background(), ID{Stage: 0, Seq: 0}, func(context.Context) error { return errors.New("must not run") })
	took := time.Since(t0)
	require.ErrorIs(t, err, ErrPeerLost)
	require.ErrorContains(t, err, "ccc: rank 0: exchange stage 0 #0, registered on rank 1, was not launched by the leader (rank 0) within 3 times the time-out (50ms)")
	require.GreaterOrEqual(t, took, 3*timeout) // it gave up because three time-outs passed, not before
	t.Logf("gave up after %v (three time-outs: %v)", took, 3*timeout)
	require.ErrorIs(t, c.Close(), ErrPeerLost)
}
