package pipeline

// EpochOrder returns the positions of n seeds in the order epoch epoch of a
// Pipeline with these options visits them (the identity without shuffle):
// batch i holds positions [i*BatchSize, (i+1)*BatchSize) of it. Loaders
// that deal the batches of an epoch out to several processes use it so
// that batch i is the same everywhere.
func EpochOrder(n int, shuffle bool, seed, epoch uint64) []int64 {
	return epochOrder(n, shuffle, seed, epoch)
}
