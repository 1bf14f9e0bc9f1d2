package procfs

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
)

// DirReader lists directories of /proc with getdents64(2) into a buffer
// it reuses, without the allocations of os.File.Readdirnames (an
// os.File, its poller registration attempt, a string per name).
type DirReader struct {
	buf []byte
}

// Each calls f with the name of every entry of the directory open at fd
// except "." and "..". The name is NUL-terminated in place (name[len]
// is 0), so it can be passed to a system call as is; it is valid until f
// returns. Each stops early when f returns false.
func (d *DirReader) Each(fd int, f func(name []byte) bool) error {
	return d.Entries(fd, func(name []byte, _ uint64, _ byte) bool { return f(name) })
}

// Entries is Each with each entry's inode number and type (DT_DIR,
// DT_LNK, DT_REG..., DT_UNKNOWN where the file system does not tell).
func (d *DirReader) Entries(fd int, f func(name []byte, ino uint64, typ byte) bool) error {
	if d.buf == nil {
		d.buf = make([]byte, 16<<10)
	}
	for {
		n, err := rawsys.Getdents(fd, d.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		for b := d.buf[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, name (NUL-terminated).
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen < 19 || reclen > len(b) {
				break
			}
			ino := *(*uint64)(unsafe.Pointer(&b[0]))
			typ := b[18]
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			b = b[reclen:]
			if len(name) == 0 || name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.') {
				continue
			}
			if !f(name, ino, typ) {
				return nil
			}
		}
	}
}

// PIDName reports whether a /proc entry is a process: all decimal
// digits. It returns the PID.
func PIDName(name []byte) (uint32, bool) {
	if len(name) == 0 || len(name) > 10 {
		return 0, false
	}
	var v uint64
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return uint32(v), v <= 1<<32-1
}
