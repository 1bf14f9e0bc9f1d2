package procfs

import (
	"bytes"
	"cmp"
	"os"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/internal/rowsort"
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
	// for kernel threads. It is the command line as last read when the
	// process was listed; ProcReader.Cmdline reads it again.
	Cmdline []byte
}

// ParseProcStat reads /proc/PID/stat. The command name may contain
// spaces and parentheses, so the fields are counted from the last ')'.
func ParseProcStat(b []byte) (Process, bool) {
	p, comm, _, ok := parseProcStat(b)
	if ok {
		p.Comm = string(comm)
	}
	return p, ok
}

// statExtra is what parseProcStat reads for the ProcReader beside a
// Process.
type statExtra struct {
	// args are the addresses of the process's argument area (arg_start
	// and arg_end, fields 48 and 49; 0 where the kernel does not print
	// them or shows them to the reader as 0).
	args [2]uint64
	// kthread: the process is a kernel thread (PF_KTHREAD in field 9,
	// flags), which has no command line.
	kthread bool
	// threads is num_threads (field 20).
	threads uint64
}

// pfKthread is the kernel's PF_KTHREAD task flag.
const pfKthread = 0x00200000

// parseProcStat is ParseProcStat without the allocation of Comm: comm
// is the command name within b.
func parseProcStat(b []byte) (p Process, comm []byte, x statExtra, _ bool) {
	var args [2]uint64
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return p, nil, x, false
	}
	pid, ok := atou(bytes.TrimSpace(b[:open]))
	if !ok || pid > 1<<32-1 {
		return p, nil, x, false
	}
	p.PID = uint32(pid)
	comm = b[open+1 : end]
	// The fields up to rss (the 22nd after the name) and arg_start and
	// arg_end (the 46th and 47th) are all it needs.
	var fb [47][]byte
	f := firstFields(bytes.TrimRight(b[end+1:], "\n"), fb[:0])
	// f[0] is state (field 3); utime is field 14, stime 15, rss 24.
	if len(f) < 22 || len(f[0]) != 1 {
		return p, nil, x, false
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
			return p, nil, x, false
		}
	}
	p.PPID, p.UTime, p.STime, p.RSS = uint32(ppid), ut, st, rss
	if flags, ok := atou(f[6]); ok {
		x.kthread = flags&pfKthread != 0
	}
	x.threads, _ = atou(f[17])
	if len(f) == 47 {
		args[0], _ = atou(f[45])
		args[1], _ = atou(f[46])
	}
	x.args = args
	return p, comm, x, true
}

// ProcReader lists processes, reusing its buffers between calls. Not safe
// for concurrent use.
type ProcReader struct {
	FS FS
	// WithCmdline also reads /proc/PID/cmdline.
	WithCmdline bool
	// KeepOpen keeps each process's stat file, and the cmdline and
	// schedstat files of each process that has a command line, open
	// between listings and reads them again with pread(2): one system
	// call a file instead of four (open, read, read to the end, close)
	// and no path lookup. The descriptors are closed when their process
	// has gone and by Close; at most maxKept are kept.
	KeepOpen bool

	buf  []byte
	path []byte
	dir  DirReader
	pids []uint32 // PIDs' result
	// known keeps each process's command line, read when the process is
	// first listed and again when it runs another program (its name or
	// its argument area changes), or when Cmdline asks for it in a later
	// listing (a program may rewrite its argv in place, as setproctitle
	// does) and the process may have run since, and its name as last
	// served, so that an unchanged name is not copied again. next is the
	// map being built by a listing, swapped with known at its end.
	known, next map[procKey]procInfo
	kept        map[uint32]keptStat // PID -> its open /proc/PID files
	nkept       int                 // descriptors in kept
	schedstat   int8                // /proc/PID/schedstat: 0 not looked for, 1 present, -1 absent
	cmdReads    int                 // command lines read, for the tests
	gen         uint64              // counts listings, for kept and procInfo.cmdGen
}

