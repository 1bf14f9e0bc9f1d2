package dtls

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/pion/dtls/v3"
	"github.com/pion/dtls/v3/pkg/crypto/ciphersuite"
	"github.com/pion/dtls/v3/pkg/protocol"
	"github.com/pion/dtls/v3/pkg/protocol/recordlayer"
)

// TestRecordSuites: every suite the listener negotiates is one the record
// layer serves (Listen refuses to open otherwise).
func TestRecordSuites(t *testing.T) {
	for _, id := range append(append([]dtls.CipherSuiteID(nil), certSuites...), pskSuites...) {
		if recordSuites[id] == nil {
			t.Errorf("%s is negotiated but not served by the record layer", dtls.CipherSuiteName(id))
		}
	}
}

// pionCipher is pion/dtls's own record protection for a suite, an
// independent implementation to check the record layer against.
type pionCipher interface {
	Encrypt(pkt *recordlayer.RecordLayer, raw []byte) ([]byte, error)
	Decrypt(h recordlayer.Header, in []byte) ([]byte, error)
}

func testProtections(t testing.TB, su *suite) (ours, theirs protection, pion pionCipher) {
	key := make([]byte, 2*su.keyLen+2*su.ivLen)
	rand.Read(key)
	k1, k2 := key[:su.keyLen], key[su.keyLen:2*su.keyLen]
	iv1, iv2 := key[2*su.keyLen:2*su.keyLen+su.ivLen], key[2*su.keyLen+su.ivLen:]
	var err error
	// pion's side writes with key 1 and reads with key 2.
	if su.explicit {
		pion, err = ciphersuite.NewGCM(k1, iv1, k2, iv2)
	} else {
		pion, err = ciphersuite.NewChaCha20Poly1305(k1, iv1, k2, iv2)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		p       *protection
		key, iv []byte
	}{{&ours, k2, iv2}, {&theirs, k1, iv1}} {
		if d.p.aead, err = su.aead(d.key); err != nil {
			t.Fatal(err)
		}
		copy(d.p.iv[:], d.iv)
		d.p.explicit = su.explicit
	}
	return ours, theirs, pion
}

