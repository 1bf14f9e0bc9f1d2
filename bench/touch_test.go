package bench

import (
	"os"
	"testing"
	"time"
)

// TestPagesTouched clears this process's referenced bits, touches 2,048
// pages of a buffer it made before, and checks that pagesTouched counts
// them among the other data.
func TestPagesTouched(t *testing.T) {
	buf := make([]byte, 2048*os.Getpagesize())
	for i := range buf {
		buf[i] = 1
	}
	sum := 0
	used, err := pagesTouched(os.Getpid(), func() error {
		for p := 0; p < len(buf); p += os.Getpagesize() {
			sum += int(buf[p])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum != 2048 {
		t.Fatalf("read %d pages", sum)
	}
	if used.other*1024/os.Getpagesize() < 2048 || used.code == 0 {
		t.Errorf("pages touched: %v; want at least 2,048 of other data, and some code", used)
	}
}

// TestParseSmapsReferenced sums a recorded /proc/PID/smaps of tsnmpd by
// mapping: code, read-only data and the rest.
func TestParseSmapsReferenced(t *testing.T) {
	b, err := os.ReadFile("testdata/smaps")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseSmapsReferenced(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := (touched{code: 1152, rodata: 564, other: 1684}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseSmapsReferenced([]byte("00400000-00b77000 r-xp 00000000 fe:00 9978248 /bin/x\nReferenced: x kB\n")); err == nil {
		t.Error("a Referenced line without a number parsed")
	}
}

// TestPageTouchCost times passes over the probe's pages: each takes
// time, and a pause makes none cheaper than the processor's cache.
func TestPageTouchCost(t *testing.T) {
	cold, warm, err := pageTouchCost(20*time.Millisecond, 3)
	if err != nil {
		t.Fatal(err)
	}
	if cold <= 0 || warm <= 0 {
		t.Errorf("cold %v, warm %v per page: want both above 0", cold, warm)
	}
}
