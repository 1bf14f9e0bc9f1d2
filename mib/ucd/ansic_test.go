package ucd

import (
	"testing"
	"time"
)

// TestANSIC checks versionCDate's formatting against time's, on times of
// every weekday, month, single- and two-digit days and hours, and years
// of one to five digits.
func TestANSIC(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 11, 28, 9, 5, 7, 0, time.UTC),
		time.Date(2026, 1, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(5, 2, 3, 0, 0, 0, 0, time.UTC),
		time.Date(0, 12, 10, 10, 10, 10, 0, time.UTC),
		time.Date(999, 6, 1, 1, 2, 3, 0, time.UTC),
		time.Date(12345, 7, 4, 12, 0, 0, 0, time.UTC),
		time.Date(-44, 3, 15, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 29, 2, 30, 0, 0, time.FixedZone("X", 3600)),
	}
	for i := range 400 {
		times = append(times, time.Date(2024, 1, 1, 0, 0, 0, 0, time.Local).Add(time.Duration(i)*(31*time.Hour+7*time.Minute+13*time.Second)))
	}
	for _, tm := range times {
		if got, want := ansiC(tm), tm.Format(time.ANSIC); got != want {
			t.Errorf("ansiC(%v) = %q, want %q", tm, got, want)
		}
	}
}
