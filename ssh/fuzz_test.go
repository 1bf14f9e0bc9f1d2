package ssh

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// FuzzKexInit checks that KEXINIT parsing never panics and that anything
// it accepts survives a marshal/parse round trip.
func FuzzKexInit(f *testing.F) {
	f.Add((&kexInitMsg{KexAlgos: []string{KexCurve25519, strictKexC}, HostKeyAlgos: []string{KeyAlgoED25519}}).marshal())
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseKexInit(data)
		if err != nil {
			return
		}
		m2, err := parseKexInit(m.marshal())
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if !bytes.Equal(m.marshal(), m2.marshal()) {
			t.Fatal("round trip changed the message")
		}
		if _, err := negotiateAlgorithms(m, m2); err != nil {
			return
		}
	})
}

// FuzzUserAuth feeds user authentication messages to the parsers and to
// the server's request checker.
func FuzzUserAuth(f *testing.F) {
	pub := keys(f)["user"].PublicKey()
	f.Add((&userAuthRequestMsg{User: "alice", Service: "ssh-connection", Method: "none"}).marshal())
	f.Add((&userAuthRequestMsg{User: "alice", Service: "ssh-connection", Method: "publickey",
		Payload: (&builder{}).bool(false).text(KeyAlgoED25519).string(pub).b}).marshal())
	f.Add((&userAuthRequestMsg{User: "alice", Service: "ssh-connection", Method: "publickey",
		Payload: (&builder{}).bool(true).text(KeyAlgoED25519).string(pub).string([]byte("sig")).b}).marshal())
	f.Add((&userAuthRequestMsg{User: "bob", Service: "ssh-connection", Method: "password",
		Payload: (&builder{}).bool(false).text("pw").b}).marshal())
	f.Add(newBuilder(msgUserAuthFailure).nameList([]string{"publickey", "password"}).bool(false).b)
	hash := "$2a$04$abcdefghijklmnopqrstuuJ8tGZ4O0aE6qF3Ywb/m7TvK3qPq6D1e"
	srv := &Server{cfg: ServerConfig{PasswordHashes: map[string]string{"bob": hash}}}
	tr := &transport{sessionID: []byte("session")}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = parseUserAuthFailure(append([]byte{msgUserAuthFailure}, data...))
		req, err := parseUserAuthRequest(data)
		if err != nil {
			return
		}
		if req.Method == "password" {
			return // bcrypt is too slow for fuzzing; the parser is covered below
		}
		_, _ = parsePasswordAuth(req.Payload)
		ok, _, _ := srv.checkAuth(tr, req)
		if ok {
			t.Fatal("unauthorised request accepted")
		}
	})
}

// pipeTransport returns a transport whose writes are discarded.
func pipeTransport(tb testing.TB) *transport {
	a, b := net.Pipe()
	go func() { _, _ = io.Copy(io.Discard, b) }()
	tb.Cleanup(func() { a.Close(); b.Close() })
	t := newTransport(a, &Config{}, false)
	t.lastKex = time.Now()
	return t
}

// splitPackets cuts fuzz input into packets: each is a one-byte length
// followed by that many bytes.
func splitPackets(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		n := int(data[0])
		data = data[1:]
		if n > len(data) {
			n = len(data)
		}
		if n > 0 {
			out = append(out, data[:n])
		}
		data = data[n:]
	}
	return out
}

// FuzzChannelMessages dispatches arbitrary connection-protocol messages to
// a server mux holding one open channel.
func FuzzChannelMessages(f *testing.F) {
	seeds := [][]byte{
		newBuilder(msgChannelData).uint32(0).string([]byte("hello")).b,
		newBuilder(msgChannelWindowAdjust).uint32(0).uint32(1000).b,
		newBuilder(msgChannelRequest).uint32(0).text("subsystem").bool(true).text("snmp").b,
		newBuilder(msgChannelRequest).uint32(0).text("exit-status").bool(false).uint32(0).b,
		newBuilder(msgChannelOpen).text("session").uint32(7).uint32(1 << 20).uint32(32768).b,
		newBuilder(msgChannelOpenConfirm).uint32(0).uint32(3).uint32(100).uint32(100).b,
		newBuilder(msgChannelEOF).uint32(0).b,
		newBuilder(msgChannelClose).uint32(0).b,
		newBuilder(msgGlobalRequest).text("keepalive@openssh.com").bool(true).b,
		newBuilder(msgChannelExtendedData).uint32(0).uint32(1).string([]byte("err")).b,
	}
	var all []byte
	for _, s := range seeds {
		f.Add(append([]byte{byte(len(s))}, s...))
		all = append(all, byte(len(s)))
		all = append(all, s...)
	}
	f.Add(all)
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runChannelMessages(t, data)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("hung:\n%s", buf[:runtime.Stack(buf, true)])
		}
	})
}

