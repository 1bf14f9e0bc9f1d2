package rowsort

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type row struct {
	key  int
	seq  int
	name string
	pad  [5]uint64
}

func TestStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 7, 12, 13, 50, 100, 1000} {
		for _, keys := range []int{1, 3, n + 1} {
			rows := make([]row, n)
			for i := range rows {
				rows[i] = row{key: rng.IntN(keys), seq: i, name: string(rune('a' + i%26))}
				rows[i].pad[4] = uint64(i) // the whole row moves
			}
			want := slices.Clone(rows)
			slices.SortStableFunc(want, func(a, b row) int { return a.key - b.key })
			Stable(rows, func(a, b *row) int { return a.key - b.key })
			if !slices.Equal(rows, want) {
				t.Fatalf("%d rows, %d keys: got %v, want %v", n, keys, rows, want)
			}
		}
	}
}

func TestStableSorted(t *testing.T) {
	rows := []row{{key: 1}, {key: 2}, {key: 3}}
	Stable(rows, func(a, b *row) int { return a.key - b.key })
	Stable(rows, func(a, b *row) int { return b.key - a.key })
	if rows[0].key != 3 || rows[2].key != 1 {
		t.Fatalf("reversed: %v", rows)
	}
}

func BenchmarkStable1000(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]row, 1000)
	for i := range src {
		src[i].key = rng.IntN(1 << 20)
	}
	rows := make([]row, len(src))
	b.Run("rowsort", func(b *testing.B) {
		for b.Loop() {
			copy(rows, src)
			Stable(rows, func(a, b *row) int { return a.key - b.key })
		}
	})
	b.Run("slices", func(b *testing.B) {
		for b.Loop() {
			copy(rows, src)
			slices.SortStableFunc(rows, func(a, b row) int { return a.key - b.key })
		}
	})
	b.Run("slices-unstable", func(b *testing.B) {
		for b.Loop() {
			copy(rows, src)
			slices.SortFunc(rows, func(a, b row) int { return a.key - b.key })
		}
	})
}
