package procfs

import (
	"cmp"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/internal/rowsort"
)

// hrFSTypes (HOST-RESOURCES-TYPES) used for file systems.
const (
	FSOther    = 1
	FSSys5     = 4
	FSBerkeley = 3
	FSFat      = 5
	FSHFS      = 7
	FSMFS      = 8
	FSNTFS     = 9
	FSISO9660  = 12
	FSRockRdg  = 13
	FSNFS      = 14
	FSNetware  = 15
	FSAFS      = 16
	FSFAT32    = 22
	FSExt2     = 23
)

// otherFS are file system types served with hrFSOther: disk and
// memory-backed file systems without an hrFSTypes value of their own.
var otherFS = map[string]bool{
	"acfs": true, "btrfs": true, "cvfs": true, "f2fs": true, "fuse.glusterfs": true,
	"gfs": true, "gfs2": true, "glusterfs": true, "jfs": true, "jffs2": true,
	"lofs": true, "nsspool": true, "nssvol": true, "nvmfs": true, "ocfs2": true,
	"overlay": true, "reiserfs": true, "simfs": true, "tmpfs": true, "ubifs": true,
	"virtiofs": true, "vxfs": true, "xfs": true, "zfs": true, "exfat": true,
}

// FSType returns the hrFSTypes value of a Linux file system type, and
// false for the kinds hosts' storage tables leave out (proc, sysfs,
// devtmpfs, cgroup and other virtual file systems, autofs).
func FSType(typ string) (uint32, bool) {
	switch typ {
	case "ext2", "ext3", "ext4", "ext2fs", "ext3fs", "ext4fs":
		return FSExt2, true
	case "ffs":
		return FSBerkeley, true
	case "ufs", "sysv":
		return FSSys5, true
	case "msdos", "pc":
		return FSFat, true
	case "fat32", "vfat":
		return FSFAT32, true
	case "hfs":
		return FSHFS, true
	case "mfs":
		return FSMFS, true
	case "ntfs", "ntfs3":
		return FSNTFS, true
	case "iso9660", "cd9660", "cdfs":
		return FSISO9660, true
	case "hsfs":
		return FSRockRdg, true
	case "nfs", "nfs3", "nfs4", "cifs", "smbfs", "smb3", "mvfs":
		return FSNFS, true
	case "ncpfs":
		return FSNetware, true
	case "afs":
		return FSAFS, true
	}
	if otherFS[typ] {
		return FSOther, true
	}
	return 0, false
}

// FileSystem is one mounted file system with its usage.
type FileSystem struct {
	// Index is the file system's hrFSIndex: the paths Mounts.Claim names
	// are numbered first, then mount points in the order the agent first
	// saw them in /proc/mounts, and keep their number while the agent
	// runs, unless more than KeepGone others were unmounted after them (a
	// number is never given twice).
	Index    int
	Path     string
	Device   string
	Type     string
	HrType   uint32
	Remote   bool
	ReadOnly bool

	StatOK       bool
	BlockSize    uint64 // f_bsize
	Blocks       uint64 // f_blocks
	Free         uint64 // f_bfree
	Avail        uint64 // f_bavail
	Files, FFree uint64
}

// Used returns the blocks in use.
func (f *FileSystem) Used() uint64 { return Sub(f.Blocks, f.Free) }

// KB converts blocks to kB.
func (f *FileSystem) KB(blocks uint64) uint64 {
	if f.BlockSize >= 1024 {
		return blocks * (f.BlockSize / 1024)
	}
	return blocks * f.BlockSize / 1024
}

// Scaled32 returns allocation units and the sizes in them so that the size
// fits an Integer32: hrStorageTable's columns are 32-bit, and a file
// system of more than 2^31 blocks (8 TB of 4 KB blocks, 16 TB of 8 KB
// ones) would otherwise wrap. The unit doubles until the size fits.
func (f *FileSystem) Scaled32() (units, size, used uint64) {
	return Scale32(f.BlockSize, f.Blocks, f.Used())
}

// Scale32 doubles units, halving size and used, until size fits an
// Integer32.
func Scale32(units, size, used uint64) (uint64, uint64, uint64) {
	for size > 1<<31-1 {
		size >>= 1
		used >>= 1
		units <<= 1
	}
	return units, size, used
}

// Mounts lists mounted file systems, remembering the hrFSIndex of each
// mount point across calls.
//
// It keeps /proc/self/mounts open and parses it again only when the
// kernel flags it as changed (poll(2) reports POLLPRI after a mount, an
// unmount or a remount in the namespace), which costs a system call
// where reading and parsing the table cost tens of microseconds. A
// file system can turn read-only without that flag (ext4's
// errors=remount-ro, or a remount from another mount namespace that
// shares it): its access is taken from statfs(2)'s ST_RDONLY, the same
// flag the table shows ("ro" where the mount or its super block is
// read-only), called at every reading for the usage.
type Mounts struct {
	FS FS

	mu      sync.Mutex
	claimed map[string]int // Claim's numbers, kept for good
	index   Names[int]
	next    int

	file   *File
	inProc bool    // file is /proc's: Changed tells when to read it again
	ms     []Mount // the last parse of file
	bad    int
	parsed bool
	buf    []byte
	pos    map[string]int // List's: each mount point's row

	// Statfs is unix.Statfs; tests replace it.
	Statfs func(path string, st *unix.Statfs_t) error
}

