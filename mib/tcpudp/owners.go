package tcpudp

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// owners keeps, from one reading of a namespace's sockets to the next,
// which process holds each socket, so that the processes' open files are
// read only for sockets it does not know yet.
//
// At each reading of the sockets (resolve):
//
//   - A socket whose process is known and still runs keeps it. Each
//     process is watched through a pidfd (pidfd_open(2)), which polls
//     readable once the process has exited, so one poll(2) checks them all
//     and a new process given the same PID is not taken for it. Every
//     OwnerTTL the link /proc/PID/fd/N of each known socket is read again:
//     a socket the process has closed or handed on (and that still lives
//     elsewhere) is looked for anew.
//   - The sockets left are looked for by one scan that stops as soon as
//     all are found: first in the processes that hold the namespace's
//     other sockets or held one in the last OwnerTTL (servers accepting
//     connections, clients connecting again), the one a scan last found a
//     socket in first, then ascending PIDs; then in the others in
//     descending PID order, the processes started last first (PIDs rise
//     until they wrap at pid_max).
//   - Sockets that a scan of every process did not find (kernel sockets
//     such as a VXLAN device's, sockets in flight in a unix socket,
//     processes of another PID namespace) read 0 and are not looked for
//     again until OwnerTTL has passed, twice as long after each further
//     miss, up to 12 OwnerTTLs (a minute by default, as long as Net-SNMP's
//     snmpd keeps these tables).
//   - Scans cost on average no more than one scan of every process per
//     OwnerTTL, with bursts of two: a new scan starts only while the
//     processes visited in the last OwnerTTL or so leave room for one
//     visit of every process. Sockets not found meanwhile read 0 and are
//     looked for at the next reading that may scan.
//
// With several holders (a socket inherited across fork(2) or passed in
// a unix socket), a socket's process is the first holder the scan that
// found it visits: among the processes that held sockets of the
// namespace in the last OwnerTTL, the one a scan last found a socket in,
// else the lowest PID; else the highest PID of all. It stays the socket's process as long as that process holds
// it. (A scan of every process every OwnerTTL used to answer the lowest
// PID of all; finding it would mean reading every process below the
// first holder found.)
type owners struct {
	fs  procfs.FS
	ttl time.Duration

	mu      sync.Mutex
	known   map[uint32]holder  // socket inode -> its process
	procs   map[uint32]watched // the holders of known sockets, and of sockets in the last OwnerTTL
	missing map[uint32]miss    // sockets scans of every process did not find

	budget   float64 // process visits scans may still make
	budgetAt time.Time
	nprocs   int // processes at the last listing of /proc

	stats ownerStats

	dr   procfs.DirReader
	link []byte
	path []byte
	poll []unix.PollFd
}

// watched is a process that holds or held sockets of the namespace.
type watched struct {
	fd    int       // pidfd, -1 if none
	held  time.Time // when it last held one of the sockets
	found time.Time // when a scan last found a socket in it
}

// miss is a socket that a scan of every process did not find.
type miss struct {
	at   time.Time     // the last such scan
	wait time.Duration // until it is looked for again
}

// maxMissWait is how long, in OwnerTTLs, a socket that scans of every
// process keep missing waits at most before it is looked for again.
const maxMissWait = 12

type holder struct {
	pid, fd uint32
	checked time.Time // when the process was last seen holding the socket
}

// ownerStats counts the work of an owners.
type ownerStats struct {
	scans    int // scans of processes' open files
	complete int // scans that visited every process and left sockets not found
	visits   int // processes whose open files were read
}

func newOwners(fs procfs.FS, ttl time.Duration) *owners {
	return &owners{
		fs:      fs,
		ttl:     ttl,
		known:   map[uint32]holder{},
		procs:   map[uint32]watched{},
		missing: map[uint32]miss{},
		link:    make([]byte, 64),
	}
}

// close releases the pidfds.
func (o *owners) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for pid, w := range o.procs {
		if w.fd >= 0 {
			rawsys.Close(w.fd)
		}
		delete(o.procs, pid)
	}
	clear(o.known)
}

