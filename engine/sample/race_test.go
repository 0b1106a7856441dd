//go:build race

package sample

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = true