// Claim numbers paths first, 1 up in the order given (a path named twice
// keeps its first number), whether they are mount points yet or not; the
// mount points the table lists are numbered after them. Net-SNMP's snmpd
// numbers its file systems in one list, into which each `disk` line puts
// its path as the line is read, before the mount table is: hrFSIndex,
// hrStorageIndex and dskIndex follow the `disk` lines. Call it before the
// first List.
func (m *Mounts) Claim(paths []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range paths {
		if _, ok := m.claimed[p]; ok {
			continue
		}
		if m.claimed == nil {
			m.claimed = make(map[string]int, len(paths))
		}
		m.next++
		m.claimed[p] = m.next
	}
}

// Close closes the mount table kept open; the next List opens it again.
func (m *Mounts) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.file != nil {
		m.file.Close()
	}
	m.parsed = false
}

// mounts returns the mount table, parsed again when it changed. Caller
// holds mu.
func (m *Mounts) mounts() (ms []Mount, bad int, fresh, ok bool) {
	if m.file == nil {
		m.file = m.FS.NewFile("/proc/self/mounts")
	}
	if m.parsed && m.inProc && !m.file.Changed() {
		return m.ms, m.bad, false, true
	}
	b, err := m.file.Read(&m.buf)
	if err != nil {
		m.parsed, m.ms = false, nil
		return nil, 0, false, false
	}
	m.ms, m.bad = ParseMounts(b)
	CountBad("/proc/self/mounts", m.bad)
	m.parsed, m.inProc = true, m.file.InProc()
	return m.ms, m.bad, true, true
}

// List reads /proc/self/mounts and calls statfs on every served file
// system. Mount points listed twice are served once, with the
// last-mounted file system; the kinds FSType leaves out, and mount points
// rejected by skip, are not returned (but keep their index).
func (m *Mounts) List(skip func(*FileSystem) bool) ([]FileSystem, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, bad, fresh, ok := m.mounts()
	if !ok {
		return nil, 1
	}
	if fresh {
		m.index.Next()
	}
	statfs := m.Statfs
	if m.pos == nil {
		m.pos = make(map[string]int, len(ms))
	}
	pos := m.pos
	clear(pos)
	out := make([]FileSystem, 0, len(ms))
	for i := range ms {
		mt := &ms[i]
		idx, ok := m.claimed[mt.Path]
		if !ok {
			idx, ok = m.index.Get(mt.Path)
		}
		if !ok {
			m.next++
			idx = m.next
			m.index.Set(mt.Path, idx)
		}
		typ, ok := FSType(mt.Type)
		if !ok {
			if p, dup := pos[mt.Path]; dup { // over-mounted by a kind left out
				out[p].Index = -1
			}
			continue
		}
		f := FileSystem{
			Index: idx, Path: mt.Path, Device: mt.Device, Type: mt.Type, HrType: typ,
			Remote: typ == FSNFS || typ == FSAFS, ReadOnly: mt.ReadOnly(),
		}
		if skip != nil && skip(&f) {
			continue
		}
		if p, dup := pos[mt.Path]; dup {
			out[p].Index = -1
		}
		pos[mt.Path] = len(out)
		out = append(out, f)
	}
	if fresh {
		m.index.Forget(len(ms))
	}
	// Drop the over-mounted entries and read the usage of the rest.
	n := 0
	for i := range out {
		if out[i].Index < 0 {
			continue
		}
		f := out[i]
		var st unix.Statfs_t
		sf := statfs
		if sf == nil {
			// Without telling the runtime where statfs answers from
			// memory (internal/rawsys).
			sf = unix.Statfs
			if rawsys.LocalFS(f.Type) {
				sf = rawsys.Statfs
			}
		}
		if err := sf(m.FS.Path(f.Path), &st); err == nil {
			f.StatOK = true
			f.BlockSize = uint64(st.Bsize)
			f.Blocks, f.Free, f.Avail = st.Blocks, st.Bfree, st.Bavail
			f.Files, f.FFree = st.Files, st.Ffree
			if m.inProc {
				f.ReadOnly = st.Flags&unix.ST_RDONLY != 0
			}
		}
		out[n] = f
		n++
	}
	out = out[:n]
	sortByIndex(out)
	return out, bad
}

func sortByIndex(fs []FileSystem) {
	rowsort.Stable(fs, func(a, b *FileSystem) int { return cmp.Compare(a.Index, b.Index) })
}
