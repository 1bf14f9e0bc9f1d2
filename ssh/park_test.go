package ssh

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/connset"
)

// parkAfterTest is the ParkAfter of the parking tests: short, so that
// they wait little for connections to park.
const parkAfterTest = 20 * time.Millisecond

// waitFor polls cond for at most 10 s and fails with what if it stays
// false.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	t.Fatalf("after 10 s: %s\n%s", what, b.String())
}

// serverReaders counts the goroutines that run a server connection's
// handler (its reader: the mux loop, under the connection set).
func serverReaders() int {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	n := 0
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "(*mux).loop") && strings.Contains(g, "connset.(*Set).run") {
			n++
		}
	}
	return n
}

// muxes records the server's connections.
type muxes struct {
	mu sync.Mutex
	ms []*mux
}

func (r *muxes) add(m *mux) {
	r.mu.Lock()
	r.ms = append(r.ms, m)
	r.mu.Unlock()
}

func (r *muxes) get(i int) *mux {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= len(r.ms) {
		return nil
	}
	return r.ms[i]
}

func startParkingServer(t *testing.T, mod func(*ServerConfig)) (*testServer, *muxes) {
	t.Helper()
	r := &muxes{}
	ts := startServer(t, func(c *ServerConfig) {
		c.ParkAfter = parkAfterTest
		if mod != nil {
			mod(c)
		}
	})
	ts.srv.testHookMux = r.add
	return ts, r
}

// TestParkedConnectionAnswers: a connection idle for ParkAfter parks:
// no goroutine of the server reads it (before, the mux loop waited in
// its read for every idle connection), and it answers again, many
// times, also with a channel handler that waits on its own goroutine
// (echo) and with messages sent back to back.
func TestParkedConnectionAnswers(t *testing.T) {
	ts, _ := startParkingServer(t, nil)
	const n = 5
	var chans []io.ReadWriteCloser
	for i := 0; i < n; i++ {
		cl := dial(t, ts.addr, clientConfig(t))
		ch, err := cl.Subsystem("snmp")
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, ch, []byte(fmt.Sprint("before parking ", i)))
		chans = append(chans, ch)
	}
	for round := 0; round < 3; round++ {
		waitFor(t, "the idle connections park", func() bool { return serverReaders() == 0 })
		for i, ch := range chans {
			roundTrip(t, ch, []byte(fmt.Sprint("parked ", round, " ", i)))
			big := make([]byte, 100000)
			rand.Read(big)
			roundTrip(t, ch, big)
		}
	}
}

// TestParkedConnectionRekey: a key re-exchange started by the client
// while the server's side of the connection is parked wakes it and
// completes; data flows under the new keys and the connection parks
// again.
func TestParkedConnectionRekey(t *testing.T) {
	ts, r := startParkingServer(t, nil)
	cl := dial(t, ts.addr, clientConfig(t))
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("hello"))
	srvT := r.get(0).t
	for i := 0; i < 3; i++ {
		waitFor(t, "the connection parks", func() bool { return serverReaders() == 0 })
		before := srvT.kexes()
		if err := cl.Rekey(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the server completes the re-exchange", func() bool { return srvT.kexes() == before+1 })
		waitFor(t, "the client completes the re-exchange", func() bool { return cl.t.kexes() == before+1 })
		roundTrip(t, ch, []byte(fmt.Sprint("after rekey ", i)))
	}
}

// TestParkedConnectionParksAfterTransportMessages: a connection woken
// by messages of the transport layer only (a key re-exchange the client
// starts, an IGNORE) parks again with no message of the connection
// protocol after them: a peer's periodic re-exchanges (OpenSSH's
// RekeyLimit with a time limit) do not keep a goroutine on the
// connection until its next channel data.
func TestParkedConnectionParksAfterTransportMessages(t *testing.T) {
	ts, r := startParkingServer(t, nil)
	cl := dial(t, ts.addr, clientConfig(t))
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("hello"))
	srvT := r.get(0).t
	for i := 0; i < 2; i++ {
		waitFor(t, "the connection parks", func() bool { return serverReaders() == 0 })
		before := srvT.kexes()
		if err := cl.Rekey(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the server completes the re-exchange", func() bool { return srvT.kexes() == before+1 })
		// Once the server counts the exchange, a parked connection has
		// parked again after it.
		waitFor(t, "the connection parks after a re-exchange with no data after it", func() bool { return serverReaders() == 0 })
		read := srvT.pc.readPackets.Load()
		if err := cl.t.writePacket(newBuilder(msgIgnore).text("nothing").b); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the server reads the IGNORE", func() bool { return srvT.pc.readPackets.Load() > read })
		waitFor(t, "the connection parks after an IGNORE with no data after it", func() bool { return serverReaders() == 0 })
	}
	roundTrip(t, ch, []byte("still answers"))
}

