//go:build race

package smiload

// raceEnabled: the race detector makes each question of the vendor
// comparisons cost about ten times as much.
const raceEnabled = true
