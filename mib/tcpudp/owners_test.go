package tcpudp

import (
	"context"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// udpInode opens a UDP socket and returns its inode.
func udpInode(t testing.TB) uint32 {
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

// ownerNS is a network namespace holding only the sockets a test opens,
// so that the sockets of the rest of the machine do not make scans.
type ownerNS struct {
	t  *testing.T
	ns *netns.NS
	m  *MIB
}

func newOwnerNS(t *testing.T, cfg Config) *ownerNS {
	t.Helper()
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-owners")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Delete() })
	m := New(cfg)
	t.Cleanup(func() { m.Close() })
	return &ownerNS{t: t, ns: ns, m: m}
}

// udp opens a UDP socket in the namespace and returns it as a file (to
// hand to a process or to keep) with its inode.
func (o *ownerNS) udp() (*os.File, uint32) {
	o.t.Helper()
	var f *os.File
	if err := o.ns.Do(func() error {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer c.Close()
		f, err = c.(*net.UDPConn).File()
		return err
	}); err != nil {
		o.t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		o.t.Fatal(err)
	}
	return f, uint32(st.Ino)
}

// hold starts a process (sleep) holding files as descriptors 3 and up.
func (o *ownerNS) hold(files ...*os.File) *exec.Cmd {
	o.t.Helper()
	c := exec.Command("sleep", "60")
	c.ExtraFiles = files
	if err := c.Start(); err != nil {
		o.t.Fatal(err)
	}
	o.t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// read walks udpEndpointProcess in a request at now and returns each
// endpoint's process by inode (udpEndpointInstance).
func (o *ownerNS) read(now time.Time) map[uint32]uint32 {
	o.t.Helper()
	var tree mib.Tree
	o.m.Register(&tree)
	out := map[uint32]uint32{}
	col := UdpEndpointEntry.Append(8)
	if err := o.ns.Do(func() error {
		r := mib.NewRequest(context.Background(), now)
		defer r.Release()
		cur := col
		for {
			vb, ok := tree.Next(r, cur)
			if !ok || !vb.Name.HasPrefix(col) {
				return nil
			}
			out[vb.Name[len(vb.Name)-1]] = uint32(vb.Value.Num)
			cur = vb.Name.Clone()
		}
	}); err != nil {
		o.t.Fatal(err)
	}
	return out
}

func pidOf(c *exec.Cmd) uint32 { return uint32(c.Process.Pid) }

// TestOwnerNewSocket: a socket that appears in a process between two
// readings of the sockets has its process at the second, not OwnerTTL
// later.
func TestOwnerNewSocket(t *testing.T) {
	o := newOwnerNS(t, Config{CacheTTL: time.Second})
	mine, mineIno := o.udp()
	defer mine.Close()
	t0 := time.Now()
	if got := o.read(t0)[mineIno]; got != uint32(os.Getpid()) {
		t.Fatalf("this process's socket: process %d, want %d", got, os.Getpid())
	}
	f, ino := o.udp()
	child := o.hold(f)
	f.Close()
	got := o.read(t0.Add(1100 * time.Millisecond))
	if got[ino] != pidOf(child) {
		t.Errorf("socket opened in process %d since the last reading, at the next reading (OwnerTTL %v): process %d",
			pidOf(child), DefaultOwnerTTL, got[ino])
	}
	if got[mineIno] != uint32(os.Getpid()) {
		t.Errorf("this process's socket: process %d, want %d", got[mineIno], os.Getpid())
	}
}

// TestOwnerNoScanWhenUnchanged: while the sockets and their processes
// stay, readings after the first read no process's open files, past
// OwnerTTL too.
func TestOwnerNoScanWhenUnchanged(t *testing.T) {
	o := newOwnerNS(t, Config{CacheTTL: time.Second})
	mine, mineIno := o.udp()
	defer mine.Close()
	f, ino := o.udp()
	child := o.hold(f)
	f.Close()
	t0 := time.Now()
	const readings = 12 // 13.2 s: over twice OwnerTTL
	for i := range readings {
		got := o.read(t0.Add(time.Duration(i) * 1100 * time.Millisecond))
		if got[mineIno] != uint32(os.Getpid()) || got[ino] != pidOf(child) {
			t.Fatalf("reading %d: processes %d and %d, want %d and %d", i, got[mineIno], got[ino], os.Getpid(), pidOf(child))
		}
	}
	if c := ownerCounts(o.m); c.scans != 1 {
		t.Errorf("%d readings 1.1 s apart of unchanged sockets scanned the processes' open files %d times, want once", readings, c.scans)
	}
}

// TestOwnerExitsAndPIDReused: of two processes holding a socket, the
// one with the higher PID is its process (the scan visits the processes
// in descending PID order); once that one exits, the other is, at the
// next reading, even when a new process has been given the PID of the one
// that exited.
func TestOwnerExitsAndPIDReused(t *testing.T) {
	o := newOwnerNS(t, Config{CacheTTL: time.Second})
	f, ino := o.udp()
	lo, hi := o.hold(f), o.hold(f)
	f.Close()
	if pidOf(lo) > pidOf(hi) {
		lo, hi = hi, lo
	}
	t0 := time.Now()
	first := o.read(t0)[ino]
	if first != pidOf(hi) {
		t.Errorf("socket held by processes %d and %d: process %d, want the higher", pidOf(lo), pidOf(hi), first)
	}
	owner, other := hi, lo
	if first == pidOf(lo) {
		owner, other = lo, hi
	}
	owner.Process.Kill()
	owner.Wait()
	if c := reusePID(t, pidOf(owner)); c != nil {
		t.Logf("process %d exited; PID %d given to a new process", pidOf(owner), pidOf(c))
	}
	if got := o.read(t0.Add(1100 * time.Millisecond))[ino]; got != pidOf(other) {
		t.Errorf("after process %d exited, socket still held by %d: process %d", pidOf(owner), pidOf(other), got)
	}
}

// TestOwnerHandsOn: a process that still runs but has closed a socket
// another process holds stops being its process within OwnerTTL (the
// known sockets' links are read again every OwnerTTL).
func TestOwnerHandsOn(t *testing.T) {
	o := newOwnerNS(t, Config{CacheTTL: time.Second})
	mine, mineIno := o.udp()
	defer mine.Close()
	t0 := time.Now()
	o.read(t0) // this process holds the namespace's sockets: it is looked at first
	f, ino := o.udp()
	child := o.hold(f)
	t1 := t0.Add(1100 * time.Millisecond)
	if got := o.read(t1); got[ino] != uint32(os.Getpid()) || got[mineIno] != uint32(os.Getpid()) {
		t.Fatalf("sockets of this process (%d), one held by process %d too: processes %d and %d, want this one's",
			os.Getpid(), pidOf(child), got[mineIno], got[ino])
	}
	f.Close()
	got := o.read(t1.Add(DefaultOwnerTTL))[ino]
	if got != pidOf(child) {
		t.Errorf("OwnerTTL after this process (%d) closed the socket process %d holds: process %d", os.Getpid(), pidOf(child), got)
	}
}

// TestOwnerClientAgain: the new socket of a process that closed its
// previous one less than OwnerTTL ago (a client connecting again) is
// found in that process first, before processes started since.
func TestOwnerClientAgain(t *testing.T) {
	o := newOwnerNS(t, Config{CacheTTL: time.Second})
	f, ino := o.udp()
	t0 := time.Now()
	if got := o.read(t0)[ino]; got != uint32(os.Getpid()) {
		t.Fatalf("process %d, want %d", got, os.Getpid())
	}
	f.Close()
	g, other := o.udp()
	child := o.hold(g)
	g.Close()
	if got := o.read(t0.Add(1100 * time.Millisecond))[other]; got != pidOf(child) {
		t.Fatalf("process %d, want %d", got, pidOf(child))
	}
	o.hold() // another process started since, holding none
	f, ino = o.udp()
	defer f.Close()
	before := ownerCounts(o.m)
	if got := o.read(t0.Add(2200 * time.Millisecond))[ino]; got != uint32(os.Getpid()) {
		t.Fatalf("new socket: process %d, want %d", got, os.Getpid())
	}
	// This process first, or after the child if PIDs wrapped in between.
	if c := ownerCounts(o.m); c.scans != before.scans+1 || c.visits > before.visits+2 {
		t.Errorf("new socket of a process that held one 2.2 s before: %d scans reading %d processes, want 1 reading 1 or 2",
			c.scans-before.scans, c.visits-before.visits)
	}
}

// TestOwnerClientFirst: a client that opens a new connection at every
// reading is looked at first, before the processes that hold sockets of
// the namespace but opened none lately (a server with many open files).
func TestOwnerClientFirst(t *testing.T) {
	o := newOwnerNS(t, Config{CacheTTL: time.Second})
	server, serverIno := o.udp() // this process: a lower PID than the client's
	defer server.Close()
	c := o.ns.Command(os.Args[0], "-test.run=^TestOwnerClientHelper$")
	c.Env = append(os.Environ(), "TSNMP_OWNER_CLIENT=1")
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); c.Process.Kill(); c.Wait() })
	// next has the client close its socket and open another; it returns
	// the new one's inode.
	buf := make([]byte, 64)
	next := func() uint32 {
		if _, err := in.Write([]byte("\n")); err != nil {
			t.Fatal(err)
		}
		n, err := out.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		ino, err := strconv.ParseUint(string(buf[:n-1]), 10, 32)
		if err != nil {
			t.Fatalf("client: %q", buf[:n])
		}
		return uint32(ino)
	}
	t0 := time.Now()
	for i := range 5 {
		ino := next()
		before := ownerCounts(o.m)
		got := o.read(t0.Add(time.Duration(i) * 1100 * time.Millisecond))
		if got[ino] != pidOf(c) || got[serverIno] != uint32(os.Getpid()) {
			t.Fatalf("reading %d: processes %d and %d, want %d and %d", i, got[ino], got[serverIno], pidOf(c), os.Getpid())
		}
		if d := ownerCounts(o.m).visits - before.visits; i >= 2 && d != 1 {
			t.Errorf("reading %d: client's new socket found after reading %d processes, want 1 (the client)", i, d)
		}
	}
}

