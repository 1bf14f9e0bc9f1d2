//go:build 386 || arm || mips || mipsle

package rawsys

import "golang.org/x/sys/unix"

// On 32-bit platforms a 64-bit offset and the 64-bit stat and statfs
// structures take other system calls, whose arguments each platform's
// ABI lays out in its own way (split into two registers, aligned to an
// even pair). These calls are made through golang.org/x/sys/unix, which
// knows each layout, at the price rawsys exists to avoid: the runtime
// is told, and wakes its monitor once per burst of requests.

// Pread reads from fd at off, retrying when interrupted.
func Pread(fd int, p []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(fd, p, off)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// Fstatfs is fstatfs(2) of fd, for files of the kernel's own file systems
// (proc, sysfs), which answer without waiting.
func Fstatfs(fd int, st *unix.Statfs_t) error {
	return unix.Fstatfs(fd, st)
}

// Stat is stat(2) of path, for files of the kernel's own file systems.
func Stat(path string, st *unix.Stat_t) error {
	return unix.Stat(path, st)
}

// Statfs is statfs(2) of path. Only for file systems that answer from
// the kernel's memory (see LocalFS): a network or FUSE file system can
// keep statfs waiting indefinitely.
func Statfs(path string, st *unix.Statfs_t) error {
	return unix.Statfs(path, st)
}

// Seek sets fd's offset to off from its start.
func Seek(fd int, off int64) error {
	_, err := unix.Seek(fd, off, 0)
	return err
}
