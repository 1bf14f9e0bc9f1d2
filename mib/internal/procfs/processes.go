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

	// names are /proc's process directories as last scanned, at
	// namesAt: Count and the listing share a scan younger than the TTL.
	names   []uint32
	namesAt time.Time
	namesOK bool
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
// slice is shared: callers must not modify it. A listing counts as read
// when the /proc directory it lists was scanned: one scan younger than
// the TTL (taken by Count, say) serves both, and the listing then expires
// with it.
func (p *Processes) Current(now time.Time) ([]Process, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen == 0 || now.Sub(p.at) >= p.ttl || now.Before(p.at) {
		p.ps = nil
		if names, ok := p.pids(now); ok {
			var bad int
			p.ps, bad = p.pr.ListPIDs(names)
			CountBad("/proc/PID/stat", bad)
		}
		p.at = p.namesAt
		p.gen++
	}
	return p.ps, p.gen
}

// Cmdline returns the command line of proc, a process of a listing
// Current returned, read again at most once per listing: the first time
// it is asked for after the listing that last read it (see
// ProcReader.Cmdline). Only the processes whose command line a request
// asks for are read again, and the listing expires after the TTL, so a
// command line a program rewrites in place is served within the TTL of
// the reading that finds it, as the rest of the listing.
func (p *Processes) Cmdline(proc *Process) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pr.Cmdline(proc)
}

// Count returns the number of processes: the entries of /proc's process
// directories, scanned afresh when the last scan is older than the TTL.
// ok is false when /proc cannot be read.
func (p *Processes) Count(now time.Time) (n int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	names, ok := p.pids(now)
	return len(names), ok
}

// pids returns the names of /proc's process directories from a scan
// younger than the TTL, taking one when there is none. Caller holds mu.
func (p *Processes) pids(now time.Time) ([]uint32, bool) {
	if p.namesAt.IsZero() || now.Sub(p.namesAt) >= p.ttl || now.Before(p.namesAt) {
		names, err := p.pr.PIDs()
		p.names, p.namesOK, p.namesAt = names, err == nil, now
	}
	return p.names, p.namesOK
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