// TestParkedConnectionKeepalive: the server's keepalives go out while
// the connection is parked, their replies wake it, and it parks again;
// when the replies stop, the keepalive timeout closes the parked
// connection: its channel ends and the client sees the connection close.
func TestParkedConnectionKeepalive(t *testing.T) {
	ts, r := startParkingServer(t, func(c *ServerConfig) {
		c.KeepaliveInterval = 30 * time.Millisecond
		c.KeepaliveMax = 2
	})
	// The client talks through a relay that can stop forwarding.
	relay := newRelay(t, ts.addr)
	cl := dial(t, relay.addr, clientConfig(t))
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("hello"))
	m := r.get(0)
	for i := 0; i < 3; i++ {
		waitFor(t, "the connection parks", func() bool { return serverReaders() == 0 })
		replies := m.keepaliveReplies.Load()
		waitFor(t, "a keepalive reply arrives", func() bool { return m.keepaliveReplies.Load() > replies })
	}
	roundTrip(t, ch, []byte("still there"))
	relay.freeze()
	select {
	case <-m.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the unanswered keepalives did not close the connection")
	}
	waitFor(t, "no server goroutine is left for the connection", func() bool { return serverReaders() == 0 })
}

// TestParkedConnectionEnds: a parked connection whose client goes away
// is torn down (its channel handler finishes), and Close tears down
// those still parked: the channel handlers run to their end.
func TestParkedConnectionEnds(t *testing.T) {
	var mu sync.Mutex
	finished := 0
	ts, r := startParkingServer(t, func(c *ServerConfig) {
		c.Subsystems["snmp"] = func(user string, ch io.ReadWriteCloser) {
			echo(user, ch)
			mu.Lock()
			finished++
			mu.Unlock()
		}
	})
	done := func() int {
		mu.Lock()
		defer mu.Unlock()
		return finished
	}
	var clients []*Client
	for i := 0; i < 3; i++ {
		cl := dial(t, ts.addr, clientConfig(t))
		ch, err := cl.Subsystem("snmp")
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, ch, []byte("hello"))
		clients = append(clients, cl)
	}
	waitFor(t, "the connections park", func() bool { return serverReaders() == 0 && connset.Parked() >= 3 })
	// The client goes away while the server's side is parked.
	clients[0].t.conn.Close()
	select {
	case <-r.get(0).done:
	case <-time.After(10 * time.Second):
		t.Fatal("a parked connection whose client left was not torn down")
	}
	waitFor(t, "the channel handler of the closed connection finishes", func() bool { return done() == 1 })
	ts.srv.Close()
	// Close waits for the connections' teardown; the channel handlers
	// finish on their own goroutines.
	waitFor(t, "the channel handlers of the connections Close ended finish", func() bool { return done() == 3 })
	for i := 1; i < 3; i++ {
		select {
		case <-r.get(i).done:
		default:
			t.Fatalf("connection %d not torn down by Close", i)
		}
	}
}

// relay forwards one TCP connection to addr until freeze, after which
// it forwards nothing (the connection stays open).
type relay struct {
	addr   string
	mu     sync.Mutex
	frozen bool
}

func newRelay(t *testing.T, addr string) *relay {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{addr: l.Addr().String()}
	var conns []net.Conn
	var cmu sync.Mutex
	t.Cleanup(func() {
		l.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
	})
	go func() {
		for {
			a, err := l.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", addr)
			if err != nil {
				a.Close()
				return
			}
			cmu.Lock()
			conns = append(conns, a, b)
			cmu.Unlock()
			go r.copy(a, b)
			go r.copy(b, a)
		}
	}()
	return r
}