// TestOwnerClientHelper is TestOwnerClientFirst's client: at each line
// read it closes its UDP socket, opens another and writes its inode.
func TestOwnerClientHelper(t *testing.T) {
	if os.Getenv("TSNMP_OWNER_CLIENT") != "1" {
		t.Skip("TestOwnerClientFirst's client")
	}
	var c net.PacketConn
	buf := make([]byte, 1)
	for {
		if _, err := os.Stdin.Read(buf); err != nil {
			os.Exit(0)
		}
		if c != nil {
			c.Close()
		}
		var err error
		if c, err = net.ListenPacket("udp4", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		rc, _ := c.(*net.UDPConn).SyscallConn()
		var st unix.Stat_t
		rc.Control(func(fd uintptr) { err = unix.Fstat(int(fd), &st) })
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString(strconv.FormatUint(st.Ino, 10) + "\n")
	}
}

// reusePID starts a process with PID pid (free), as a process started
// after pid's exit could be given: it sets the last PID the kernel gave
// (/proc/sys/kernel/ns_last_pid, root only) to pid-1 and starts one,
// trying again when another process took the PID first. It returns nil
// when the PID could not be had.
func reusePID(t *testing.T, pid uint32) *exec.Cmd {
	for range 50 {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(int(pid-1))), 0); err != nil {
			t.Logf("PID %d not reused: %v", pid, err)
			return nil
		}
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if uint32(c.Process.Pid) == pid {
			t.Cleanup(func() { c.Process.Kill(); c.Wait() })
			return c
		}
		c.Process.Kill()
		c.Wait()
	}
	t.Logf("PID %d not reused: other processes took it first", pid)
	return nil
}

