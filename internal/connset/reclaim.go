package connset

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Memory that a burst of connections took (buffers, TLS and SSH state,
// goroutine stacks) becomes garbage when they close, but the Go runtime
// returns it to the operating system only slowly: the heap shrinks at the
// next collection, which an idle agent may not run for two minutes, and
// the scavenger gives back freed pages gradually. So when the connections
// open in this process (all sets together) fall to half of their peak,
// and the peak was at least min (256), the set asks the runtime to
// collect and return memory at once (debug.FreeOSMemory), delay (1 s)
// after the first such close and at most once per interval (10 s); see
// SetReclaim.
var reclaim struct {
	open, peak atomic.Int64
	reclaims   atomic.Int64
	min        atomic.Int64
	delay      atomic.Int64 // time.Duration
	interval   atomic.Int64 // time.Duration

	mu      sync.Mutex
	timer   *time.Timer
	last    time.Time
	pending bool
}

func init() { SetReclaim(256, time.Second, 10*time.Second) }

// SetReclaim sets when memory is returned after bulk closes: once the
// open connections fall to half of a peak of at least min, delay after
// that close, at most once per interval; min 0 turns it off. It returns
// the previous settings.
func SetReclaim(min int64, delay, interval time.Duration) (int64, time.Duration, time.Duration) {
	if min <= 0 {
		min = 1 << 62
	}
	return reclaim.min.Swap(min), time.Duration(reclaim.delay.Swap(int64(delay))), time.Duration(reclaim.interval.Swap(int64(interval)))
}

// Reclaims returns how often freed memory has been returned to the
// operating system after bulk closes.
func Reclaims() int64 { return reclaim.reclaims.Load() }

func opened() {
	n := reclaim.open.Add(1)
	for {
		p := reclaim.peak.Load()
		if n <= p || reclaim.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func closed() {
	n := reclaim.open.Add(-1)
	p := reclaim.peak.Load()
	if p < reclaim.min.Load() || n > p/2 {
		return
	}
	r := &reclaim
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending {
		return
	}
	wait := time.Duration(r.delay.Load())
	if next := time.Until(r.last.Add(time.Duration(r.interval.Load()))); next > wait {
		wait = next
	}
	if r.timer == nil {
		r.timer = time.AfterFunc(wait, runReclaim)
	} else {
		r.timer.Reset(wait)
	}
	r.pending = true
}

func runReclaim() {
	r := &reclaim
	r.mu.Lock()
	if !r.pending {
		r.mu.Unlock()
		return
	}
	r.pending = false
	r.last = time.Now()
	r.peak.Store(r.open.Load())
	r.mu.Unlock()
	debug.FreeOSMemory()
	r.reclaims.Add(1)
}
