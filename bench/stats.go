package bench

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Summary is the spread of a set of measurements: warm-up runs are
// dropped before a Summary is made, and N says how many remain.
type Summary struct {
	N                          int
	Min, P25, Median, P75, Max float64
	Mean                       float64
}

// Summarize computes the spread of xs (which it does not modify).
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	return Summary{N: len(s), Min: s[0], P25: quantile(s, 0.25), Median: quantile(s, 0.5),
		P75: quantile(s, 0.75), Max: s[len(s)-1], Mean: sum / float64(len(s))}
}

// quantile interpolates linearly in sorted s.
func quantile(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i]*(1-f) + s[i+1]*f
}

// Millis converts durations to milliseconds.
func Millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

// Spread renders min/p25/median/p75/max with a precision suited to v.
func (s Summary) Spread() string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%s / %s / %s / %s / %s", Num(s.Min), Num(s.P25), Num(s.Median), Num(s.P75), Num(s.Max))
}

// Num formats a measurement with three significant digits (at least).
func Num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "-"
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.2f", v)
	case a >= 1:
		return fmt.Sprintf("%.3f", v)
	default:
		return fmt.Sprintf("%.4f", v)
	}
}

// Ratio formats a/b, or "-" when either is missing.
func Ratio(a, b float64) string {
	if a == 0 || b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}
