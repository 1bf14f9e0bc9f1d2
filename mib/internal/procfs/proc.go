package procfs

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Process is what /proc/PID/stat and /proc/PID/cmdline tell about a
// process.
type Process struct {
	PID   uint32
	Comm  string // the kernel's task name (at most 15 bytes)
	State byte   // R, S, D, T, Z, I...
	PPID  uint32
	// UTime and STime are clock ticks (USER_HZ) spent in user and kernel
	// mode; RSS is resident pages.
	UTime, STime, RSS uint64
	// Start is when the process started, in clock ticks after boot: with
	// the PID it names one process over time.
	Start uint64
	// Cmdline is argv joined by NUL bytes, without the final NUL; empty
	// for kernel threads.
	Cmdline []byte
}

// ParseProcStat reads /proc/PID/stat. The command name may contain
// spaces and parentheses, so the fields are counted from the last ')'.
func ParseProcStat(b []byte) (Process, bool) {
	var p Process
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return p, false
	}
	pid, ok := atou(bytes.TrimSpace(b[:open]))
	if !ok || pid > 1<<32-1 {
		return p, false
	}
	p.PID = uint32(pid)
	p.Comm = string(b[open+1 : end])
	// The fields up to rss (the 22nd after the name) are all it needs.
	var fb [22][]byte
	f := firstFields(bytes.TrimRight(b[end+1:], "\n"), fb[:0])
	// f[0] is state (field 3); utime is field 14, stime 15, rss 24.
	if len(f) < 22 || len(f[0]) != 1 {
		return p, false
	}
	p.State = f[0][0]
	ppid, ok1 := atou(f[1])
	ut, ok2 := atou(f[11])
	st, ok3 := atou(f[12])
	rss, ok4 := atou(f[21])
	p.Start, _ = atou(f[19])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		// RSS may be negative on some kernels' accounting; treat as 0.
		if !ok1 || !ok2 || !ok3 {
			return p, false
		}
	}
	p.PPID, p.UTime, p.STime, p.RSS = uint32(ppid), ut, st, rss
	return p, true
}

// ProcReader lists processes, reusing its buffers between calls. Not safe
// for concurrent use.
type ProcReader struct {
	FS FS
	// WithCmdline also reads /proc/PID/cmdline.
	WithCmdline bool
	// KeepOpen keeps each process's stat file open between listings and
	// reads it again with pread(2): one system call a process instead of
	// four (open, read, read to the end, close) and no path lookup. The
	// descriptors are closed when their process has gone and by Close;
	// at most maxKept are kept.
	KeepOpen bool

	buf  []byte
	path []byte
	dir  DirReader
	// cmdlines keeps each process's command line, read once: a process
	// rarely rewrites its argv, and reading it again for every listing
	// would double the system calls.
	cmdlines map[procKey][]byte
	kept     map[uint32]int // PID -> open /proc/PID/stat
}

// maxKept bounds the stat files a ProcReader keeps open: 4096, and at
// most a quarter of the process's descriptor limit, so that the agent's
// connections never lack one. Processes past it are read by opening
// their file each time.
var maxKept = sync.OnceValue(func() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return int(min(rl.Cur/4, 4096))
})

// Close closes the stat files kept open.
func (pr *ProcReader) Close() {
	for pid, fd := range pr.kept {
		unix.Close(fd)
		delete(pr.kept, pid)
	}
}

type procKey struct {
	pid   uint32
	start uint64
}

// List returns every process, ascending by PID. Processes that exit while
// being read are left out, as are those whose stat cannot be parsed
// (counted in bad).
func (pr *ProcReader) List() (ps []Process, bad int, err error) {
	names, err := pr.PIDs()
	if err != nil {
		return nil, 0, err
	}
	ps, bad = pr.ListPIDs(names)
	return ps, bad, nil
}

// PIDs returns the names of /proc's process directories, in the order
// the directory lists them.
func (pr *ProcReader) PIDs() ([]string, error) {
	d, err := unix.Open(pr.FS.Path("/proc"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: pr.FS.Path("/proc"), Err: err}
	}
	var names []string
	err = pr.dir.Each(d, func(name []byte) bool {
		if _, ok := PIDName(name); ok {
			names = append(names, string(name))
		}
		return true
	})
	unix.Close(d)
	if err != nil {
		return nil, err
	}
	return names, nil
}

