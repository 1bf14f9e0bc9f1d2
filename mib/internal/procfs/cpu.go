package procfs

import (
	"sync"
	"time"
)

// Sample is one reading of the kernel's CPU, interrupt, context-switch,
// paging and swapping counters.
type Sample struct {
	At   time.Time
	Stat Stat
	VM   Vmstat
}

// CPUHistory reads /proc/stat and /proc/vmstat every Interval in the
// background and keeps a minute of samples, for the objects defined as
// averages over the last minute (hrProcessorLoad, ssCpuUser, ssSysContext
// and the like). A reading costs a few microseconds.
type CPUHistory struct {
	fs       FS
	interval time.Duration

	mu      sync.Mutex
	samples []Sample // oldest first
	disks   map[string]*DiskLoad
	diskAt  time.Time

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// NewCPUHistory starts sampling every interval (default 5 s), taking the
// first sample before it returns.
func NewCPUHistory(fs FS, interval time.Duration) *CPUHistory {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	h := &CPUHistory{fs: fs, interval: interval, stop: make(chan struct{}), done: make(chan struct{})}
	h.sample(time.Now())
	go h.run()
	return h
}

func (h *CPUHistory) run() {
	defer close(h.done)
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			h.sample(now)
		}
	}
}

// ReadSample reads the counters once.
func (fs FS) ReadSample(now time.Time) (Sample, bool) {
	b, err := fs.ReadFile("/proc/stat")
	if err != nil {
		return Sample{}, false
	}
	s := Sample{At: now, Stat: ParseStat(b)}
	CountBad("/proc/stat", s.Stat.Bad)
	if b, err := fs.ReadFile("/proc/vmstat"); err == nil {
		s.VM = ParseVmstat(b)
		CountBad("/proc/vmstat", s.VM.Bad)
	}
	return s, s.Stat.HasAll
}

func (h *CPUHistory) sample(now time.Time) {
	if s, ok := h.fs.ReadSample(now); ok {
		h.Add(s)
	}
	if b, err := h.fs.ReadFile("/proc/diskstats"); err == nil {
		ds, bad := ParseDiskstats(b)
		CountBad("/proc/diskstats", bad)
		h.addDisks(now, ds)
	}
}

// addDisks folds a diskstats reading into the devices' busy averages.
func (h *CPUHistory) addDisks(now time.Time, ds []DiskStat) {
	h.mu.Lock()
	defer h.mu.Unlock()
	first := h.disks == nil
	if first {
		h.disks = make(map[string]*DiskLoad)
	}
	secs := now.Sub(h.diskAt).Seconds()
	seen := make(map[string]bool, len(ds))
	for _, d := range ds {
		seen[d.Name] = true
		l := h.disks[d.Name]
		if l == nil {
			h.disks[d.Name] = &DiskLoad{lastUse: d.IOTicks}
			continue
		}
		l.update(d.IOTicks, secs)
	}
	for n := range h.disks {
		if !seen[n] {
			delete(h.disks, n)
		}
	}
	h.diskAt = now
}

// DiskLoad returns a device's busy averages (percent) over 1, 5 and 15
// minutes.
func (h *CPUHistory) DiskLoad(name string) [3]float64 {
	if h == nil {
		return [3]float64{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.disks[name]; l != nil {
		return l.LA
	}
	return [3]float64{}
}

// Add appends a sample (the sampler's; tests add their own).
func (h *CPUHistory) Add(s Sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, s)
	// Keep the newest sample at least a minute old, and those after it.
	drop := 0
	for drop+2 < len(h.samples) && !h.samples[drop+1].At.After(s.At.Add(-time.Minute)) {
		drop++
	}
	if drop > 0 {
		h.samples = append(h.samples[:0], h.samples[drop:]...)
	}
}

// Minute returns the oldest sample of the last minute and the newest
// one; ok is false until two samples exist.
func (h *CPUHistory) Minute() (old, cur Sample, ok bool) {
	if h == nil {
		return Sample{}, Sample{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.samples) < 2 {
		return Sample{}, Sample{}, false
	}
	return h.samples[0], h.samples[len(h.samples)-1], true
}

// Close stops the sampler.
func (h *CPUHistory) Close() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		close(h.stop)
		<-h.done
	})
}

// Percent returns 100*part/total rounded down, 0 when total is 0, as
// Net-SNMP computes ssCpuUser and friends.
func Percent(part, total uint64) int64 {
	if total == 0 {
		return 0
	}
	return int64(part * 100 / total)
}

// Sub returns a-b, or 0 when the counter went backwards.
func Sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
