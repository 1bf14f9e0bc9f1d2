// Package rawsys makes the system calls of tsnmpd's request path without
// telling the Go runtime, for calls that do bounded work in the kernel and
// never wait: a read of a /proc or /sys file, a netlink dump, a clock
// read, a receive or send that may not block, or one bounded by the
// socket's short SO_RCVTIMEO (RecvBlock, Recvmmsg with MSG_WAITFORONE).
//
// Why: a system call made through the syscall package enters the
// runtime's system-call state, and when the runtime's monitor thread
// (sysmon) is asleep, as it is while the agent waits for requests, that
// wakes it; it then polls every 20 µs for a millisecond before backing
// off. On a small host that costs more CPU than a short request (a
// GetBulk of sysUpTime used 1.2 ms, 0.7 of them the monitor's), and the
// period is fixed in the runtime (golang/go#18236). A call made here
// holds its P like ordinary Go code: it must not wait for anything
// outside the kernel (no network file system, no FUSE, no pipe), or the
// P, and a stop of the world for the garbage collector, would wait with
// it. Calls that can wait keep using the syscall package.
//
// On 32-bit platforms the calls that take a 64-bit offset or fill a
// 64-bit stat or statfs structure go through golang.org/x/sys/unix
// (rawsys32_linux.go).
package rawsys

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// atFDCWD is AT_FDCWD as a system call argument.
var atFDCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()

// ptr points at b's first byte, nil when b is empty.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// errno returns nil for 0, else e.
func errno(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// Openat opens path (NUL-terminated) relative to dirfd (unix.AT_FDCWD
// for the working directory) with flags (O_CLOEXEC is added).
func Openat(dirfd int, path *byte, flags int) (int, error) {
	for {
		fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(path)), uintptr(flags|unix.O_CLOEXEC), 0, 0, 0)
		if e != unix.EINTR {
			if e != 0 {
				return -1, e
			}
			return int(fd), nil
		}
	}
}

// Readlinkat reads the target of the link name (NUL-terminated) relative
// to dir into buf.
func Readlinkat(dir int, name *byte, buf []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_READLINKAT, uintptr(dir), uintptr(unsafe.Pointer(name)), uintptr(ptr(buf)), uintptr(len(buf)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Close closes fd.
func Close(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errno(e)
}

// ClockGettime reads clock (unix.CLOCK_MONOTONIC, CLOCK_BOOTTIME) into
// ts. unix.ClockGettime is a system call the runtime sees (the vDSO
// serves only the runtime's own clock reads). Each platform's
// unix.Timespec is the one clock_gettime(2) fills there.
func ClockGettime(clock int, ts *unix.Timespec) error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(ts)), 0)
	return errno(e)
}

// Getdents reads directory entries of fd into buf.
func Getdents(fd int, buf []byte) (int, error) {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_GETDENTS64, uintptr(fd), uintptr(ptr(buf)), uintptr(len(buf)))
		if e != unix.EINTR {
			return int(n), errno(e)
		}
	}
}

// Socket opens a socket (SOCK_CLOEXEC is added).
func Socket(domain, typ, proto int) (int, error) {
	fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(domain), uintptr(typ|unix.SOCK_CLOEXEC), uintptr(proto))
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// Send sends b on fd, connected or netlink, without waiting
// (MSG_DONTWAIT is added): EAGAIN when the socket's buffer is full.
func Send(fd int, b []byte, flags int) error {
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(ptr(b)), uintptr(len(b)), uintptr(flags|unix.MSG_DONTWAIT), 0, 0)
		if e != unix.EINTR {
			return errno(e)
		}
	}
}

// Recv receives into b from fd without waiting (MSG_DONTWAIT is added):
// EAGAIN when nothing is queued.
func Recv(fd int, b []byte, flags int) (int, error) {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(ptr(b)), uintptr(len(b)), uintptr(flags|unix.MSG_DONTWAIT), 0, 0)
		if e != unix.EINTR {
			return int(n), errno(e)
		}
	}
}

// RecvBlock receives into b from fd, a blocking socket, waiting as long
// as the socket's SO_RCVTIMEO allows (EAGAIN when nothing came), without
// telling the runtime: the calling goroutine keeps its P while it waits,
// so the socket's timeout must be short. It returns EINTR when a signal
// (the runtime's preemption) ends the wait.
func RecvBlock(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(ptr(b)), uintptr(len(b)), 0, 0, 0)
	return int(n), errno(e)
}

