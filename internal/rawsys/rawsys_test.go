package rawsys

import (
	"bytes"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestFiles reads /proc/self/stat and lists /proc through the raw calls,
// as the host MIBs do, and compares with the os package.
func TestFiles(t *testing.T) {
	fd, err := Open("/proc/self/cmdline", 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	n, err := Pread(fd, buf, 0)
	Close(fd)
	want, _ := os.ReadFile("/proc/self/cmdline")
	if err != nil || !bytes.Equal(buf[:n], want) {
		t.Fatalf("Pread: %q, %v; want %q", buf[:n], err, want)
	}
	if _, err := Open("/proc/self/no-such-file", 0); err != unix.ENOENT {
		t.Errorf("Open of a missing file: %v, want ENOENT", err)
	}
	d, err := Open("/proc/self", unix.O_DIRECTORY)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(d)
	m, err := Getdents(d, buf)
	if err != nil || !bytes.Contains(buf[:m], []byte("cmdline\x00")) {
		t.Errorf("Getdents of /proc/self: %d bytes without cmdline, %v", m, err)
	}
	var st unix.Stat_t
	if err := Stat("/proc/self/ns/net", &st); err != nil || st.Ino == 0 {
		t.Errorf("Stat: %+v, %v", st, err)
	}
	var sf unix.Statfs_t
	if err := Statfs("/proc", &sf); err != nil || sf.Type != unix.PROC_SUPER_MAGIC {
		t.Errorf("Statfs(/proc): type %#x, %v", sf.Type, err)
	}
}

// TestLocalFS: file systems whose statfs can wait for a server, a FUSE
// process or the disk are not taken as answering from memory.
func TestLocalFS(t *testing.T) {
	for typ, want := range map[string]bool{
		"tmpfs": true, "ext4": true, "xfs": true, "proc": true,
		"nfs": false, "nfs4": false, "cifs": false, "fuse.sshfs": false, "fuseblk": false,
		"vfat": false, "btrfs": false, "9p": false, "ceph": false, "": false,
	} {
		if got := LocalFS(typ); got != want {
			t.Errorf("LocalFS(%q) = %v, want %v", typ, got, want)
		}
	}
	if !LocalMagic(unix.TMPFS_MAGIC) || LocalMagic(unix.NFS_SUPER_MAGIC) || LocalMagic(unix.FUSE_SUPER_MAGIC) {
		t.Error("LocalMagic: tmpfs must be local, NFS and FUSE not")
	}
}

// TestWaitAndRecv: WaitReadable returns at its timeout when nothing
// comes and at once when a datagram is queued, which Recv then takes;
// Recv and Send do not wait.
func TestWaitAndRecv(t *testing.T) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	rc.Control(func(s uintptr) { fd = int(s) })
	for {
		// A signal of the runtime's (EINTR) ends the wait early.
		t0 := time.Now()
		ready, e := WaitReadable(fd, 20*time.Millisecond)
		if e == unix.EINTR {
			continue
		}
		if ready || e != 0 {
			t.Fatalf("WaitReadable on an empty socket: %v, %v", ready, e)
		}
		if d := time.Since(t0); d < 15*time.Millisecond {
			t.Errorf("WaitReadable returned after %v, before its 20 ms", d)
		}
		break
	}
	buf := make([]byte, 16)
	if _, err := Recv(fd, buf, 0); err != unix.EAGAIN {
		t.Errorf("Recv on an empty socket: %v, want EAGAIN", err)
	}
	s, err := net.Dial("udp", c.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Write([]byte("ping"))
	ready := false
	for deadline := time.Now().Add(5 * time.Second); !ready && time.Now().Before(deadline); {
		ready, _ = WaitReadable(fd, time.Second)
	}
	if !ready {
		t.Fatal("WaitReadable: a queued datagram not seen")
	}
	if n, err := Recv(fd, buf, 0); err != nil || string(buf[:n]) != "ping" {
		t.Errorf("Recv: %q, %v", buf[:n], err)
	}
}
