// Package procfs reads the Linux /proc and /sys files that the host MIBs
// (HOST-RESOURCES-MIB, UCD-SNMP-MIB) serve from, and shares one reading
// of each among all requests for a short time.
//
// Every parser takes the file's bytes and is lenient line by line: a
// malformed or truncated line costs that line (a row, a field), never the
// whole file; each parser reports how many lines it dropped so callers can
// count them.
package procfs

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/mib"
)

// FS reads files below a root: "/" for the running system, a directory
// of recorded samples in tests.
type FS struct {
	Root string
}

// Host is the running system's file system.
var Host = FS{Root: "/"}

// ReadFile reads name (an absolute path such as "/proc/meminfo") below
// the root.
//
// It reads with open(2), read(2) and close(2) into a pooled buffer and
// returns a copy of what it read: os.ReadFile would add an fstat(2), a
// failed registration with the network poller and the fcntl(2) calls
// around it, and a buffer grown from 512 bytes, for files whose size
// /proc reports as 0.
func (fs FS) ReadFile(name string) ([]byte, error) {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	b, err := fs.ReadInto(name, bp)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

// ReadInto is ReadFile into *buf, grown as needed, without the copy:
// the result is valid until *buf is used again.
func (fs FS) ReadInto(name string, bp *[]byte) ([]byte, error) {
	path := fs.Path(name)
	fd, err := rawsys.Open(path, 0)
	for err == unix.EINTR {
		fd, err = rawsys.Open(path, 0)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer rawsys.Close(fd)
	buf := *bp
	if len(buf) == 0 {
		buf = make([]byte, 4096)
		*bp = buf
	}
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
			*bp = buf
		}
		m, err := rawsys.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m <= 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}

// readBufs are ReadFile's buffers.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// Path returns name below the root.
func (fs FS) Path(name string) string {
	if fs.Root == "" || fs.Root == "/" {
		return name
	}
	return filepath.Join(fs.Root, name)
}

// Cache holds one value of T, loaded at most once per TTL and at most once
// per request. Concurrent requests wait for one load.
type Cache[T any] struct {
	TTL  time.Duration
	Load func(now time.Time) T

	mu sync.Mutex
	at time.Time
	ok bool
	v  T
}

// Get returns the request's value, loading a fresh one when the shared
// one is older than the TTL.
func (c *Cache[T]) Get(r *mib.Request) T {
	if r == nil {
		return c.Current(time.Now())
	}
	return r.Memo(c, func() any { return c.Current(r.Now) }).(T)
}

// Current returns the shared value, loading it when older than the TTL.
func (c *Cache[T]) Current(now time.Time) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	ttl := c.TTL
	if ttl <= 0 {
		ttl = time.Second
	}
	if c.ok && now.Sub(c.at) < ttl && !now.Before(c.at) {
		return c.v
	}
	c.v, c.at, c.ok = c.Load(now), now, true
	return c.v
}

// Invalidate makes the next Get load afresh.
func (c *Cache[T]) Invalidate() {
	c.mu.Lock()
	c.ok = false
	c.mu.Unlock()
}