// procInfo is what a ProcReader keeps of a process between listings.
type procInfo struct {
	cmdline []byte
	comm    string
	args    [2]uint64 // where the argument area was (parseProcStat)
	cmdGen  uint64    // the listing during which cmdline was read
	kthread bool      // a kernel thread: no command line to read again
	threads uint64    // its threads at the last listing
	// ran is how long the process's one thread had run (ProcReader.ran)
	// right before cmdline was read; ranOK is false where it was not
	// read (more threads than one, or no schedstat).
	ran   uint64
	ranOK bool
}

// keptStat is a process's /proc/PID/stat file kept open, its
// /proc/PID/cmdline and /proc/PID/schedstat (-1: not kept), and the last
// listing that found the process. They name the process they were opened
// for, whatever program it runs: once it has gone, a read fails (ESRCH)
// even when its PID has been given to another.
type keptStat struct {
	fd, cmd, sched int
	gen            uint64
}

// maxKept bounds the descriptors a ProcReader keeps open: 8192 (a stat,
// a cmdline and a schedstat file each for 2,730 processes), and at most
// a quarter of the process's descriptor limit, so that the agent's
// connections never lack one. Processes past it are read by opening
// their files each time.
var maxKept = sync.OnceValue(func() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return int(min(rl.Cur/4, 8192))
})

// Close closes the files kept open.
func (pr *ProcReader) Close() {
	for pid := range pr.kept {
		pr.closeKept(pid)
	}
}

// closeKept closes the files kept for pid.
func (pr *ProcReader) closeKept(pid uint32) {
	k, ok := pr.kept[pid]
	if !ok {
		return
	}
	rawsys.Close(k.fd)
	pr.nkept--
	for _, fd := range []int{k.cmd, k.sched} {
		if fd >= 0 {
			rawsys.Close(fd)
			pr.nkept--
		}
	}
	delete(pr.kept, pid)
}

type procKey struct {
	pid   uint32
	start uint64
}

// List returns every process, ascending by PID. Processes that exit while
// being read are left out, as are those whose stat cannot be parsed
// (counted in bad).
func (pr *ProcReader) List() (ps []Process, bad int, err error) {
	pids, err := pr.PIDs()
	if err != nil {
		return nil, 0, err
	}
	ps, bad = pr.ListPIDs(pids)
	return ps, bad, nil
}

// PIDs returns the PIDs of /proc's process directories, in the order
// the directory lists them. The slice is reused by the next call.
func (pr *ProcReader) PIDs() ([]uint32, error) {
	d, err := rawsys.Open(pr.FS.Path("/proc"), unix.O_DIRECTORY)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: pr.FS.Path("/proc"), Err: err}
	}
	pids := pr.pids[:0]
	err = pr.dir.Each(d, func(name []byte) bool {
		if pid, ok := PIDName(name); ok {
			pids = append(pids, pid)
		}
		return true
	})
	rawsys.Close(d)
	pr.pids = pids
	if err != nil {
		return nil, err
	}
	return pids, nil
}

// ListPIDs is List of the processes pids (from PIDs) lists.
func (pr *ProcReader) ListPIDs(pids []uint32) (ps []Process, bad int) {
	if pr.buf == nil {
		pr.buf = make([]byte, 64<<10)
	}
	ps = make([]Process, 0, len(pids))
	if pr.next == nil {
		pr.next = make(map[procKey]procInfo, len(pids))
	}
	next := pr.next
	pr.gen++
	for _, pid := range pids {
		var b []byte
		var ok bool
		if pr.KeepOpen {
			b, ok = pr.readStat(pid)
		} else {
			b, ok = pr.read(pid, "/stat")
		}
		if !ok {
			continue // exited
		}
		p, comm, x, ok := parseProcStat(b)
		if !ok {
			bad++
			continue
		}
		k := procKey{p.PID, p.Start}
		info, seen := pr.known[k]
		renamed := string(comm) != info.comm
		if renamed {
			info.comm = string(comm)
		}
		p.Comm = info.comm
		info.kthread, info.threads = x.kthread, x.threads
		if pr.WithCmdline {
			// A process that runs another program (execve) keeps its PID
			// and start time, and takes the program's name and a new
			// argument area: its command line is read again when its
			// name or the area's place changes (a program that runs
			// another of the same name, such as a shell, keeps the name).
			// A zombie, whose area reads 0, keeps its command line. A
			// command line rewritten in place is read again by Cmdline.
			moved := x.args != info.args && x.args != [2]uint64{}
			if !seen || renamed || moved {
				info.args = x.args
				info.cmdline = nil
				info.ran, info.ranOK = 0, false
				if !x.kthread {
					info.ran, info.ranOK = pr.ran(pid, x.threads, true)
				}
				if b, ok := pr.readCmdline(pid, !x.kthread); ok {
					info.cmdline = slices.Clone(bytes.TrimRight(b, "\x00"))
				}
				info.cmdGen = pr.gen
			}
			p.Cmdline = info.cmdline
		}
		next[k] = info
		ps = append(ps, p)
	}
	// The processes of this listing are known to the next; the others
	// are forgotten.
	clear(pr.known)
	pr.known, pr.next = next, pr.known
	if pr.KeepOpen {
		pr.closeGone()
	}
	rowsort.Stable(ps, func(a, b *Process) int { return cmp.Compare(a.PID, b.PID) })
	return ps, bad
}

