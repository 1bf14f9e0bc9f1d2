//go:build race

package tls

// raceStackFactor: the race detector doubles goroutine stacks.
const raceStackFactor = 2
