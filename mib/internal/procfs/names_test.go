package procfs

import (
	"runtime"
	"strconv"
	"testing"
)

// TestNamesBurstReturns lists a burst of names once, then one name: the
// burst is forgotten down to KeepGone/2 names, and the memory it took
// comes back.
func TestNamesBurstReturns(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	var n Names[int]
	const burst = 200_000
	n.Next()
	for i := range burst {
		n.Set("/var/lib/containers/"+strconv.Itoa(i)+"/merged", i)
	}
	n.Forget(burst)
	during := heap()
	n.Next()
	n.Set("/", -1)
	n.Forget(1)
	after := heap()
	if n.Len() != 1+KeepGone/2 {
		t.Errorf("%d names remembered, want %d", n.Len(), 1+KeepGone/2)
	}
	t.Logf("heap: %d before, %d with the burst, %d after", before, during, after)
	if grown := during - before; after > before+grown/10 {
		t.Errorf("heap %d after the burst was forgotten, %d before it and %d with it: the map kept its size", after, before, during)
	}
	runtime.KeepAlive(&n)
}
