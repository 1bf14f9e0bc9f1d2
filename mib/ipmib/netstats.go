package ipmib

import (
	"sync"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// fromNet is a snapshot made from readings of the shared counter files,
// made again only when one of them is a new reading: it is exactly as
// fresh as they are.
type fromNet[T any] struct {
	mu   sync.Mutex
	made bool
	src  [3]*procfs.NetCounters
	v    T
}

// get returns the snapshot of the readings src, made by build when they
// are not those of the last one; once per request.
func (f *fromNet[T]) get(r *mib.Request, src func() [3]*procfs.NetCounters, build func([3]*procfs.NetCounters) T) T {
	load := func() any {
		s := src()
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.made || f.src != s {
			f.v, f.src, f.made = build(s), s, true
		}
		return f.v
	}
	if r == nil {
		return load().(T)
	}
	return r.Memo(f, load).(T)
}
