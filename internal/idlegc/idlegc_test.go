package idlegc

import (
	"context"
	"runtime"
	"testing"
	"time"
)

func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// TestRunCollectsWhenIdle idles a second with run looking every 20 ms
// for a heap left 100 ms: it must collect several times. The runtime's
// own forced collection comes only after two minutes.
func TestRunCollectsWhenIdle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx, 100*time.Millisecond, 20*time.Millisecond); close(done) }()
	n0 := numGC()
	time.Sleep(time.Second)
	n1 := numGC()
	cancel()
	<-done
	if n1-n0 < 4 {
		t.Errorf("%d collections in 1 s of idling, want at least 4 (one per 100 ms, looked for every 20 ms)", n1-n0)
	}
	// Once ctx has ended run starts none.
	time.Sleep(300 * time.Millisecond)
	if n2 := numGC(); n2 != n1 {
		t.Errorf("%d collections in 300 ms after Run returned, want none", n2-n1)
	}
}

// TestRunLeavesRecentHeap runs run with an age of an hour: a heap
// collected less than an hour ago is not collected again.
func TestRunLeavesRecentHeap(t *testing.T) {
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx, time.Hour, 10*time.Millisecond); close(done) }()
	n0 := numGC()
	time.Sleep(300 * time.Millisecond)
	n1 := numGC()
	cancel()
	<-done
	if n1 != n0 {
		t.Errorf("%d collections in 300 ms of a heap collected just before, want none", n1-n0)
	}
}