func pionRecord(t testing.TB, pc pionCipher, epoch uint16, seq uint64, data []byte) []byte {
	pkt := &recordlayer.RecordLayer{
		Header:  recordlayer.Header{Version: protocol.Version1_2, Epoch: epoch, SequenceNumber: seq},
		Content: &protocol.ApplicationData{Data: data},
	}
	raw, err := pkt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, err := pc.Encrypt(pkt, raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordAgainstPion: records pion/dtls protects open here, records
// sealed here open in pion/dtls, for AES-128-GCM, AES-256-GCM and
// ChaCha20-Poly1305; a changed octet anywhere fails.
func TestRecordAgainstPion(t *testing.T) {
	for name, su := range map[string]*suite{"aes128gcm": aes128GCM, "aes256gcm": aes256GCM, "chacha20poly1305": chacha} {
		t.Run(name, func(t *testing.T) {
			ours, theirs, pc := testProtections(t, su)
			msg := []byte("\x30\x0b\x02\x01\x01\x04\x06public")
			// pion -> record layer (ours reads with pion's write key).
			ours, theirs = theirs, ours
			rec := pionRecord(t, pc, 1, 7, msg)
			r, rest, err := nextRecord(rec)
			if err != nil || len(rest) != 0 || r.typ != typeApplicationData || r.epoch() != 1 || r.seq() != 7 {
				t.Fatalf("header: %+v %d %v", r, len(rest), err)
			}
			plain, err := ours.open(&r)
			if err != nil || !bytes.Equal(plain, msg) {
				t.Fatalf("open: %q %v", plain, err)
			}
			for i := range pionRecord(t, pc, 1, 8, msg) {
				bad := pionRecord(t, pc, 1, 8, msg)
				bad[i] ^= 0x40
				r, _, err := nextRecord(bad)
				if err != nil {
					continue // the header no longer parses
				}
				if _, err := ours.open(&r); err == nil {
					t.Errorf("octet %d changed: the record still opens", i)
				}
			}
			// record layer -> pion (pion reads with theirs' key).
			b := append(make([]byte, theirs.prefix(), 200), msg...)
			sealed := theirs.seal(b, typeApplicationData, 1<<48|9)
			var h recordlayer.Header
			out, err := pc.Decrypt(h, sealed)
			if err != nil || !bytes.Equal(out[headerLen:], msg) {
				t.Fatalf("pion opens %q %v", out, err)
			}
		})
	}
}

// TestSealInPlace: seal works in place when the buffer has room for the
// tag, and copies when it has not.
func TestSealInPlace(t *testing.T) {
	ours, _, _ := testProtections(t, aes128GCM)
	msg := []byte("hello")
	roomy := append(make([]byte, ours.prefix(), 100), msg...)
	tight := append(make([]byte, ours.prefix()), msg...)
	tight = tight[:len(tight):len(tight)]
	for _, b := range [][]byte{roomy, tight} {
		rec := ours.seal(b, typeApplicationData, 1<<48|1)
		if len(rec) != ours.prefix()+len(msg)+tagLen || int(binary.BigEndian.Uint16(rec[11:])) != len(rec)-headerLen {
			t.Fatalf("record of %d octets, length field %d", len(rec), binary.BigEndian.Uint16(rec[11:]))
		}
		r, _, err := nextRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		if p, err := ours.open(&r); err != nil || !bytes.Equal(p, msg) {
			t.Fatalf("open: %q %v", p, err)
		}
	}
}

// TestReplayWindow follows RFC 6347 §4.1.2.6.
func TestReplayWindow(t *testing.T) {
	var w replayWindow
	steps := []struct {
		seq   uint64
		fresh bool
	}{
		{0, true}, {0, false}, {1, true}, {5, true}, {3, true}, {3, false}, {1, false},
		{100, true}, {36, false}, {37, true}, {37, false}, {99, true}, {100, false},
		{200, true}, {136, false}, {137, true}, {1 << 40, true}, {1<<40 - 63, true}, {1<<40 - 64, false},
	}
	for i, st := range steps {
		if got := w.fresh(st.seq); got != st.fresh {
			t.Fatalf("step %d: fresh(%d) = %v, want %v", i, st.seq, got, st.fresh)
		}
		if st.fresh {
			w.mark(st.seq)
		}
	}
}

// FuzzRecord feeds datagrams to the record decoder: splitting never
// panics or reads past a record, opening fails cleanly on anything not
// sealed with the key, and what seal makes opens again.
func FuzzRecord(f *testing.F) {
	ours, theirs, pc := testProtections(f, aes128GCM)
	good := pionRecord(f, pc, 1, 1, []byte("\x30\x00"))
	f.Add(good, []byte("\x30\x03\x02\x01\x00"))
	f.Add(append(append([]byte(nil), good...), good...), []byte{})
	f.Add([]byte{22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, []byte("x"))
	f.Add([]byte{23, 0xfe, 0xff, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0}, []byte("x"))
	f.Add([]byte{23, 0xfe, 0xfd, 0, 1, 0, 0, 0, 0, 0, 1, 0xff, 0xff}, []byte("x"))
	f.Add([]byte{21}, []byte(nil))
	f.Fuzz(func(t *testing.T, datagram, msg []byte) {
		b := datagram
		for len(b) > 0 {
			r, rest, err := nextRecord(b)
			if err != nil {
				break
			}
			if len(rest) >= len(b) || len(r.fragment) > maxFragment {
				t.Fatalf("record of %d octets, %d of %d left", len(r.fragment), len(rest), len(b))
			}
			b = rest
			theirs.open(&r) // may fail, must not panic
			ours.open(&r)
		}
		isClientHello(datagram)
		parseHello(datagram)
		if len(msg) > maxPlaintext {
			return
		}
		// Sealed and opened under one key, any message comes back.
		rec := ours.seal(append(make([]byte, ours.prefix()), msg...), typeApplicationData, 1<<48|42)
		r, rest, err := nextRecord(rec)
		if err != nil || len(rest) != 0 {
			t.Fatalf("sealed record does not split: %v", err)
		}
		p, err := ours.open(&r)
		if err != nil || !bytes.Equal(p, msg) {
			t.Fatalf("sealed record does not open: %q %v", p, err)
		}
	})
}