func (o *owners) counts() ownerStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stats
}

// resolve returns the process holding each of inodes (the sockets of a
// reading; 0 entries are ignored) that it knows or finds, at time now.
func (o *owners) resolve(now time.Time, inodes []uint32) map[uint32]uint32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reap()
	want := make(map[uint32]struct{}, len(inodes))
	for _, ino := range inodes {
		if ino != 0 {
			want[ino] = struct{}{}
		}
	}
	for ino, h := range o.known {
		_, ok := want[ino]
		_, live := o.procs[h.pid]
		if !ok || !live {
			delete(o.known, ino)
			continue
		}
		if o.due(now, h.checked) {
			if !o.holds(h, ino) {
				delete(o.known, ino)
				continue
			}
			h.checked = now
			o.known[ino] = h
		}
	}
	for ino := range o.missing {
		if _, ok := want[ino]; !ok {
			delete(o.missing, ino)
		}
	}
	unknown := map[uint32]struct{}{}
	for ino := range want {
		if _, ok := o.known[ino]; ok {
			continue
		}
		if m, ok := o.missing[ino]; ok && now.Sub(m.at) < m.wait && !now.Before(m.at) {
			continue
		}
		unknown[ino] = struct{}{}
	}
	if len(unknown) > 0 && o.afford(now) {
		o.scan(now, unknown)
	}
	// Processes that have held none of the sockets for OwnerTTL (clients
	// that closed their connection and opened none since) are no longer
	// watched.
	out := make(map[uint32]uint32, len(o.known))
	for ino, h := range o.known {
		out[ino] = h.pid
		w := o.procs[h.pid]
		w.held = now
		o.procs[h.pid] = w
	}
	for pid, w := range o.procs {
		if o.due(now, w.held) {
			if w.fd >= 0 {
				rawsys.Close(w.fd)
			}
			delete(o.procs, pid)
		}
	}
	return out
}

// due reports whether OwnerTTL has passed since at (or the clock went
// back).
func (o *owners) due(now, at time.Time) bool {
	return now.Sub(at) >= o.ttl || now.Before(at)
}

// reap forgets the processes whose pidfd says they have exited, with
// their sockets.
func (o *owners) reap() {
	o.poll = o.poll[:0]
	for _, w := range o.procs {
		if w.fd >= 0 {
			o.poll = append(o.poll, unix.PollFd{Fd: int32(w.fd), Events: unix.POLLIN})
		}
	}
	if len(o.poll) == 0 {
		return
	}
	n, err := rawsys.PollNow(o.poll)
	if err != nil || n == 0 {
		return
	}
	exited := map[int]bool{}
	for _, p := range o.poll {
		if p.Revents != 0 {
			exited[int(p.Fd)] = true
		}
	}
	for pid, w := range o.procs {
		if w.fd >= 0 && exited[w.fd] {
			rawsys.Close(w.fd)
			delete(o.procs, pid)
		}
	}
}

// holds reports whether process h.pid still has socket ino open as file
// descriptor h.fd. The link names the socket only while that process
// holds it, whichever process has the PID, so a PID reused by another
// process holding the same socket as the same descriptor reads true,
// rightly.
func (o *owners) holds(h holder, ino uint32) bool {
	o.path = append(o.path[:0], o.fs.Path("/proc")...)
	o.path = append(o.path, '/')
	o.path = strconv.AppendUint(o.path, uint64(h.pid), 10)
	o.path = append(o.path, "/fd/"...)
	o.path = strconv.AppendUint(o.path, uint64(h.fd), 10)
	o.path = append(o.path, 0)
	n, err := rawsys.Readlinkat(unix.AT_FDCWD, &o.path[0], o.link)
	if err != nil {
		return false
	}
	got, ok := socketInode(o.link[:n])
	return ok && got == ino
}