// Recvmmsg is recvmmsg(2) of up to n messages into msgs. It returns
// EINTR when interrupted (the caller decides whether to go on).
func Recvmmsg(fd int, msgs *unix.Mmsghdr, n, flags int) (int, unix.Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(msgs)), uintptr(n), uintptr(flags), 0, 0)
	return int(r), e
}

// Sendmmsg is sendmmsg(2) of n messages from msgs, without waiting
// (MSG_DONTWAIT is added).
func Sendmmsg(fd int, msgs *unix.Mmsghdr, n int) (int, unix.Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(msgs)), uintptr(n), unix.MSG_DONTWAIT, 0, 0)
	return int(r), e
}

// SetsockoptTimeval is setsockopt(2) of a struct timeval option (SO_RCVTIMEO,
// SO_SNDTIMEO).
func SetsockoptTimeval(fd, level, opt int, tv *unix.Timeval) error {
	_, _, e := unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(tv)), unsafe.Sizeof(*tv), 0)
	return errno(e)
}

// EpollCtl is epoll_ctl(2) of fd with events in the epoll set ep.
func EpollCtl(ep, op, fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(ep), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(&ev)), 0, 0)
	return errno(e)
}

// Open opens path read-only (O_CLOEXEC is added to flags).
func Open(path string, flags int) (int, error) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	return Openat(unix.AT_FDCWD, p, flags|unix.O_RDONLY)
}

// Read reads from fd, retrying when interrupted.
func Read(fd int, p []byte) (int, error) {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(ptr(p)), uintptr(len(p)))
		if e != unix.EINTR {
			return int(n), errno(e)
		}
	}
}

// PollNow is poll(2) of fds without waiting.
func PollNow(fds []unix.PollFd) (int, error) {
	var ts unix.Timespec
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if e != unix.EINTR {
			return int(n), errno(e)
		}
	}
}

// RecvWait receives into b from fd, a socket whose answer is normally
// queued already (a netlink dump's), without telling the runtime; when
// nothing is queued it waits for up to timeout in poll(2) made through
// the syscall package, and returns EAGAIN if nothing came.
func RecvWait(fd int, b []byte, timeout time.Duration) (int, error) {
	for {
		n, err := Recv(fd, b, 0)
		if err != unix.EAGAIN {
			return n, err
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		k, err := unix.Poll(fds, int(timeout/time.Millisecond))
		if err != nil && err != unix.EINTR {
			return 0, err
		}
		if k == 0 && err == nil {
			return 0, unix.EAGAIN
		}
	}
}

// Ioctl is ioctl(2) of fd with req and a pointer argument, for requests a
// driver answers without waiting for long (SIOCETHTOOL's settings).
func Ioctl(fd int, req uint, arg unsafe.Pointer) unix.Errno {
	_, _, e := unix.RawSyscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	return e
}

// LocalFS reports whether statfs(2) of a file system of the type named as
// in /proc/self/mounts answers from the kernel's memory without waiting:
// the kernel's own file systems, ext2 to ext4 and XFS, whose free-space
// counters are kept in memory, and read-only images. Network and FUSE
// file systems ask a server or a process, FAT may read its whole
// allocation table on the first call, and btrfs may wait for a
// transaction: they are not listed.
func LocalFS(typ string) bool {
	switch typ {
	case "tmpfs", "devtmpfs", "ramfs", "proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue",
		"hugetlbfs", "debugfs", "tracefs", "securityfs", "pstore", "bpf", "configfs",
		"ext2", "ext3", "ext4", "xfs", "squashfs", "iso9660":
		return true
	}
	return false
}

// PidfdOpen is pidfd_open(2) of pid.
func PidfdOpen(pid int) (int, error) {
	fd, _, e := unix.RawSyscall(unix.SYS_PIDFD_OPEN, uintptr(pid), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// Kill is kill(2).
func Kill(pid int, sig unix.Signal) error {
	_, _, e := unix.RawSyscall(unix.SYS_KILL, uintptr(pid), uintptr(sig), 0)
	return errno(e)
}

// LocalMagic is LocalFS by statfs(2)'s f_type.
func LocalMagic(t int64) bool {
	switch t {
	case unix.TMPFS_MAGIC, unix.RAMFS_MAGIC, unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC,
		unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.SQUASHFS_MAGIC, unix.ISOFS_SUPER_MAGIC:
		return true
	}
	return false
}
