package coordinator_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/graphferry/graphferry/engine/coordinator"
)

// Two ranks, goroutines of one process, each with two stages that exchange
// concurrently. Every exchange runs on every rank in the one order the
// leader fixes.
func Example() {
	const ranks, stages, exchanges = 2, 2, 3
	mesh := coordinator.NewMesh(ranks)
	var mu sync.Mutex
	ran := map[int]int{}
	var wg sync.WaitGroup
	for r := 0; r < ranks; r++ {
		c, err := coordinator.New(coordinator.Config{Rank: r, Size: ranks, Leader: 0, Transport: mesh.Endpoint(r)})
		if err != nil {
			panic(err)
		}
		var stagesDone sync.WaitGroup
		for s := 0; s < stages; s++ {
			stagesDone.Add(1)
			go func() {
				defer stagesDone.Done()
				for seq := uint64(1); seq <= exchanges; seq++ {
					err := c.Run(context.Background(), coordinator.ID{Stage: uint32(s), Seq: seq}, func(ctx context.Context) error {
						// Here the stage calls its communicator's AllToAll.
						mu.Lock()
						ran[r]++
						mu.Unlock()
						return nil
					})
					if err != nil {
						panic(err)
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			stagesDone.Wait()
			if err := c.Close(); err != nil {
				panic(err)
			}
		}()
	}
	wg.Wait()
	fmt.Println(ran[0], ran[1])
	// Output: 6 6
}