// afford reports whether a scan may start at now, refilling the budget
// of process visits: one visit of every process per OwnerTTL, up to two.
func (o *owners) afford(now time.Time) bool {
	if o.nprocs == 0 {
		return true // the first scan, which counts the processes
	}
	if now.After(o.budgetAt) {
		o.budget += float64(o.nprocs) * float64(now.Sub(o.budgetAt)) / float64(o.ttl)
	}
	o.budgetAt = now
	o.budget = min(o.budget, float64(2*o.nprocs))
	return o.budget >= float64(o.nprocs)
}

// scan looks for the sockets in unknown among the processes' open files,
// and stops when it has found them all.
func (o *owners) scan(now time.Time, unknown map[uint32]struct{}) {
	o.stats.scans++
	proc, err := rawsys.Open(o.fs.Path("/proc"), unix.O_DIRECTORY)
	if err != nil {
		return
	}
	defer rawsys.Close(proc)
	visits := 0
	found := map[uint32]holder{}
	visit := func(pid uint32) {
		visits++
		o.visit(proc, pid, func(ino, fd uint32) {
			if _, ok := unknown[ino]; ok {
				delete(unknown, ino)
				found[ino] = holder{pid: pid, fd: fd, checked: now}
			}
		}, func(dfd int) {
			o.watch(pid, dfd, found)
		})
	}
	// The process a socket was last found in first: a client connecting
	// again, a server accepting; then ascending PIDs.
	prior := make([]uint32, 0, len(o.procs))
	for pid := range o.procs {
		prior = append(prior, pid)
	}
	slices.SortFunc(prior, func(a, b uint32) int {
		if c := o.procs[b].found.Compare(o.procs[a].found); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, pid := range prior {
		if len(unknown) == 0 {
			break
		}
		visit(pid)
	}
	if len(unknown) > 0 {
		pids := listPIDs(proc, &o.dr)
		if o.nprocs == 0 {
			o.budget, o.budgetAt = float64(2*len(pids)), now
		}
		o.nprocs = max(len(pids), 1)
		for _, pid := range slices.Backward(pids) {
			if len(unknown) == 0 {
				break
			}
			if _, ok := o.procs[pid]; !ok {
				visit(pid)
			}
		}
		if len(unknown) > 0 {
			o.stats.complete++
			for ino := range unknown {
				m, ok := o.missing[ino]
				m.wait = min(2*m.wait, maxMissWait*o.ttl)
				if !ok {
					m.wait = o.ttl
				}
				m.at = now
				o.missing[ino] = m
			}
		}
	}
	o.stats.visits += visits
	o.budget -= float64(visits)
	for ino, h := range found {
		delete(o.missing, ino)
		if w, ok := o.procs[h.pid]; ok {
			o.known[ino] = h
			w.found = now
			o.procs[h.pid] = w
		}
	}
}

// watch starts watching process pid, whose fd directory is open at dfd,
// if it holds one of the sockets found and is not watched yet.
func (o *owners) watch(pid uint32, dfd int, found map[uint32]holder) {
	if _, ok := o.procs[pid]; ok {
		return
	}
	var h holder
	for _, f := range found {
		if f.pid == pid {
			h = f
			break
		}
	}
	if h.pid == 0 {
		return
	}
	fd := -1
	if o.fs.Path("/proc") == "/proc" {
		if pfd, err := rawsys.PidfdOpen(int(pid)); err == nil {
			fd = pfd
		}
	}
	// The process read through dfd still holds the socket after
	// pidfd_open, so the pidfd names it and not a process given its PID
	// since.
	name := strconv.AppendUint(o.path[:0], uint64(h.fd), 10)
	name = append(name, 0)
	n, err := rawsys.Readlinkat(dfd, &name[0], o.link)
	if ino, ok := socketInode(o.link[:max(n, 0)]); err != nil || !ok || found[ino].pid != pid {
		if fd >= 0 {
			rawsys.Close(fd)
		}
		return
	}
	o.procs[pid] = watched{fd: fd, held: h.checked}
}

// visit calls f with the inode and descriptor of each socket process pid
// has open, then done with the process's fd directory, still open.
func (o *owners) visit(proc int, pid uint32, f func(ino, fd uint32), done func(dfd int)) {
	o.path = strconv.AppendUint(o.path[:0], uint64(pid), 10)
	o.path = append(o.path, "/fd\x00"...)
	dfd, err := rawsys.Openat(proc, &o.path[0], unix.O_DIRECTORY)
	if err != nil {
		return // exited, or not ours to read
	}
	defer rawsys.Close(dfd)
	eachSocket(dfd, &o.dr, o.link, f)
	if done != nil {
		done(dfd)
	}
}

// eachSocket calls f with the inode and descriptor of each socket in the
// fd directory open at dfd, reading the links into link, and returns how
// many links it tried to read.
//
// The kernel lets a process read another's descriptor links only if it
// may trace it (ptrace_may_access: the same user and groups, a process
// that may dump core and holds no capability the reader lacks, or
// CAP_SYS_PTRACE; and what a security module allows), an answer about the
// process, the same for every descriptor: once one is refused, eachSocket
// stops. Root without CAP_SYS_PTRACE can list the fd directories of root's
// daemons but read none of their links (docs/mibs.md).
func eachSocket(dfd int, dr *procfs.DirReader, link []byte, f func(ino, fd uint32)) (tried int) {
	dr.Each(dfd, func(name []byte) bool {
		// name is NUL-terminated in the directory buffer.
		tried++
		n, err := rawsys.Readlinkat(dfd, &name[0], link)
		if err != nil {
			return err != unix.EACCES && err != unix.EPERM
		}
		ino, ok := socketInode(link[:n])
		if !ok {
			return true
		}
		fd, ok := procfs.PIDName(name)
		if ok {
			f(ino, fd)
		}
		return true
	})
	return tried
}

// socketInode returns the inode of a link "socket:[INODE]".
func socketInode(link []byte) (uint32, bool) {
	n := len(link)
	if n < 10 || string(link[:8]) != "socket:[" || link[n-1] != ']' {
		return 0, false
	}
	ino, err := strconv.ParseUint(string(link[8:n-1]), 10, 32)
	return uint32(ino), err == nil
}

// listPIDs returns the processes in /proc (open at proc), ascending.
func listPIDs(proc int, dr *procfs.DirReader) []uint32 {
	var pids []uint32
	dr.Each(proc, func(name []byte) bool {
		if pid, ok := procfs.PIDName(name); ok {
			pids = append(pids, pid)
		}
		return true
	})
	slices.Sort(pids)
	return pids
}

// SocketOwners maps socket inodes to the PID of a process holding them,
// from the links under /proc/PID/fd ("socket:[INODE]"): a scan of every
// process. With several holders, the lowest PID wins.
//
// This is a system call per open file of every process: the directories
// are read with getdents64(2) into one buffer and each link with
// readlinkat(2) relative to its directory, naming the entry in place, so
// that the listing allocates nothing per file.
func SocketOwners(fs procfs.FS) map[uint32]uint32 {
	out := map[uint32]uint32{}
	proc, err := rawsys.Open(fs.Path("/proc"), unix.O_DIRECTORY)
	if err != nil {
		return out
	}
	defer rawsys.Close(proc)
	var dr procfs.DirReader
	var path []byte
	link := make([]byte, 64)
	for _, pid := range listPIDs(proc, &dr) {
		path = strconv.AppendUint(path[:0], uint64(pid), 10)
		path = append(path, "/fd\x00"...)
		fd, err := rawsys.Openat(proc, &path[0], unix.O_DIRECTORY)
		if err != nil {
			continue // exited, or not ours to read
		}
		eachSocket(fd, &dr, link, func(ino, _ uint32) {
			if _, ok := out[ino]; !ok { // PIDs ascend: the first is the lowest
				out[ino] = pid
			}
		})
		rawsys.Close(fd)
	}
	return out
}