// readStat reads /proc/PID/stat through the descriptor kept for PID,
// opening (or, when the process it was opened for has gone and the PID
// was reused, reopening) it as needed.
func (pr *ProcReader) readStat(pid uint32) ([]byte, bool) {
	if pr.kept == nil {
		pr.kept = map[uint32]keptStat{}
	}
	for try := 0; try < 2; try++ {
		k, ok := pr.kept[pid]
		if !ok {
			if pr.nkept >= maxKept() {
				return pr.read(pid, "/stat")
			}
			if k.fd, ok = pr.open(pid, "/stat"); !ok {
				return nil, false // exited
			}
			k.cmd, k.sched = -1, -1
			pr.nkept++
		}
		n, err := preadAll(k.fd, pr.buf)
		if err == nil {
			k.gen = pr.gen
			pr.kept[pid] = k
			return pr.buf[:n], true
		}
		// The process this descriptor was opened for has exited (ESRCH):
		// open the PID's file again, which may be a new process's.
		pr.kept[pid] = k
		pr.closeKept(pid)
	}
	return nil, false
}

// readCmdline reads /proc/PID/cmdline into the reader's buffer, by
// readBeside, and counts the read.
func (pr *ProcReader) readCmdline(pid uint32, keep bool) ([]byte, bool) {
	pr.cmdReads++
	return pr.readBeside(pid, "/cmdline", func(k *keptStat) *int { return &k.cmd }, keep)
}

// readBeside reads file of process pid through the descriptor slot
// selects in the files kept open for pid, opening it and keeping it
// there when keep is set and the limit allows (right after the stat file
// was read, so that both name the same process), else by opening it for
// this read alone.
func (pr *ProcReader) readBeside(pid uint32, file string, slot func(*keptStat) *int, keep bool) ([]byte, bool) {
	k, ok := pr.kept[pid]
	if !ok {
		return pr.read(pid, file)
	}
	fd := slot(&k)
	if *fd < 0 {
		if !keep || pr.nkept >= maxKept() {
			return pr.read(pid, file)
		}
		if *fd, ok = pr.open(pid, file); !ok {
			return nil, false
		}
		pr.nkept++
		pr.kept[pid] = k
	}
	n, err := preadAll(*fd, pr.buf)
	if err != nil {
		return nil, false
	}
	return pr.buf[:n], true
}

// ran returns how long, in nanoseconds, process pid's first thread has
// run (the first field of /proc/PID/schedstat), when threads, the
// process's threads as its stat last read, is 1: a process of one thread
// whose time has not grown has not run. ok is false for other processes,
// where the kernel has no schedstat (CONFIG_SCHED_INFO), and where it
// reads 0 (a kernel that keeps no such time prints "0 0 0"). The file is
// read by readBeside.
func (pr *ProcReader) ran(pid uint32, threads uint64, keep bool) (uint64, bool) {
	if threads != 1 || !pr.hasSchedstat() {
		return 0, false
	}
	b, ok := pr.readBeside(pid, "/schedstat", func(k *keptStat) *int { return &k.sched }, keep)
	if !ok {
		return 0, false
	}
	f, _, _ := bytes.Cut(b, []byte(" "))
	v, ok := atou(f)
	return v, ok && v > 0
}

