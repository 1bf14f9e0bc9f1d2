package bench

import (
	"slices"
	"testing"
)

func TestPairedRatios(t *testing.T) {
	got := pairedRatios([]float64{10, 20, 30}, []float64{5, 0, 10, 7})
	if want := []float64{2, 3}; !slices.Equal(got, want) {
		t.Errorf("pairedRatios = %v, want %v", got, want)
	}
	if wide([]float64{0.9, 1, 1, 1, 1.1}) {
		t.Error("tight ratios reported as wide")
	}
	if !wide([]float64{0.5, 0.6, 1, 1.4, 1.5}) {
		t.Error("spread ratios not reported as wide")
	}
	if wide(nil) {
		t.Error("no ratio reported as wide")
	}
}
