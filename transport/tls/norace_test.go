//go:build !race

package tls

const raceStackFactor = 1