// hasSchedstat reports whether the reader's /proc has schedstat files,
// looking once.
func (pr *ProcReader) hasSchedstat() bool {
	if pr.schedstat == 0 {
		pr.schedstat = -1
		var st unix.Stat_t
		if rawsys.Stat(pr.FS.Path("/proc/self/schedstat"), &st) == nil {
			pr.schedstat = 1
		}
	}
	return pr.schedstat > 0
}

// Cmdline returns p's command line, p being a process of one of the
// reader's listings: as read during the last listing, reading it again
// (the first time it is asked for during a listing) when it was read
// during an earlier one. A program may rewrite its command line in place
// (setproctitle(3), perl's $0) and keep its name: only a fresh read sees
// that. To rewrite it, the process must run: a process of one thread
// whose run time (/proc/PID/schedstat, in nanoseconds) has not grown
// since the last read keeps its command line without another (a read
// takes the kernel through the process's memory map and page tables,
// pages that a walk after a pause finds cold; schedstat is a line of the
// task its stat has just been read from). Only the process itself is
// taken to write its command line: another process writing the memory
// (a debugger through ptrace or /proc/PID/mem, a process sharing the
// memory without being one of its threads, clone(2) with CLONE_VM alone)
// is seen when the process next runs. A process the last listing did
// not find, a kernel thread and a process whose command line cannot be
// read (it has exited, or is a zombie) keep the command line read
// before. The slice returned is never modified.
func (pr *ProcReader) Cmdline(p *Process) []byte {
	k := procKey{p.PID, p.Start}
	info, ok := pr.known[k]
	if !ok || !pr.WithCmdline {
		return p.Cmdline
	}
	if info.cmdGen == pr.gen || info.kthread {
		return info.cmdline
	}
	if pr.buf == nil {
		pr.buf = make([]byte, 64<<10)
	}
	// A process of one thread that has not run since its command line
	// was read has not rewritten it (nor made a thread that could have).
	// One running now is read: the kernel adds a running task's time at
	// its next tick, which a CPU without ticks (nohz_full) may not have
	// for a second.
	ran, ok := pr.ran(p.PID, info.threads, false)
	if ok && info.ranOK && ran == info.ran && p.State != 'R' {
		info.cmdGen = pr.gen
		pr.known[k] = info
		return info.cmdline
	}
	info.ran, info.ranOK = ran, ok
	if b, ok := pr.readCmdline(p.PID, false); ok && len(b) > 0 {
		if b = bytes.TrimRight(b, "\x00"); !bytes.Equal(b, info.cmdline) {
			info.cmdline = slices.Clone(b)
		}
	}
	info.cmdGen = pr.gen
	pr.known[k] = info
	return info.cmdline
}

// closeGone closes the descriptors of processes not found by the last
// listing.
func (pr *ProcReader) closeGone() {
	for pid, k := range pr.kept {
		if k.gen != pr.gen {
			pr.closeKept(pid)
		}
	}
}

// preadAll reads a whole /proc file from its start into buf.
func preadAll(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := rawsys.Pread(fd, buf[n:], int64(n))
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
func (pr *ProcReader) open(pid uint32, file string) (int, bool) {
	pr.path = append(pr.path[:0], pr.FS.Path("/proc")...)
	pr.path = append(pr.path, '/')
	pr.path = strconv.AppendUint(pr.path, uint64(pid), 10)
	pr.path = append(pr.path, file...)
	fd, err := rawsys.Open(string(pr.path), 0)
	return fd, err == nil
}

// read reads /proc/PID/file into the reader's buffer.
func (pr *ProcReader) read(pid uint32, file string) ([]byte, bool) {
	fd, ok := pr.open(pid, file)
	if !ok {
		return nil, false
	}
	defer rawsys.Close(fd)
	n := 0
	for n < len(pr.buf) {
		m, err := rawsys.Read(fd, pr.buf[n:])
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