// TestOwnerKernelSocket: a socket no process holds (a VXLAN device's)
// reads 0 and is looked for again only after OwnerTTL, while new sockets
// still get their process at the next reading.
func TestOwnerKernelSocket(t *testing.T) {
	o := newOwnerNS(t, Config{CacheTTL: time.Second})
	if err := o.ns.IPBatch("link add vx0 type vxlan id 42 dstport 4789 local 127.0.0.1\nlink set vx0 up\n"); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t0 := time.Now()
	got := o.read(t0)
	if len(got) != 1 {
		t.Fatalf("%d UDP endpoints, want the VXLAN device's: %v", len(got), got)
	}
	for ino, pid := range got {
		if pid != 0 {
			t.Fatalf("kernel socket %d: process %d, want 0", ino, pid)
		}
	}
	if c := ownerCounts(o.m); c.complete != 1 {
		t.Fatalf("%d scans of every process, want 1", c.complete)
	}
	var children []*exec.Cmd
	for i := 1; i <= 4; i++ { // until 4.4 s, within OwnerTTL
		var want map[uint32]uint32
		if i <= 2 {
			f, ino := o.udp()
			children = append(children, o.hold(f))
			f.Close()
			want = map[uint32]uint32{ino: pidOf(children[len(children)-1])}
		}
		got := o.read(t0.Add(time.Duration(i) * 1100 * time.Millisecond))
		for ino, pid := range want {
			if got[ino] != pid {
				t.Errorf("reading %d: new socket of process %d: process %d", i, pid, got[ino])
			}
		}
	}
	if c := ownerCounts(o.m); c.complete != 1 || c.scans != 3 {
		t.Errorf("within OwnerTTL: %d scans, %d of every process; want 3 (the first and one for each new socket) and 1", c.scans, c.complete)
	}
	t1 := t0.Add(DefaultOwnerTTL + 500*time.Millisecond)
	o.read(t1)
	if c := ownerCounts(o.m); c.complete != 2 {
		t.Errorf("after OwnerTTL: %d scans of every process, want 2 (the kernel socket looked for again)", c.complete)
	}
	// Missed again: looked for after twice OwnerTTL.
	o.read(t1.Add(DefaultOwnerTTL + 500*time.Millisecond))
	if c := ownerCounts(o.m); c.complete != 2 {
		t.Errorf("OwnerTTL after a second miss: %d scans of every process, want still 2", c.complete)
	}
	t2 := t1.Add(2*DefaultOwnerTTL + 500*time.Millisecond)
	o.read(t2)
	if c := ownerCounts(o.m); c.complete != 3 {
		t.Errorf("twice OwnerTTL after a second miss: %d scans of every process, want 3", c.complete)
	}
	for range 10 { // doubling up to 12 OwnerTTLs
		t2 = t2.Add(maxMissWait*DefaultOwnerTTL + 500*time.Millisecond)
		o.read(t2)
	}
	if c := ownerCounts(o.m); c.complete != 13 {
		t.Errorf("10 readings 12 OwnerTTLs apart: %d scans of every process in all, want 13", c.complete)
	}
}