func runChannelMessages(t *testing.T, data []byte) {
	m := newMux(pipeTransport(t), false)
	m.maxChannels = 4
	m.onSubsys = func(name string, ch *channel) func() {
		if name != "snmp" {
			return nil
		}
		return func() {}
	}
	m.mu.Lock()
	ch := m.newChannelLocked()
	ch.opened, ch.remoteWin, ch.remoteMax = true, 1<<20, 32768
	m.mu.Unlock()
	for _, p := range splitPackets(data) {
		if err := m.dispatch(p); err != nil {
			break
		}
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if len(ch.buf) > channelWindow {
		t.Error("buffered more than the window")
	}
}

// FuzzPacketDecode feeds raw bytes to every cipher's packet decoder with
// fixed keys; it must reject garbage without panicking.
func FuzzPacketDecode(f *testing.F) {
	names := append(SupportedCiphers(), CipherNone)
	for i, name := range names {
		// Seed each cipher with a valid packet.
		c := testCipher(name)
		var buf bytes.Buffer
		_ = c.writePacket(0, &buf, rand.Reader, []byte{msgIgnore, 1, 2, 3})
		f.Add(byte(i), buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		name := names[int(which)%len(names)]
		p, err := testCipher(name).readPacket(0, bytes.NewReader(data))
		if err == nil && len(p) == 0 {
			t.Fatal("empty payload accepted")
		}
	})
}

func testCipher(name string) packetCipher {
	cm := cipherModes[name]
	key := bytes.Repeat([]byte{1}, cm.keySize)
	iv := bytes.Repeat([]byte{2}, cm.ivSize)
	mm := macModes[MACHMACSHA256]
	if name == CipherNone {
		mm = macModes[MACNone]
	}
	c, err := cm.create(key, iv, mm, bytes.Repeat([]byte{3}, mm.keySize))
	if err != nil {
		panic(err)
	}
	return c
}

// FuzzResumption checks the state blob parser and the ticket opener.
func FuzzResumption(f *testing.F) {
	r := newResumption(ResumptionConfig{Tickets: true}, rand.Reader)
	ticket, _, _ := r.issueTicket(bytes.Repeat([]byte{9}, 32), "alice", time.Time{})
	st := &clientResumeState{Mode: KexResumeTicket, Blob: ticket, Secret: bytes.Repeat([]byte{9}, 32), Expiry: time.Now(), HostKey: []byte("k"), User: "alice"}
	f.Add(st.marshal())
	f.Add(ticket)
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], 1)
	f.Add(ts[:])
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := parseClientResumeState(data); err == nil {
			if !bytes.Equal(s.marshal(), data) {
				t.Fatal("state round trip changed the blob")
			}
		}
		if _, _, _, _, ok := r.openTicket(data, time.Now()); ok && !bytes.Equal(data, ticket) {
			t.Fatal("forged ticket accepted")
		}
	})
}

// FuzzVerifySignature feeds arbitrary keys and signatures to the host key
// and user key signature verifier; nothing may verify by accident.
func FuzzVerifySignature(f *testing.F) {
	data := []byte("exchange hash")
	for _, name := range []string{"ed25519", "ecdsa", "rsa"} {
		s := keys(f)[name]
		algo := s.Algorithms()[0]
		sig, err := s.Sign(rand.Reader, data, algo)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s.PublicKey(), uint8(0), sig)
	}
	algos := defaultHostKeyAlgos
	f.Fuzz(func(t *testing.T, pub []byte, which uint8, sig []byte) {
		algo := algos[int(which)%len(algos)]
		if verifySignature(pub, algo, data[:len(data)-1], sig) == nil {
			t.Fatal("signature over different data verified")
		}
		_ = verifySignature(pub, algo, data, sig)
	})
}
