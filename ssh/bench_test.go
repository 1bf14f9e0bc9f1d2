package ssh

import (
	"bytes"
	"crypto/rand"
	"io"
	"testing"
)

// BenchmarkCipher measures sealing and opening 32 KiB packets in memory.
func BenchmarkCipher(b *testing.B) {
	payload := make([]byte, maxDataChunk)
	for _, name := range append(SupportedCiphers(), CipherNone) {
		macs := []string{MACHMACSHA256ETM, MACHMACSHA256, MACHMACSHA512ETM}
		if cipherModes[name].aead {
			macs = macs[:1]
		}
		for _, mac := range macs {
			label := name
			if !cipherModes[name].aead {
				label += "/" + mac
			}
			b.Run(label, func(b *testing.B) {
				cm, mm := cipherModes[name], macModes[mac]
				key, iv, mk := make([]byte, cm.keySize), make([]byte, cm.ivSize), make([]byte, mm.keySize)
				w, _ := cm.create(key, iv, mm, mk)
				r, _ := cm.create(key, iv, mm, mk)
				var buf bytes.Buffer
				b.SetBytes(int64(len(payload)))
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					buf.Reset()
					if err := w.writePacket(uint32(i), &buf, rand.Reader, payload); err != nil {
						b.Fatal(err)
					}
					if _, err := r.readPacket(uint32(i), &buf); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// sink reads a subsystem channel to EOF and answers with one byte.
func sink(_ string, ch io.ReadWriteCloser) {
	_, _ = io.Copy(io.Discard, ch)
	_, _ = ch.Write([]byte{1})
}

// BenchmarkThroughput sends 4 MiB per iteration through a subsystem over
// loopback TCP, client to server, per cipher.
func BenchmarkThroughput(b *testing.B) {
	ciphers := append(SupportedCiphers(), CipherNone)
	ts := startServer(b, func(c *ServerConfig) {
		c.AllowNone = true
		c.Ciphers = ciphers
		c.MACs = []string{MACHMACSHA256ETM, MACNone}
		c.Subsystems["sink"] = sink
	})
	chunk := make([]byte, 4<<20)
	for _, name := range ciphers {
		b.Run(name, func(b *testing.B) {
			cfg := clientConfig(b)
			cfg.Ciphers = []string{name}
			cfg.MACs = []string{MACHMACSHA256ETM}
			if name == CipherNone {
				cfg.AllowNone, cfg.MACs = true, []string{MACNone}
			}
			cl := dial(b, ts.addr, cfg)
			ch, err := cl.Subsystem("sink")
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(chunk)))
			for b.Loop() {
				if _, err := ch.Write(chunk); err != nil {
					b.Fatal(err)
				}
			}
			ch.(*channel).CloseWrite()
			if _, err := io.ReadFull(ch, make([]byte, 1)); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkConnect measures connection setup (handshake, authentication,
// subsystem round trip) with a full key exchange and with resumption.
func BenchmarkConnect(b *testing.B) {
	for _, kex := range []string{KexMLKEM768X25519, KexCurve25519, KexECDHP256, KexDHGroup14SHA256} {
		b.Run("full/"+kex, func(b *testing.B) {
			ts := startServer(b, nil)
			cfg := clientConfig(b)
			cfg.KeyExchanges = []string{kex}
			for b.Loop() {
				connectOnce(b, ts.addr, cfg)
			}
		})
	}
	for _, mode := range []string{KexResumeTicket, KexResumeServer} {
		b.Run("resume/"+mode, func(b *testing.B) {
			ts := startServer(b, func(c *ServerConfig) {
				c.Resumption = &ResumptionConfig{Tickets: mode == KexResumeTicket, ServerCache: mode == KexResumeServer}
			})
			cfg := clientConfig(b)
			cfg.Resumption = true
			state := connectOnce(b, ts.addr, cfg)
			for b.Loop() {
				c := *cfg
				c.ResumptionState = state
				state = connectOnce(b, ts.addr, &c)
			}
		})
	}
}

func connectOnce(b *testing.B, addr string, cfg *ClientConfig) []byte {
	cl, err := Dial(b.Context(), "tcp", addr, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if len(cfg.ResumptionState) > 0 && !cl.Resumed() {
		b.Fatal("not resumed")
	}
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		b.Fatal(err)
	}
	msg := []byte("get sysDescr.0")
	if _, err := ch.Write(msg); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(ch, make([]byte, len(msg))); err != nil {
		b.Fatal(err)
	}
	st := cl.ResumptionState()
	cl.Close()
	return st
}
