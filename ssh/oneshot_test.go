package ssh

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// tapConn records the bytes a server reads and writes on its socket.
type tapConn struct {
	net.Conn
	mu      sync.Mutex
	in, out bytes.Buffer
}

func (c *tapConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	c.in.Write(b[:n])
	c.mu.Unlock()
	return n, err
}

func (c *tapConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.out.Write(b)
	c.mu.Unlock()
	return c.Conn.Write(b)
}

// wireMsg is one SSH packet of a cleartext ("none" cipher and MAC) stream.
type wireMsg struct {
	payload []byte
	size    int // on the wire: length field, padding length, payload, padding
}

// cleartextPackets splits a stream that uses the "none" cipher and MAC from
// its start (version line included) into its packets.
func cleartextPackets(t *testing.T, b []byte) []wireMsg {
	t.Helper()
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 || !bytes.HasPrefix(b, []byte("SSH-2.0-")) {
		t.Fatalf("stream does not start with a version line: %q", b[:min(len(b), 40)])
	}
	b = b[i+2:]
	var ms []wireMsg
	for len(b) > 0 {
		if len(b) < 6 {
			t.Fatalf("%d bytes left after %d packets", len(b), len(ms))
		}
		n := int(binary.BigEndian.Uint32(b))
		if n < 2 || 4+n > len(b) || int(b[4]) >= n {
			t.Fatalf("packet %d: bad length %d (pad %d, %d bytes left)", len(ms), n, b[4], len(b))
		}
		ms = append(ms, wireMsg{payload: b[5 : 4+n-int(b[4])], size: 4 + n})
		b = b[4+n:]
	}
	return ms
}

var msgNames = map[byte]string{
	msgDisconnect: "DISCONNECT", msgServiceRequest: "SERVICE_REQUEST", msgServiceAccept: "SERVICE_ACCEPT",
	msgExtInfo: "EXT_INFO", msgKexInit: "KEXINIT", msgNewKeys: "NEWKEYS", msgKexECDHInit: "KEX_ECDH_INIT",
	msgKexECDHReply: "KEX_ECDH_REPLY", msgUserAuthRequest: "USERAUTH_REQUEST", msgUserAuthFailure: "USERAUTH_FAILURE",
	msgUserAuthSuccess: "USERAUTH_SUCCESS", msgUserAuthPubKeyOK: "USERAUTH_PK_OK", msgChannelOpen: "CHANNEL_OPEN",
	msgChannelOpenConfirm: "CHANNEL_OPEN_CONFIRMATION", msgChannelWindowAdjust: "CHANNEL_WINDOW_ADJUST",
	msgChannelData: "CHANNEL_DATA", msgChannelEOF: "CHANNEL_EOF", msgChannelClose: "CHANNEL_CLOSE",
	msgChannelRequest: "CHANNEL_REQUEST", msgChannelSuccess: "CHANNEL_SUCCESS",
}

func msgList(ms []wireMsg) string {
	var s []string
	for _, m := range ms {
		n := msgNames[m.payload[0]]
		if n == "" {
			n = fmt.Sprint(m.payload[0])
		}
		s = append(s, n)
	}
	return strings.Join(s, " ")
}

