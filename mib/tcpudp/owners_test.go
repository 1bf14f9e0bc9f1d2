package tcpudp

import (
	"net"
	"os"
	"testing"

	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"golang.org/x/sys/unix"
)

// TestSocketOwners opens sockets in this process and finds them, with
// this process as their owner, among every process's sockets.
func TestSocketOwners(t *testing.T) {
	var inodes []uint32
	for range 3 {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		rc, err := c.(*net.UDPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		rc.Control(func(fd uintptr) { err = unix.Fstat(int(fd), &st) })
		if err != nil {
			t.Fatal(err)
		}
		inodes = append(inodes, uint32(st.Ino))
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
