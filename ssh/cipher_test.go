package ssh

import (
	"bytes"
	"crypto/rand"
	"testing"
)

func TestCipherRoundTripAndTamper(t *testing.T) {
	macs := SupportedMACs()
	for _, name := range SupportedCiphers() {
		for _, mac := range macs {
			if cipherModes[name].aead && mac != macs[0] {
				continue // the MAC is not used
			}
			t.Run(name+"/"+mac, func(t *testing.T) {
				cm, mm := cipherModes[name], macModes[mac]
				key, iv, mk := make([]byte, cm.keySize), make([]byte, cm.ivSize), make([]byte, mm.keySize)
				rand.Read(key)
				rand.Read(iv)
				rand.Read(mk)
				w, _ := cm.create(key, iv, mm, mk)
				r, _ := cm.create(key, iv, mm, mk)
				var buf bytes.Buffer
				msgs := [][]byte{{msgIgnore}, bytes.Repeat([]byte{7}, 1000), bytes.Repeat([]byte{8}, 33)}
				firstLen := 0
				for i, m := range msgs {
					if err := w.writePacket(uint32(i), &buf, rand.Reader, m); err != nil {
						t.Fatal(err)
					}
					if i == 0 {
						firstLen = buf.Len()
					}
				}
				wire := bytes.Clone(buf.Bytes())
				for i, m := range msgs {
					got, err := r.readPacket(uint32(i), &buf)
					if err != nil || !bytes.Equal(got, m) {
						t.Fatalf("packet %d: %v", i, err)
					}
				}
				// Any flipped bit in the first packet must be detected.
				for pos := 0; pos < firstLen; pos++ {
					r2, _ := cm.create(key, iv, mm, mk)
					bad := bytes.Clone(wire[:firstLen])
					bad[pos] ^= 0x10
					if _, err := r2.readPacket(0, bytes.NewReader(bad)); err == nil {
						t.Fatalf("flipped byte %d accepted", pos)
					}
				}
				// A wrong sequence number fails too (replay/reorder).
				r3, _ := cm.create(key, iv, mm, mk)
				if _, err := r3.readPacket(5, bytes.NewReader(wire)); err == nil && !cm.aead {
					t.Fatal("wrong sequence number accepted")
				}
			})
		}
	}
}

func TestNoneCipherNeedsBothSides(t *testing.T) {
	only := func(c *Config) { c.AllowNone, c.Ciphers, c.MACs = true, []string{CipherNone}, []string{MACNone} }
	ts := startServer(t, func(c *ServerConfig) { only(&c.Config) })
	cfg := clientConfig(t)
	only(&cfg.Config)
	cl := dial(t, ts.addr, cfg)
	if a := cl.Algorithms(); a.CipherCS != CipherNone || a.MACCS != MACNone {
		t.Fatalf("negotiated %+v", a)
	}
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, ch, []byte("plain"))

	// Without AllowNone on the client, "none" is never offered.
	cfg2 := clientConfig(t)
	cfg2.Ciphers, cfg2.MACs = []string{CipherNone}, []string{MACNone}
	if _, err := Dial(t.Context(), "tcp", ts.addr, cfg2); err == nil {
		t.Fatal("none negotiated without AllowNone")
	}
	if got := (&Config{Ciphers: []string{CipherNone, CipherAES128CTR}}).ciphers(); len(got) != 1 || got[0] != CipherAES128CTR {
		t.Fatalf("ciphers() = %v", got)
	}
}