// TestOwnerScanBudget: a socket no process holds (in flight in a unix
// socket) appearing at every reading costs on average no more than a scan
// of every process per OwnerTTL, as a scan every OwnerTTL did.
func TestOwnerScanBudget(t *testing.T) {
	o := newOwnerNS(t, Config{CacheTTL: time.Second})
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	t0 := time.Now()
	step := 1100 * time.Millisecond
	const readings = 10
	for i := range readings {
		f, ino := o.udp()
		// In flight until pair[1] reads it: no process has it open.
		if err := unix.Sendmsg(pair[0], []byte{0}, unix.UnixRights(int(f.Fd())), nil, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got, ok := o.read(t0.Add(time.Duration(i) * step))[ino]; !ok || got != 0 {
			t.Fatalf("reading %d: socket %d in flight: process %d (listed %v), want 0", i, ino, got, ok)
		}
	}
	c := ownerCounts(o.m)
	if limit := 2 + int(readings*step/DefaultOwnerTTL) + 1; c.complete > limit {
		t.Errorf("%d readings %v apart, each with a socket no process holds: %d scans of every process, want at most %d", readings, step, c.complete, limit)
	}
	t.Logf("%d scans, %d of every process, %d processes visited", c.scans, c.complete, c.visits)
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
// sockets: the scan that finds the processes of sockets not known yet.
//
//	go test -run '^$' -bench SocketOwners -benchmem ./mib/tcpudp
func BenchmarkSocketOwners(b *testing.B) {
	n := 0
	for b.Loop() {
		n = len(SocketOwners(procfs.Host))
	}
	b.ReportMetric(float64(n), "sockets")
}

// BenchmarkOwnersKnown is a reading of sockets whose processes are known
// and still run: no process's open files are read.
//
//	go test -run '^$' -bench OwnersKnown -benchmem ./mib/tcpudp
func BenchmarkOwnersKnown(b *testing.B) {
	var inodes []uint32
	for range 20 {
		inodes = append(inodes, udpInode(b))
	}
	o := newOwners(procfs.Host, time.Hour)
	defer o.close()
	o.resolve(time.Now(), inodes)
	for b.Loop() {
		o.resolve(time.Now(), inodes)
	}
	if c := o.counts(); c.scans != 1 {
		b.Fatalf("%d scans, want 1", c.scans)
	}
}

// FuzzSocketInode feeds socketInode the text of /proc/PID/fd links: it
// accepts "socket:[N]" with N a 32-bit decimal and nothing else.
func FuzzSocketInode(f *testing.F) {
	f.Add([]byte("socket:[12345]"))
	f.Add([]byte("socket:[4294967296]"))
	f.Add([]byte("pipe:[5]"))
	f.Add([]byte("socket:[]"))
	f.Fuzz(func(t *testing.T, link []byte) {
		ino, ok := socketInode(link)
		if !ok {
			return
		}
		digits, found := strings.CutPrefix(string(link), "socket:[")
		digits, closed := strings.CutSuffix(digits, "]")
		n, err := strconv.ParseUint(digits, 10, 32)
		if !found || !closed || err != nil || uint32(n) != ino || strings.Trim(digits, "0123456789") != "" {
			t.Fatalf("%q read as inode %d", link, ino)
		}
	})
}

// TestEachSocketRefused reads the descriptor links of a process of
// another user (nobody), holding ten files or more, from a thread that has given
// up CAP_SYS_PTRACE, as tsnmpd does under the shipped unit: the kernel
// refuses the first link and eachSocket stops there. With the capability
// it tries every link.
func TestEachSocketRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatal("needs root to start a process as nobody")
		}
		t.Skip("needs root to start a process as nobody")
	}
	cmd := exec.Command("sh", "-c", "exec 3</dev/null 4</dev/null 5</dev/null 6</dev/null 7</dev/null 8</dev/null 9</dev/null; exec sleep 30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := strconv.Itoa(cmd.Process.Pid)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile("/proc/" + pid + "/comm"); string(b) == "sleep\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the shell did not run sleep")
		}
	}
	try := func() int {
		dfd, err := unix.Open("/proc/"+pid+"/fd", unix.O_DIRECTORY|unix.O_RDONLY, 0)
		if err != nil {
			t.Error(err)
			return -1
		}
		defer unix.Close(dfd)
		var dr procfs.DirReader
		return eachSocket(dfd, &dr, make([]byte, 64), func(uint32, uint32) {})
	}
	ents, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil || len(ents) < 10 {
		t.Fatalf("%d descriptors, want 10 or more: %v", len(ents), err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		t.Fatal(err)
	}
	// Where root runs without CAP_SYS_PTRACE (a container's default
	// set), the check with it is left out; the one without still runs.
	if data[0].Effective&(1<<unix.CAP_SYS_PTRACE) != 0 {
		if n := try(); n != len(ents) {
			t.Errorf("with CAP_SYS_PTRACE: tried %d links, want %d", n, len(ents))
		}
	}
	// Capabilities are a thread's own: this one gives CAP_SYS_PTRACE up
	// and ends with its goroutine (locked, never unlocked).
	done := make(chan int)
	go func() {
		runtime.LockOSThread()
		hdr, data := hdr, data
		data[0].Effective &^= 1 << unix.CAP_SYS_PTRACE
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			t.Error(err)
			done <- -1
			return
		}
		done <- try()
	}()
	if n := <-done; n != 1 {
		t.Errorf("without CAP_SYS_PTRACE: tried %d links, want 1 (the first refused)", n)
	}
}
