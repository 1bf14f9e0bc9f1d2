package main

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/notify/trapdtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// BenchmarkTrapReceive sends SNMPv2c traps over UDP to tsnmp trapd and to
// Net-SNMP's snmptrapd (both logging in snmptrapd's format) and reports
// how many each logs per second. At most 64 traps are outstanding (sent,
// not yet logged), so that no socket buffer overflows and every trap is
// accounted for: the benchmark fails if one is lost.
//
//	go test -run XXX -bench TrapReceive -benchtime 20000x ./cmd/tsnmp
func BenchmarkTrapReceive(b *testing.B) {
	m := snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.SNMPv2Trap, RequestID: 1,
		VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}, Value: snmp.TimeTicksValue(4242)},
			{Name: snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 3})},
			{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 2}, Value: snmp.IntegerValue(2)},
			{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 8, 2}, Value: snmp.IntegerValue(2)}}}}
	msg := snmp.AppendMessage(nil, &m)
	run := func(b *testing.B, addr string, logged func() int) {
		c, err := net.Dial("udp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		base := logged()
		b.ResetTimer()
		sent := 0
		deadline := time.Now().Add(time.Minute)
		for sent < b.N {
			if sent-(logged()-base) >= 64 {
				if time.Now().After(deadline) {
					b.Fatalf("%d of %d traps logged", logged()-base, sent)
				}
				time.Sleep(50 * time.Microsecond)
				continue
			}
			if _, err := c.Write(msg); err != nil {
				b.Fatal(err)
			}
			sent++
		}
		for logged()-base < b.N {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d traps logged", logged()-base, b.N)
			}
			time.Sleep(50 * time.Microsecond)
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "traps/s")
	}
	b.Run("tsnmp-trapd", func(b *testing.B) {
		d := startTrapd(b, "authCommunity log public\n")
		run(b, "127.0.0.1:"+strconv.Itoa(d.port), func() int { return d.out.Lines() / 2 })
	})
	b.Run("snmptrapd", func(b *testing.B) {
		d := trapdtest.Start(b, trapdtest.Debian, "authCommunity log public\n", "udp")
		run(b, "127.0.0.1:"+strconv.Itoa(d.Port), func() int { return (d.Lines() - 1) / 2 }) // less the version line
	})
}