// ListPIDs is List of the processes names (from PIDs) lists.
func (pr *ProcReader) ListPIDs(names []string) (ps []Process, bad int) {
	if pr.buf == nil {
		pr.buf = make([]byte, 64<<10)
	}
	ps = make([]Process, 0, len(names))
	next := make(map[procKey][]byte, len(names))
	defer func() {
		if pr.WithCmdline {
			pr.cmdlines = next
		}
	}()
	var seen map[uint32]bool
	if pr.KeepOpen {
		seen = make(map[uint32]bool, len(names))
		defer pr.closeGone(seen)
	}
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		var b []byte
		var ok bool
		if pr.KeepOpen {
			b, ok = pr.readStat(n, seen)
		} else {
			b, ok = pr.read(n, "/stat")
		}
		if !ok {
			continue // exited
		}
		p, ok := ParseProcStat(b)
		if !ok {
			bad++
			continue
		}
		if pr.WithCmdline {
			k := procKey{p.PID, p.Start}
			c, seen := pr.cmdlines[k]
			if !seen {
				if b, ok := pr.read(n, "/cmdline"); ok {
					c = slices.Clone(bytes.TrimRight(b, "\x00"))
				}
			}
			p.Cmdline = c
			next[k] = c
		}
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b Process) int { return int(int64(a.PID) - int64(b.PID)) })
	return ps, bad
}

// readStat reads /proc/PID/stat through the descriptor kept for PID,
// opening (or, when the process it was opened for has gone and the PID
// was reused, reopening) it as needed.
func (pr *ProcReader) readStat(pid string, seen map[uint32]bool) ([]byte, bool) {
	id, err := strconv.ParseUint(pid, 10, 32)
	if err != nil {
		return nil, false
	}
	if pr.kept == nil {
		pr.kept = map[uint32]int{}
	}
	for try := 0; try < 2; try++ {
		fd, ok := pr.kept[uint32(id)]
		if !ok {
			if len(pr.kept) >= maxKept() {
				return pr.read(pid, "/stat")
			}
			if fd, ok = pr.open(pid, "/stat"); !ok {
				return nil, false // exited
			}
			pr.kept[uint32(id)] = fd
		}
		n, err := preadAll(fd, pr.buf)
		if err == nil {
			seen[uint32(id)] = true
			return pr.buf[:n], true
		}
		// The process this descriptor was opened for has exited (ESRCH):
		// open the PID's file again, which may be a new process's.
		unix.Close(fd)
		delete(pr.kept, uint32(id))
	}
	return nil, false
}

// closeGone closes the descriptors of processes not seen in a listing.
func (pr *ProcReader) closeGone(seen map[uint32]bool) {
	for pid, fd := range pr.kept {
		if !seen[pid] {
			unix.Close(fd)
			delete(pr.kept, pid)
		}
	}
}

// preadAll reads a whole /proc file from its start into buf.
func preadAll(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := unix.Pread(fd, buf[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if m == 0 {
			break
		}
		n += m
		if n < len(buf) {
			// /proc's stat fits one read; a short read is its end.
			break
		}
	}
	return n, nil
}

// open opens /proc/PID/file.
func (pr *ProcReader) open(pid, file string) (int, bool) {
	pr.path = append(pr.path[:0], pr.FS.Path("/proc")...)
	pr.path = append(pr.path, '/')
	pr.path = append(pr.path, pid...)
	pr.path = append(pr.path, file...)
	fd, err := unix.Open(string(pr.path), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	return fd, err == nil
}

// read reads /proc/PID/file into the reader's buffer.
func (pr *ProcReader) read(pid, file string) ([]byte, bool) {
	fd, ok := pr.open(pid, file)
	if !ok {
		return nil, false
	}
	defer unix.Close(fd)
	n := 0
	for n < len(pr.buf) {
		m, err := unix.Read(fd, pr.buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return pr.buf[:n], true
}

// ClockTick is USER_HZ, the unit of /proc's CPU times; Linux fixes it at
// 100 on every architecture.
const ClockTick = 100

// PageKB is the page size in kB.
var PageKB = uint64(os.Getpagesize() / 1024)

// FormatPID returns the decimal PID.
func FormatPID(pid uint32) string { return strconv.FormatUint(uint64(pid), 10) }

// SplitCmdline returns argv[0] and the other arguments joined by spaces,
// each cut to the 128 octets of hrSWRunPath and hrSWRunParameters.
func SplitCmdline(c []byte) (path, params []byte) {
	path, rest, _ := bytes.Cut(c, []byte{0})
	if len(rest) > 128 {
		rest = rest[:128]
	}
	if bytes.IndexByte(rest, 0) >= 0 {
		rest = bytes.ReplaceAll(rest, []byte{0}, []byte{' '})
	}
	return path[:min(len(path), 128)], rest
}
