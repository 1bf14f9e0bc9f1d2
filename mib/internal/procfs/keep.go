package procfs

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
)

// File is a /proc or /sys file kept open between readings and read again
// from its start with pread(2): the kernel makes a /proc or sysfs file's
// text afresh for a read at offset 0, so each Read sees the current
// value, at a third to a tenth of the cost of opening the file again
// (most of which is the path's lookup). Files whose meaning depends on
// the reading thread (/proc/thread-self, /proc/net) must not be kept.
//
// A File may be used from several goroutines, one Read at a time; the
// buffer passed to Read is the caller's.
type File struct {
	mu   sync.Mutex
	path string
	fd   int // -1: not open
	// single: the kernel makes the file in one piece (a sysfs attribute,
	// a /proc file of one record such as meminfo or uptime), so a read
	// short of the buffer's end is the file's end. Files of many records
	// (cpuinfo, mounts) come a page or so per read, and are read until a
	// read returns nothing.
	single bool
}

// NewFile returns name below fs's root, opened at its first Read, for
// a file of many records (read until a read returns nothing).
func (fs FS) NewFile(name string) *File {
	return &File{path: fs.Path(name), fd: -1}
}

// NewAttr returns name below fs's root, opened at its first Read, for a
// file the kernel makes in one piece: a sysfs attribute, or a /proc file
// of one record (/proc/uptime, /proc/meminfo). One pread reads it.
func (fs FS) NewAttr(name string) *File {
	return &File{path: fs.Path(name), fd: -1, single: true}
}

// Read reads the whole file into buf (grown as needed) and returns it.
// When the file was removed since it was opened (a sysfs attribute of a
// device that went away: ENODEV), it is opened again by its path, which
// may now name a new device's file.
func (f *File) Read(buf *[]byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *buf == nil {
		*buf = make([]byte, 4096)
	}
	for try := 0; ; try++ {
		if f.fd < 0 {
			fd, err := rawsys.Open(f.path, 0)
			for err == unix.EINTR {
				fd, err = rawsys.Open(f.path, 0)
			}
			if err != nil {
				return nil, &os.PathError{Op: "open", Path: f.path, Err: err}
			}
			f.fd = fd
		}
		n, err := preadFull(f.fd, buf, f.single)
		if err == nil {
			return (*buf)[:n], nil
		}
		f.close()
		if try > 0 {
			return nil, &os.PathError{Op: "read", Path: f.path, Err: err}
		}
	}
}

// Close closes the file; the next Read opens it again.
func (f *File) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.close()
}

func (f *File) close() {
	if f.fd >= 0 {
		rawsys.Close(f.fd)
		f.fd = -1
	}
}

// preadFull reads a whole file from offset 0 into buf, growing it as
// needed, until a read returns nothing or, for a file made in one piece
// (single), comes back short of the buffer's end.
func preadFull(fd int, buf *[]byte, single bool) (int, error) {
	n := 0
	for {
		b := *buf
		if n == len(b) {
			b = append(b, make([]byte, len(b))...)
			*buf = b
		}
		m, err := rawsys.Pread(fd, b[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if m <= 0 {
			return n, nil
		}
		n += m
		if single && n < len(b) {
			return n, nil
		}
	}
}

// Changed reports whether the kernel has flagged the open file as
// changed since the last call (or since it was opened): poll(2) reports
// POLLPRI or POLLERR on /proc/PID/mounts after a mount, an unmount or a
// remount in its mount namespace. It reports true when the file is not
// open or cannot be polled.
func (f *File) Changed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd < 0 {
		return true
	}
	fds := []unix.PollFd{{Fd: int32(f.fd), Events: unix.POLLPRI}}
	n, err := rawsys.PollNow(fds)
	for err == unix.EINTR {
		n, err = rawsys.PollNow(fds)
	}
	return err != nil || n != 0 && fds[0].Revents&(unix.POLLPRI|unix.POLLERR|unix.POLLNVAL) != 0
}

// InProc reports whether the open file is one of /proc's.
func (f *File) InProc() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	var st unix.Statfs_t
	return f.fd >= 0 && rawsys.Fstatfs(f.fd, &st) == nil && st.Type == unix.PROC_SUPER_MAGIC
}
