// Package rowsort sorts the rows of the agent's tables with one copy of a
// sort in the program.
//
// slices.SortFunc is compiled once for each type of row it sorts, about
// 3 KB of code each, and a walk of the host MIBs sorts some fifteen
// types of rows, one per kernel reading: tens of pages of code that a
// polled agent finds cold at every walk (docs/mibs.md). Stable sorts
// positions, which are of one type whatever the rows are, and then moves
// the rows into their order: the sort is compiled once, and what is
// compiled per row type is the few lines below.
package rowsort

import "slices"

// Stable sorts s by cmp, keeping equal rows in the order they came, as
// slices.SortStableFunc does; cmp gets pointers to the rows, which may be
// large. It allocates a position per row.
func Stable[T any](s []T, cmp func(a, b *T) int) {
	if len(s) < 2 {
		return
	}
	pos := make([]int, len(s))
	for i := range pos {
		pos[i] = i
	}
	slices.SortFunc(pos, func(i, j int) int {
		if c := cmp(&s[i], &s[j]); c != 0 {
			return c
		}
		return i - j
	})
	// Row k of the result is row pos[k] of s: follow each cycle of the
	// permutation, moving each row once; a done position is marked by
	// pos[k] == k.
	for start := range pos {
		if pos[start] == start {
			continue
		}
		first := s[start]
		k := start
		for {
			from := pos[k]
			pos[k] = k
			if from == start {
				s[k] = first
				break
			}
			s[k] = s[from]
			k = from
		}
	}
}
