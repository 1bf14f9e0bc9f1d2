package tcpudp

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"golang.org/x/sys/unix"
)

// udpInode opens a UDP socket and returns its inode.
func udpInode(t *testing.T) uint32 {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rc, err := c.(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	rc.Control(func(fd uintptr) { err = unix.Fstat(int(fd), &st) })
	if err != nil {
		t.Fatal(err)
	}
	return uint32(st.Ino)
}

// TestOwnerTTL: one scan of the processes' open files serves the process
// columns for OwnerTTL, past CacheTTL; a socket opened meanwhile reads
// process 0 until the next scan.
func TestOwnerTTL(t *testing.T) {
	m := New(Config{CacheTTL: time.Second})
	get := func(now time.Time, ino uint32) uint32 {
		r := mib.NewRequest(context.Background(), now)
		defer r.Release()
		return uint32(m.process(r, ino).Num)
	}
	pid := uint32(os.Getpid())
	old := udpInode(t)
	t0 := time.Now()
	if got := get(t0, old); got != pid {
		t.Fatalf("first socket: process %d, want %d", got, pid)
	}
	fresh := udpInode(t)
	if got := get(t0.Add(2*time.Second), fresh); got != 0 {
		t.Errorf("socket opened after the scan, 2 s later: process %d, want 0 (the scan is kept %v)", got, DefaultOwnerTTL)
	}
	if got := get(t0.Add(DefaultOwnerTTL+time.Second), fresh); got != pid {
		t.Errorf("after OwnerTTL: process %d, want %d", got, pid)
	}
}

// TestSocketOwners opens sockets in this process and finds them, with
// this process as their owner, among every process's sockets.
func TestSocketOwners(t *testing.T) {
	var inodes []uint32
	for range 3 {
		inodes = append(inodes, udpInode(t))
	}
	owners := SocketOwners(procfs.Host)
	for _, ino := range inodes {
		if got := owners[ino]; got != uint32(os.Getpid()) {
			t.Errorf("socket %d: owner %d, want %d (of %d sockets)", ino, got, os.Getpid(), len(owners))
		}
	}
	if _, err := os.Stat("/proc/1/fd"); err == nil && len(owners) < len(inodes) {
		t.Errorf("%d sockets found", len(owners))
	}
}

// BenchmarkSocketOwners reads every process's open files for its
// sockets, as tcpConnectionProcess, tcpListenerProcess and
// udpEndpointProcess need.
//
//	go test -run '^$' -bench SocketOwners -benchmem ./mib/tcpudp
func BenchmarkSocketOwners(b *testing.B) {
	n := 0
	for b.Loop() {
		n = len(SocketOwners(procfs.Host))
	}
	b.ReportMetric(float64(n), "sockets")
}
