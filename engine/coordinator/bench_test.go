package coordinator

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkExchange measures one coordinated exchange on in-process ranks:
// every rank runs b.N exchanges of one stage over the fake collective (no
// slot), with the coordinator off (the collective alone) and on. The
// coordination overhead per exchange is the difference between the two.
// ns/op is per exchange, the same exchange on every rank.
func BenchmarkExchange(b *testing.B) {
	for _, ranks := range []int{2, 4} {
		for _, off := range []bool{true, false} {
			mode := "on"
			if off {
				mode = "off"
			}
			b.Run(fmt.Sprintf("ranks=%d/ccc=%s", ranks, mode), func(b *testing.B) {
				cs, _ := group(b, ranks, Config{Off: off})
				f := newFakeNet(ranks, false)
				ctx := context.Background()
				errs := make([]error, ranks)
				b.ResetTimer()
				var wg sync.WaitGroup
				for r := 0; r < ranks; r++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < b.N; i++ {
							id := ID{Stage: 0, Seq: uint64(i)}
							if err := cs[r].Run(ctx, id, func(ctx context.Context) error {
								_, err := f.exchange(ctx, r, id)
								return err
							}); err != nil {
								errs[r] = err
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				for r, err := range errs {
					if err != nil {
						b.Fatalf("rank %d: %v", r, err)
					}
				}
			})
		}
	}
}
