// Package idlegc starts the garbage collections of a daemon that is idle
// between requests, so that they do not start with a request.
//
// The Go runtime forces a collection when none has run for two minutes.
// The system monitor that starts it sleeps while the process has nothing
// to run, until its next timer or until a thread comes back from a
// system call and finds no processor of its own, as a daemon's reader
// does with the next request: an idle daemon's forced collection may
// then start with that request and mark the whole heap, cold in the
// CPU's caches, beside it. Walked every 15 s, tsnmpd had a forced
// collection inside 3 of 40 walks, two of which took twice the median
// CPU (docs/mibs.md). Run starts collections of its own on a timer
// before the runtime's comes due, and a request meets one only by
// chance; while the daemon is busy, its allocations collect often enough
// and Run starts none.
package idlegc

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

const (
	// maxAge is how long Run lets the heap go without a collection: two
	// thirds of the runtime's two minutes.
	maxAge = 80 * time.Second
	// lookEvery is how often Run looks. maxAge + lookEvery must stay
	// below two minutes, with room for a tick that comes late on a busy
	// machine, for the runtime's forced collection never to come due.
	lookEvery = 30 * time.Second
)

// Run starts a collection every 30 s in which none has run for 80 s,
// until ctx ends.
func Run(ctx context.Context) { run(ctx, maxAge, lookEvery) }

// run starts a collection every period in which none has run for age,
// until ctx ends.
func run(ctx context.Context, age, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	var st debug.GCStats
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			debug.ReadGCStats(&st)
			if now.Sub(st.LastGC) >= age {
				runtime.GC()
			}
		}
	}
}
