package ssh

import (
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

func (t *transport) kexes() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.kexCount
}

func TestRekeyByVolume(t *testing.T) {
	t.Run("client", func(t *testing.T) { testRekeyByVolume(t, false) })
	t.Run("server", func(t *testing.T) { testRekeyByVolume(t, true) })
}

func testRekeyByVolume(t *testing.T, serverSide bool) {
	ts := startServer(t, func(c *ServerConfig) {
		if serverSide {
			c.RekeyBytes = 256 * 1024
		}
	})
	cfg := clientConfig(t)
	if !serverSide {
		cfg.RekeyBytes = 256 * 1024
	}
	cl := dial(t, ts.addr, cfg)
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3<<20)
	rand.Read(data)
	roundTrip(t, ch, data)
	if n := cl.t.kexes(); n < 5 {
		t.Fatalf("%d key exchanges after 6 MiB with a 256 KiB limit", n)
	}
}

func TestRekeyByTime(t *testing.T) {
	ts := startServer(t, nil)
	cfg := clientConfig(t)
	cfg.RekeyInterval = 20 * time.Millisecond
	cl := dial(t, ts.addr, cfg)
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	before := cl.t.kexes()
	time.Sleep(50 * time.Millisecond)
	roundTrip(t, ch, []byte("tick"))
	roundTrip(t, ch, []byte("tock"))
	if cl.t.kexes() <= before {
		t.Fatal("no re-exchange after the rekey interval")
	}
}

// TestWindowAdjustOnlyWhenLow checks that the receiver tops up the window
// only after half of it is used, not once per data message.
func TestWindowAdjustOnlyWhenLow(t *testing.T) {
	ts := startServer(t, nil)
	cl := dial(t, ts.addr, clientConfig(t))
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	const total = 16 * channelWindow
	data := make([]byte, total)
	go func() { _, _ = ch.Write(data) }()
	if _, err := io.ReadFull(ch, make([]byte, total)); err != nil {
		t.Fatal(err)
	}
	msgs := total / maxDataChunk
	adjusts := cl.m.adjustsSent.Load()
	// One adjust per half window received, give or take reader timing.
	if adjusts == 0 || adjusts > 2*total/channelWindow+2 {
		t.Fatalf("%d window adjusts for %d data messages", adjusts, msgs)
	}
}

