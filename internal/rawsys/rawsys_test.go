package rawsys

import (
	"bytes"
	"fmt"
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

// TestBoundedRecv: on a blocking socket whose SO_RCVTIMEO is set
// (SetsockoptTimeval), Recvmmsg with MSG_WAITFORONE returns EAGAIN at the
// bound when nothing comes and takes a datagram when it comes; Recv does
// not wait.
func TestBoundedRecv(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	tv := unix.NsecToTimeval(int64(20 * time.Millisecond))
	if err := SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	iov := unix.Iovec{Base: &buf[0]}
	iov.SetLen(len(buf))
	var msg unix.Mmsghdr
	msg.Hdr.Iov, msg.Hdr.Iovlen = &iov, 1
	for {
		// A signal of the runtime's (EINTR) ends the wait early.
		t0 := time.Now()
		n, e := Recvmmsg(fd, &msg, 1, unix.MSG_WAITFORONE)
		if e == unix.EINTR {
			continue
		}
		if e != unix.EAGAIN {
			t.Fatalf("Recvmmsg on an empty socket: %d, %v, want EAGAIN", n, e)
		}
		if d := time.Since(t0); d < 15*time.Millisecond {
			t.Errorf("Recvmmsg returned after %v, before its 20 ms", d)
		}
		break
	}
	if _, err := Recv(fd, buf, 0); err != unix.EAGAIN {
		t.Errorf("Recv on an empty socket: %v, want EAGAIN", err)
	}
	s, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Write([]byte("ping"))
	n, e := Recvmmsg(fd, &msg, 1, unix.MSG_WAITFORONE)
	for deadline := time.Now().Add(5 * time.Second); (e == unix.EINTR || e == unix.EAGAIN) && time.Now().Before(deadline); {
		n, e = Recvmmsg(fd, &msg, 1, unix.MSG_WAITFORONE)
	}
	if e != 0 || n != 1 || string(buf[:msg.Len]) != "ping" {
		t.Fatalf("Recvmmsg: %d, %q, %v", n, buf[:msg.Len], e)
	}
	s.Write([]byte("pong"))
	var err2 error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if n, err2 = Recv(fd, buf, 0); err2 != unix.EAGAIN {
			break
		}
	}
	if err2 != nil || string(buf[:n]) != "pong" {
		t.Errorf("Recv: %q, %v", buf[:n], err2)
	}
}

func TestClockGettime(t *testing.T) {
	for _, clock := range []int{unix.CLOCK_MONOTONIC, unix.CLOCK_BOOTTIME} {
		var before, raw, after unix.Timespec
		if err := unix.ClockGettime(int32(clock), &before); err != nil {
			t.Fatal(err)
		}
		if err := ClockGettime(clock, &raw); err != nil {
			t.Fatalf("clock %d: %v", clock, err)
		}
		if err := unix.ClockGettime(int32(clock), &after); err != nil {
			t.Fatal(err)
		}
		if raw.Nano() < before.Nano() || raw.Nano() > after.Nano() {
			t.Errorf("clock %d: %d, not between %d and %d", clock, raw.Nano(), before.Nano(), after.Nano())
		}
	}
	var ts unix.Timespec
	if err := ClockGettime(-100, &ts); err != unix.EINVAL {
		t.Errorf("clock -100: %v, want EINVAL", err)
	}
}