func (r *relay) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		r.mu.Lock()
		frozen := r.frozen
		r.mu.Unlock()
		if n > 0 && !frozen {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (r *relay) freeze() {
	r.mu.Lock()
	r.frozen = true
	r.mu.Unlock()
}

// TestOpenSSHClientParked: OpenSSH's ssh -s snmp against a parking
// server: the connection parks between messages and answers again, also
// after re-exchanges OpenSSH starts on its own while the server's side
// is parked (RekeyLimit with a time limit); after such a re-exchange it
// parks again with no data after it (before, it waited on its goroutine
// for the next channel message, and OpenSSH's re-exchange every second
// kept it from parking for good when one came before it had parked).
func TestOpenSSHClientParked(t *testing.T) {
	sshBin := needBinary(t, "/usr/bin/ssh")
	userKey := mustEd25519()
	userSigner, _ := NewSigner(userKey)
	ts, r := startParkingServer(t, nil)
	dir := t.TempDir()
	if err := os.WriteFile(ts.authorizedKeysPath(t), authorizedKeysLine(t, userSigner.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	idFile := writePrivateKey(t, dir, "id", userKey)
	host, port, _ := net.SplitHostPort(ts.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sshBin, "-F", "/dev/null", "-s", "-p", port,
		"-i", idFile, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile="+filepath.Join(dir, "kh"),
		"-o", "RekeyLimit=1G 1s",
		"alice@"+host, "snmp")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	echoOnce := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(stdin, msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(stdout, got); err != nil {
			t.Fatalf("ssh: %v\n%s", err, stderr.String())
		}
		if string(got) != msg {
			t.Fatalf("echo mismatch: %q, want %q", got, msg)
		}
	}
	echoOnce("hello")
	waitFor(t, "the server learns of the connection", func() bool { return r.get(0) != nil })
	srvT := r.get(0).t
	for i := 0; i < 2; i++ {
		waitFor(t, "the connection parks", func() bool { return serverReaders() == 0 })
		k := srvT.kexes()
		waitFor(t, "OpenSSH re-exchanges keys with the parked server", func() bool { return srvT.kexes() > k })
		waitFor(t, "the connection parks again after OpenSSH's re-exchange, with no data after it", func() bool { return serverReaders() == 0 })
		echoOnce(fmt.Sprint("after rekey ", i))
	}
}

// splitConn writes each packet in two parts, pause apart, once armed;
// or late, delay after it was given.
type splitConn struct {
	net.Conn
	mu           sync.Mutex
	pause, delay time.Duration
}

func (c *splitConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	time.Sleep(c.delay)
	if c.pause == 0 || len(b) < 2 {
		return c.Conn.Write(b)
	}
	n, err := c.Conn.Write(b[:1])
	if err != nil {
		return n, err
	}
	time.Sleep(c.pause)
	m, err := c.Conn.Write(b[1:])
	return n + m, err
}

// TestParkedConnectionSlowPacket: the read deadline with which a
// connection waits for its next packet before parking does not cut a
// packet that arrives slowly (its first octet before the deadline, the
// rest after it), nor a key re-exchange whose next packet comes after
// it.
func TestParkedConnectionSlowPacket(t *testing.T) {
	ts, r := startParkingServer(t, nil)
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	sc := &splitConn{Conn: nc}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := NewClient(ctx, sc, ts.addr, clientConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("hello"))
	sc.mu.Lock()
	sc.pause = 3 * parkAfterTest
	sc.mu.Unlock()
	for i := 0; i < 3; i++ {
		// Each message arrives a little after the connection's wait
		// began and ends after its deadline.
		time.Sleep(parkAfterTest / 2)
		roundTrip(t, ch, []byte(fmt.Sprint("slow ", i)))
	}
	sc.mu.Lock()
	sc.pause, sc.delay = 0, 3*parkAfterTest
	sc.mu.Unlock()
	srvT := r.get(0).t
	for i := 0; i < 2; i++ {
		// The server reads the client's KEXINIT at once (the next
		// packet's wait sets a deadline) and its next key exchange
		// packet after that deadline.
		waitFor(t, "the connection parks", func() bool { return serverReaders() == 0 })
		before := srvT.kexes()
		if err := cl.Rekey(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the server completes the re-exchange", func() bool { return srvT.kexes() == before+1 })
		roundTrip(t, ch, []byte(fmt.Sprint("after slow rekey ", i)))
	}
}
