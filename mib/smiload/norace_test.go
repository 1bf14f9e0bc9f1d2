//go:build !race

package smiload

const raceEnabled = false
