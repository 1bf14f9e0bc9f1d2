package usm

import (
	"testing"

	"github.com/tsnmp/tsnmp/snmp"
)

func BenchmarkLocalizedKey(b *testing.B) {
	pw := []byte("benchmark-password")
	for _, p := range []PrivProtocol{PrivAES128, PrivAES256C} {
		b.Run("miss/SHA/"+p.String(), func(b *testing.B) {
			c := NewKeyCache(16)
			for b.Loop() {
				c.Purge()
				if _, err := c.LocalizedPrivKey(AuthSHA1, p, pw, agentEngineID); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("hit/SHA/"+p.String(), func(b *testing.B) {
			c := NewKeyCache(16)
			if _, err := c.LocalizedPrivKey(AuthSHA1, p, pw, agentEngineID); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := c.LocalizedPrivKey(AuthSHA1, p, pw, agentEngineID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("user/SHA/AES/new-engine", func(b *testing.B) {
		u := mustUser(b, "bench", AuthSHA1, PrivAES128, "benchmark-password", "benchmark-password")
		eid := []byte("engine-000")
		i := 0
		for b.Loop() {
			i++
			eid[9] = byte(i)
			eid[8] = byte(i >> 8)
			if _, err := u.Keys(eid); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// scoped100 returns a ScopedPDU of exactly 100 octets.
func scoped100(b testing.TB) []byte {
	for n := 0; n < 100; n++ {
		s := scoped(b, snmp.GetRequest, 1234, agentEngineID,
			snmp.VarBind{Name: snmp.MustParseOID("1.3.6.1.2.1.1.1.0"), Value: snmp.StringValue(string(make([]byte, n)))})
		if len(s) == 100 {
			return s
		}
	}
	b.Fatal("no 100-octet ScopedPDU")
	return nil
}

func BenchmarkProcessIncomingAuthPriv(b *testing.B) {
	agent, m := fuzzPair(b)
	pdu := scoped100(b)
	for _, name := range []string{"MD5-DES", "SHA-AES", "SHA-256-AES256", "SHA-512-AES256C"} {
		b.Run(name, func(b *testing.B) {
			msg, err := m.GenerateRequest(nil, hdr(7, snmp.AuthPriv, true), agentEngineID, name, pdu)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := agent.ProcessIncoming(nil, msg, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGenerateRequestAuthPriv(b *testing.B) {
	_, m := fuzzPair(b)
	pdu := scoped100(b)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.GenerateRequest(buf[:0], hdr(7, snmp.AuthPriv, true), agentEngineID, "SHA-AES", pdu); err != nil {
			b.Fatal(err)
		}
	}
}
