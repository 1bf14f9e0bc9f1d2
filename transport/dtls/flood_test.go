package dtls

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/dtls/v3/pkg/crypto/elliptic"
	"github.com/pion/dtls/v3/pkg/crypto/hash"
	"github.com/pion/dtls/v3/pkg/crypto/signature"
	"github.com/pion/dtls/v3/pkg/crypto/signaturehash"
	"github.com/pion/dtls/v3/pkg/protocol"
	"github.com/pion/dtls/v3/pkg/protocol/extension"
	hsk "github.com/pion/dtls/v3/pkg/protocol/handshake"
	"github.com/pion/dtls/v3/pkg/protocol/recordlayer"
	"github.com/tsnmp/tsnmp/internal/connset/floodtest"
)

// clientHello is a DTLS 1.2 ClientHello record that tsnmpd's listener
// accepts (ECDHE suites, extended master secret); the one that answers
// the HelloVerifyRequest repeats the first with the cookie.
func clientHello(t testing.TB, random hsk.Random, seq uint16, cookie []byte) []byte {
	return clientHelloRec(t, random, seq, uint64(seq), cookie)
}

// clientHelloRec is clientHello with a record sequence number of its own.
func clientHelloRec(t testing.TB, random hsk.Random, seq uint16, recSeq uint64, cookie []byte) []byte {
	ch := &hsk.MessageClientHello{
		Version:            protocol.Version1_2,
		Random:             random,
		Cookie:             cookie,
		SessionID:          []byte{},
		CipherSuiteIDs:     []uint16{0xc02b, 0xc02f}, // ECDHE_{ECDSA,RSA}_WITH_AES_128_GCM_SHA256
		CompressionMethods: []*protocol.CompressionMethod{{}},
		Extensions: []extension.Extension{
			&extension.SupportedEllipticCurves{EllipticCurves: []elliptic.Curve{elliptic.X25519, elliptic.P256}},
			&extension.SupportedPointFormats{PointFormats: []elliptic.CurvePointFormat{elliptic.CurvePointFormatUncompressed}},
			&extension.SupportedSignatureAlgorithms{SignatureHashAlgorithms: []signaturehash.Algorithm{
				{Hash: hash.SHA256, Signature: signature.ECDSA}, {Hash: hash.SHA256, Signature: signature.RSA},
			}},
			&extension.UseExtendedMasterSecret{Supported: true},
		},
	}
	r := &recordlayer.RecordLayer{
		Header:  recordlayer.Header{Version: protocol.Version1_0, SequenceNumber: recSeq},
		Content: &hsk.Handshake{Header: hsk.Header{MessageSequence: seq}, Message: ch},
	}
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// handshakeType returns the type of the first handshake message in a
// datagram (0 if it holds none).
func handshakeType(b []byte) hsk.Type {
	if len(b) < recordlayer.FixedHeaderSize+1 || protocol.ContentType(b[0]) != protocol.ContentTypeHandshake {
		return 0
	}
	return hsk.Type(b[recordlayer.FixedHeaderSize])
}

// abandon runs a handshake from a new port of 127.0.0.2 up to the
// agent's ServerHello, past the cookie exchange, and leaves it there. It
// reports whether the agent got that far.
func abandon(t testing.TB, agent *net.UDPAddr) (bool, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(floodtest.Flooder)})
	if err != nil {
		return false, err
	}
	defer c.Close()
	buf := make([]byte, 4096)
	read := func() ([]byte, error) {
		c.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
		n, _, err := c.ReadFromUDP(buf)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, nil // refused: no answer
		}
		return buf[:n], err
	}
	var random hsk.Random
	if err := random.Populate(); err != nil {
		return false, err
	}
	if _, err := c.WriteToUDP(clientHello(t, random, 0, nil), agent); err != nil {
		return false, err
	}
	b, err := read()
	if b == nil || err != nil {
		return false, err
	}
	if protocol.ContentType(b[0]) == protocol.ContentTypeAlert {
		return false, nil // refused, with an alert
	}
	if handshakeType(b) == hsk.TypeServerHello {
		// The port was one an earlier abandoned handshake used, and its
		// association answered: a handshake in progress all the same.
		return true, nil
	}
	if handshakeType(b) != hsk.TypeHelloVerifyRequest {
		return false, fmt.Errorf("no HelloVerifyRequest: record type %d, handshake type %d", b[0], handshakeType(b))
	}
	var hvr hsk.MessageHelloVerifyRequest
	if err := hvr.Unmarshal(b[recordlayer.FixedHeaderSize+hsk.HeaderLength:]); err != nil {
		return false, err
	}
	if _, err := c.WriteToUDP(clientHello(t, random, 1, hvr.Cookie), agent); err != nil {
		return false, err
	}
	b, err = read()
	if b == nil || err != nil {
		return false, err
	}
	return handshakeType(b) == hsk.TypeServerHello, nil
}

// TestAbandonedHandshakes: 1,100 handshakes abandoned right after the
// cookie exchange, from one source, used to take the listener's session
// places and lock real clients out for as long as each handshake may take
// (issue 14 item 9). Now they count against a smaller handshake budget,
// of which one source gets a share, and a real client at another address
// gets its session.
func TestAbandonedHandshakes(t *testing.T) {
	s := start(t, "udp", nil)
	agent := s.Addr().(*net.UDPAddr)
	const flood, workers = 1100, 64
	var next, past, refused atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(20 * time.Second)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= flood && time.Now().Before(deadline) {
				ok, err := abandon(t, agent)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					past.Add(1)
				} else {
					refused.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := past.Load() + refused.Load(); n < flood {
		t.Fatalf("only %d of %d handshakes tried in 20 s", n, flood)
	}
	t.Logf("%d handshakes past the cookie exchange and abandoned, %d refused; %+v", past.Load(), refused.Load(), s.ConnStats())
	if past.Load() == 0 {
		t.Fatal("no handshake got past the cookie exchange: the flood does not test what it should")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := testPKI(t)
	c, err := Dial(ctx, "udp", agent.String(), client(p, p.Carol), nil)
	if err != nil {
		t.Fatalf("client at 127.0.0.1 after %d abandoned handshakes from %s: %v", past.Load(), floodtest.Flooder, err)
	}
	defer c.Close()
	if n, err := ask(c); err != nil || n != "carol" {
		t.Fatalf("client at 127.0.0.1: %q %v", n, err)
	}
}
