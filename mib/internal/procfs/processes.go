package procfs

import (
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/mib"
)

// Processes is one listing of the host's processes, with their command
// lines, shared by every MIB that serves them (HOST-RESOURCES-MIB's
// hrSWRunTable and hrSWRunPerfTable, UCD-SNMP-MIB's prTable). Reading
// /proc/PID/stat for every process is the costliest reading of the host
// MIBs, so one reading serves them all for the TTL instead of one each.
type Processes struct {
	mu  sync.Mutex
	pr  ProcReader
	ttl time.Duration
	at  time.Time
	gen uint64 // counts listings; 0: none yet
	ps  []Process
}

// NewProcesses returns a listing of fs's processes read at most once per
// ttl (default 1 s).
func NewProcesses(fs FS, ttl time.Duration) *Processes {
	if ttl <= 0 {
		ttl = time.Second
	}
	return &Processes{pr: ProcReader{FS: fs, WithCmdline: true, KeepOpen: true}, ttl: ttl}
}

// Close closes the files the listing keeps open; a later Current opens
// them again.
func (p *Processes) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pr.Close()
}

// Current returns the listing, ascending by PID, read afresh when older
// than the TTL, and its generation, which changes with every reading. The
// slice is shared: callers must not modify it.
func (p *Processes) Current(now time.Time) ([]Process, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen == 0 || now.Sub(p.at) >= p.ttl || now.Before(p.at) {
		p.ps, _, _ = p.pr.List()
		p.at = now
		p.gen++
	}
	return p.ps, p.gen
}

// Derived is a value computed from a Processes listing (a MIB's rows),
// computed again only when the listing changes.
type Derived[T any] struct {
	mu  sync.Mutex
	gen uint64
	v   T
}

// Get returns f of the listing current at the request's time, computed
// once per listing and looked up once per request.
func (d *Derived[T]) Get(r *mib.Request, p *Processes, f func([]Process) T) T {
	if r == nil {
		return d.current(time.Now(), p, f)
	}
	return r.Memo(d, func() any { return d.current(r.Now, p, f) }).(T)
}

func (d *Derived[T]) current(now time.Time, p *Processes, f func([]Process) T) T {
	ps, gen := p.Current(now)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen != gen {
		d.v, d.gen = f(ps), gen
	}
	return d.v
}