func TestMaxChannels(t *testing.T) {
	ts := startServer(t, func(c *ServerConfig) { c.MaxChannels = 2 })
	cl := dial(t, ts.addr, clientConfig(t))
	a, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Subsystem("snmp"); err != nil {
		t.Fatal(err)
	}
	_, err = cl.Subsystem("snmp")
	var oe *OpenChannelError
	if !errors.As(err, &oe) {
		t.Fatalf("third channel: got %v, want OpenChannelError", err)
	}
	a.Close()
	// Closing one frees a slot once the server has processed the close.
	deadline := time.Now().Add(5 * time.Second)
	for {
		ch, err := cl.Subsystem("snmp")
		if err == nil {
			roundTrip(t, ch, []byte("ok"))
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMaxUnauthenticated(t *testing.T) {
	ts := startServer(t, func(c *ServerConfig) { c.MaxUnauthenticated = 2 })
	// Two idle connections hold both unauthenticated slots.
	var idle []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Reading the version line proves the server accepted the slot.
		buf := make([]byte, len(softwareVersion))
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 64)); err == nil {
		t.Fatalf("third connection got %d bytes, want it closed", n)
	}
	// Once a slot frees up, clients get in again.
	idle[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		cl, err := Dial(t.Context(), "tcp", ts.addr, clientConfig(t))
		if err == nil {
			cl.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAuthTimeout(t *testing.T) {
	ts := startServer(t, func(c *ServerConfig) { c.AuthTimeout = 200 * time.Millisecond })
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Say nothing: the server must hang up on its own.
	_, err = io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("server did not enforce the authentication timeout")
	}
}

func TestKeepalive(t *testing.T) {
	ts := startServer(t, func(c *ServerConfig) { c.KeepaliveInterval = 10 * time.Millisecond; c.KeepaliveMax = 50 })
	cfg := clientConfig(t)
	cfg.KeepaliveInterval = 10 * time.Millisecond
	cfg.KeepaliveMax = 50 // tolerate a slow, loaded machine
	cl := dial(t, ts.addr, cfg)
	deadline := time.Now().Add(10 * time.Second)
	for cl.m.keepaliveReplies.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no keepalive replies")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Both sides answered each other's keepalives; the connection lives.
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("alive"))
}

// TestKeepaliveDeadPeer checks that unanswered keepalives close the
// connection: the peer completes the handshake, then stops reading.
func TestKeepaliveDeadPeer(t *testing.T) {
	ts := startServer(t, nil)
	proxyL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer proxyL.Close()
	freeze := make(chan struct{})
	go func() {
		c, err := proxyL.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		s, err := net.Dial("tcp", ts.addr)
		if err != nil {
			return
		}
		defer s.Close()
		go func() { _, _ = io.Copy(c, s) }()
		// Forward client to server until frozen; then swallow everything.
		buf := make([]byte, 32*1024)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			select {
			case <-freeze:
				continue
			default:
			}
			if _, err := s.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	cfg := clientConfig(t)
	cfg.KeepaliveInterval = 20 * time.Millisecond
	cfg.KeepaliveMax = 2
	cl := dial(t, proxyL.Addr().String(), cfg)
	close(freeze)
	done := make(chan error, 1)
	go func() { done <- cl.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("connection to a dead peer stayed open")
	}
}

// TestStrictKexRejectsEarlyMessages sends IGNORE before KEXINIT. With
// kex-strict-c the server must drop the connection (Terrapin
// countermeasure); without it the server proceeds.
func TestStrictKexRejectsEarlyMessages(t *testing.T) {
	ts := startServer(t, nil)
	for _, strict := range []bool{true, false} {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		pc := newPacketConn(c, rand.Reader)
		if _, _, err := exchangeVersions(pc, true); err != nil {
			t.Fatal(err)
		}
		kex := []string{KexCurve25519}
		if strict {
			kex = append(kex, strictKexC)
		}
		m := &kexInitMsg{KexAlgos: kex, HostKeyAlgos: []string{KeyAlgoED25519}, CiphersCS: []string{CipherAES128CTR}, CiphersSC: []string{CipherAES128CTR},
			MACsCS: []string{MACHMACSHA256}, MACsSC: []string{MACHMACSHA256}, CompCS: []string{"none"}, CompSC: []string{"none"}}
		if err := pc.writePacket(newBuilder(msgIgnore).text("x").b); err != nil {
			t.Fatal(err)
		}
		if err := pc.writePacket(m.marshal()); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		// The server's KEXINIT arrives first either way.
		p, err := pc.readPacket()
		if err != nil || p[0] != msgKexInit {
			t.Fatalf("strict=%v: server KEXINIT: %v", strict, err)
		}
		priv, _ := ecdh.X25519().GenerateKey(rand.Reader)
		if err := pc.writePacket(newBuilder(msgKexECDHInit).string(priv.PublicKey().Bytes()).b); err != nil {
			t.Fatal(err)
		}
		p, err = pc.readPacket()
		gotReply := err == nil && p[0] == msgKexECDHReply
		if strict == gotReply {
			t.Fatalf("strict=%v: got key exchange reply=%v (err %v)", strict, gotReply, err)
		}
	}
}

// TestFirstKexPacketFollows checks RFC 4253 section 7: after a KEXINIT with
// first_kex_packet_follows, a wrongly guessed packet is ignored and a
// correctly guessed one is used.
func TestFirstKexPacketFollows(t *testing.T) {
	ts := startServer(t, nil)
	for _, wrongGuess := range []bool{true, false} {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		pc := newPacketConn(c, rand.Reader)
		if _, _, err := exchangeVersions(pc, true); err != nil {
			t.Fatal(err)
		}
		kex := []string{KexCurve25519}
		if wrongGuess {
			kex = []string{"sntrup761x25519-sha512@openssh.com", KexCurve25519}
		}
		m := &kexInitMsg{KexAlgos: kex, HostKeyAlgos: []string{KeyAlgoED25519}, CiphersCS: []string{CipherAES128CTR}, CiphersSC: []string{CipherAES128CTR},
			MACsCS: []string{MACHMACSHA256}, MACsSC: []string{MACHMACSHA256}, CompCS: []string{"none"}, CompSC: []string{"none"}, FirstKexFollows: true}
		if err := pc.writePacket(m.marshal()); err != nil {
			t.Fatal(err)
		}
		priv, _ := ecdh.X25519().GenerateKey(rand.Reader)
		init := newBuilder(msgKexECDHInit).string(priv.PublicKey().Bytes()).b
		if wrongGuess {
			// The guessed packet for the other method; it must be ignored.
			if err := pc.writePacket(newBuilder(msgKexECDHInit).string([]byte("guess for another method")).b); err != nil {
				t.Fatal(err)
			}
		}
		if err := pc.writePacket(init); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if p, err := pc.readPacket(); err != nil || p[0] != msgKexInit {
			t.Fatalf("server KEXINIT: %v", err)
		}
		p, err := pc.readPacket()
		if err != nil || p[0] != msgKexECDHReply {
			t.Fatalf("wrongGuess=%v: no ECDH reply: %v", wrongGuess, err)
		}
	}
}
