//go:build !(386 || arm || mips || mipsle)

package rawsys

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Pread reads from fd at off, retrying when interrupted.
func Pread(fd int, p []byte, off int64) (int, error) {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(ptr(p)), uintptr(len(p)), uintptr(off), 0, 0)
		if e != unix.EINTR {
			return int(n), errno(e)
		}
	}
}

// Fstatfs is fstatfs(2) of fd, for files of the kernel's own file systems
// (proc, sysfs), which answer without waiting.
func Fstatfs(fd int, st *unix.Statfs_t) error {
	_, _, e := unix.RawSyscall(unix.SYS_FSTATFS, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	return errno(e)
}

// Stat is stat(2) of path, for files of the kernel's own file systems.
func Stat(path string, st *unix.Stat_t) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_NEWFSTATAT, atFDCWD, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), 0, 0, 0)
	return errno(e)
}

// Statfs is statfs(2) of path. Only for file systems that answer from
// the kernel's memory (see LocalFS): a network or FUSE file system can
// keep statfs waiting indefinitely.
func Statfs(path string, st *unix.Statfs_t) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall(unix.SYS_STATFS, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), 0)
	return errno(e)
}

// Seek sets fd's offset to off from its start.
func Seek(fd int, off int64) error {
	_, _, e := unix.RawSyscall(unix.SYS_LSEEK, uintptr(fd), uintptr(off), 0)
	return errno(e)
}