// oneShot runs a one-shot session over a real socket, as `tsnmp get` over
// ssh: does (key exchange, public key authentication, the snmp subsystem,
// one message each way, close), with the "none" cipher and MAC so that
// every packet can be read, and returns what the server read and wrote.
func oneShot(t *testing.T, kex []string) (fromClient, fromServer []wireMsg) {
	t.Helper()
	k := keys(t)
	ts := startServer(t, func(c *ServerConfig) {
		c.HostKeys = []Signer{k["ed25519"]}
		c.AllowNone, c.Ciphers, c.MACs = true, []string{CipherNone}, []string{MACNone}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tap := make(chan *tapConn, 1)
	served := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		tc := &tapConn{Conn: c}
		tap <- tc
		served <- ts.srv.ServeConn(tc)
	}()
	cfg := clientConfig(t)
	cfg.AllowNone, cfg.Ciphers, cfg.MACs, cfg.KeyExchanges = true, []string{CipherNone}, []string{MACNone}, kex
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, "tcp", l.Addr().String(), cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	ch, err := c.Subsystem("snmp")
	if err != nil {
		t.Fatalf("subsystem: %v", err)
	}
	roundTrip(t, ch, bytes.Repeat([]byte{0x30}, 69)) // the size of a get of sysDescr.0
	if err := ch.Close(); err != nil {
		t.Fatalf("closing the channel: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("closing the connection: %v", err)
	}
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not end the connection within 10 s of the client's close")
	}
	tc := <-tap
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return cleartextPackets(t, tc.in.Bytes()), cleartextPackets(t, tc.out.Bytes())
}

// TestOneShotMessages checks the messages of a one-shot session, each
// side's, and the sizes of the key shares: what a full `tsnmp get` over
// ssh: sends (docs/ssh.md, "Bytes of a one-shot session"). A message
// more (a repeated one, an extra round trip, a reply to the peer's
// DISCONNECT) or a larger key share shows here.
func TestOneShotMessages(t *testing.T) {
	wantClient := "KEXINIT KEX_ECDH_INIT NEWKEYS SERVICE_REQUEST USERAUTH_REQUEST USERAUTH_REQUEST USERAUTH_REQUEST " +
		"CHANNEL_OPEN CHANNEL_REQUEST CHANNEL_DATA CHANNEL_CLOSE DISCONNECT"
	// The server says nothing after the client's DISCONNECT (RFC 4253
	// section 11.1: the client accepts no data after it).
	wantServer := "KEXINIT KEX_ECDH_REPLY NEWKEYS EXT_INFO SERVICE_ACCEPT USERAUTH_FAILURE USERAUTH_PK_OK USERAUTH_SUCCESS " +
		"CHANNEL_OPEN_CONFIRMATION CHANNEL_SUCCESS CHANNEL_DATA CHANNEL_CLOSE"
	for _, tc := range []struct {
		kex                      []string
		want                     string
		clientShare, serverShare int
	}{
		// ML-KEM-768 encapsulation key (1,184) and ciphertext (1,088),
		// each with an X25519 share (32).
		{nil, KexMLKEM768X25519, 1184 + 32, 1088 + 32},
		{[]string{KexCurve25519}, KexCurve25519, 32, 32},
	} {
		t.Run(tc.want, func(t *testing.T) {
			cli, srv := oneShot(t, tc.kex)
			if got := msgList(cli); got != wantClient {
				t.Errorf("the client sent\n\t%s\nwant\n\t%s", got, wantClient)
			}
			if got := msgList(srv); got != wantServer {
				t.Errorf("the server sent\n\t%s\nwant\n\t%s", got, wantServer)
			}
			if len(cli) < 2 || len(srv) < 2 {
				t.FailNow()
			}
			ci, err := parseKexInit(cli[0].payload)
			if err != nil {
				t.Fatal(err)
			}
			si, err := parseKexInit(srv[0].payload)
			if err != nil {
				t.Fatal(err)
			}
			algs, err := negotiateAlgorithms(ci, si)
			if err != nil {
				t.Fatal(err)
			}
			if algs.Kex != tc.want {
				t.Errorf("negotiated %s, want %s", algs.Kex, tc.want)
			}
			r := reader{b: cli[1].payload[1:]}
			if q := r.string(); r.err != nil || len(q) != tc.clientShare {
				t.Errorf("client key share of %d bytes, want %d (%v)", len(q), tc.clientShare, r.err)
			}
			r = reader{b: srv[1].payload[1:]}
			_ = r.string() // host key
			if q := r.string(); r.err != nil || len(q) != tc.serverShare {
				t.Errorf("server key share of %d bytes, want %d (%v)", len(q), tc.serverShare, r.err)
			}
			size := func(ms []wireMsg) (n int) {
				for _, m := range ms {
					n += m.size
				}
				return n
			}
			t.Logf("%s: client %d packets, %d bytes; server %d packets, %d bytes (none cipher, version lines left out)",
				tc.want, len(cli), size(cli), len(srv), size(srv))
			if !slices.ContainsFunc(srv, func(m wireMsg) bool { return m.payload[0] == msgExtInfo }) {
				t.Error("no EXT_INFO from the server")
			}
		})
	}
}
