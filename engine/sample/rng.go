package sample

import "github.com/graphferry/graphferry/engine/rng"

// Counter-based randomness. Every sampling task (one frontier node in one
// hop of one batch) gets its own stream whose 64-bit state is a hash of
// (seed, batch key, hop, original node id). The stream is SplitMix64
// (engine/rng) from that state, so what a task draws depends on
// nothing else: not on the rank or thread that runs it, nor on the order in
// which tasks run.

// streamState derives a task's stream state. Each input goes through the
// finalizer after being folded in, with distinct odd offsets per position,
// so that permuting inputs gives unrelated streams.
func streamState(seed, key, hop, node uint64) uint64 {
	h := rng.Mix(seed + rng.Golden)
	h = rng.Mix(h ^ (key + 0x6a09e667f3bcc909))
	h = rng.Mix(h ^ (hop + 0xbb67ae8584caa73b))
	h = rng.Mix(h ^ (node + 0x3c6ef372fe94f82b))
	return h
}

// taskStream returns the generator of the task (seed, key, hop, node).
func taskStream(seed, key, hop, node uint64) rng.SplitMix64 {
	return rng.SplitMix64{State: streamState(seed, key, hop, node)}
}
