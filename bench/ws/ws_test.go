package ws

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

var (
	reportFile = flag.String("ws.report", "", "run the full experiment and write the text report to this file (and JSON beside it)")
)

func startSynthetic(tb testing.TB, rows int) *loopagent.Agent {
	tb.Helper()
	a, err := loopagent.Start(loopagent.Options{Rows: rows, NoTLS: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(a.Close)
	return a
}

// TestRunQuick runs every experiment on a few points and checks what the
// report must hold (sizes, not speeds).
func TestRunQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agents and a capture")
	}
	if testenv.InCI() {
		testenv.Need(t, "tcpdump")
	}
	var log bytes.Buffer
	// 110 objects: more than the 100 varbinds tsnmpd gives a community GetBulk over UDP by default.
	rep, err := Run(context.Background(), Options{Counts: []int{1, 22, 110}, RTTCounts: []int{1, 22}, Repeat: 2, Quick: true,
		Rows: 5, NoNetSNMP: !haveSnmpd(), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if testenv.InCI() && rep.IPMethod != "tcpdump on lo" {
		t.Errorf("IP-level bytes not captured: %s %v", rep.IPMethod, rep.Notes)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "capture saw") {
			t.Errorf("capture and client disagree: %s", n)
		}
	}
	if len(rep.Bandwidth) != 3 {
		t.Fatalf("%d bandwidth points", len(rep.Bandwidth))
	}
	for _, p := range rep.Bandwidth {
		for _, m := range Methods {
			b, ok := p.Bytes[m]
			if !ok || b.App <= 0 || b.IP <= b.App || b.Packets < 2 {
				t.Errorf("%d objects, %s: %+v", p.Objects, m, b)
			}
			if strings.HasPrefix(m, "SNMP") && b.IP != b.App+2*(ipv4Header+udpHeader) {
				t.Errorf("%d objects, %s: IP %d for app %d over UDP", p.Objects, m, b.IP, b.App)
			}
		}
		// Facts of the encodings, independent of the machine: GetBulk
		// names one OID where Get names them all, and SOAP is the
		// largest representation.
		if p.Objects > 1 && p.Bytes[SNMPGetBulk].App >= p.Bytes[SNMPGet].App {
			t.Errorf("%d objects: GetBulk %d >= Get %d", p.Objects, p.Bytes[SNMPGetBulk].App, p.Bytes[SNMPGet].App)
		}
		if p.Bytes[SOAP].App <= p.Bytes[JSON].App || p.Bytes[SOAP].App <= p.Bytes[SNMPGet].App {
			t.Errorf("%d objects: SOAP %d, JSON %d, Get %d", p.Objects, p.Bytes[SOAP].App, p.Bytes[JSON].App, p.Bytes[SNMPGet].App)
		}
		if p.Objects >= 100 && p.Bytes[JSONGzip].App >= p.Bytes[JSON].App {
			t.Errorf("%d objects: gzip does not shrink JSON", p.Objects)
		}
	}
	if len(rep.Coding) != 3 || len(rep.Retrieval) != 3 || len(rep.RoundTrip) != 2 || len(rep.Memory) == 0 {
		t.Errorf("report incomplete: %d coding, %d retrieval, %d rtt, %d memory", len(rep.Coding), len(rep.Retrieval), len(rep.RoundTrip), len(rep.Memory))
	}
	for _, p := range rep.RoundTrip {
		if len(p.Delay) < 5 {
			t.Errorf("%d objects: %d round-trip methods", p.Objects, len(p.Delay))
		}
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if _, err := rep.JSON(); err != nil {
		t.Fatal(err)
	}
	tables := rep.Tables()
	if len(tables) != 7 || len(rep.Method()) == 0 {
		t.Errorf("%d tables", len(tables))
	}
	for _, tb := range tables[:6] {
		for _, row := range tb.Rows {
			if len(row) != len(tb.Columns) {
				t.Errorf("%s: row %v for columns %v", tb.Title, row, tb.Columns)
			}
		}
	}
	t.Logf("\n%s", text.String())
}

func haveSnmpd() bool {
	if _, err := exec.LookPath("snmpd"); err == nil {
		return true
	}
	_, err := os.Stat("/usr/sbin/snmpd")
	return err == nil
}

// TestReport runs the full experiment when -ws.report is given; this is
// how docs/benchmarks.md's web-services figures are made.
func TestReport(t *testing.T) {
	if *reportFile == "" {
		t.Skip("give -ws.report FILE to run the full experiment")
	}
	bin := testenv.Build(t, "github.com/tsnmp/tsnmp/cmd/tsnmpd")
	rep, err := Run(context.Background(), Options{TsnmpdBinary: bin, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if err := os.WriteFile(*reportFile, text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	j, _ := rep.JSON()
	if err := os.WriteFile(strings.TrimSuffix(*reportFile, filepath.Ext(*reportFile))+".json", j, 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Print(text.String())
}

var benchCounts = []int{1, 22, 66, 216, 270, 500}

// BenchmarkCoding is Figure 13: decoding then encoding one message
// carrying n ifTable objects, and compressing its XML and JSON forms.
func BenchmarkCoding(b *testing.B) {
	a := startSynthetic(b, 23)
	for _, c := range Codecs {
		for _, n := range benchCounts {
			m, done, err := NewMessages(a, n)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%d", c, n), func(b *testing.B) {
				op := m.Op(c)
				b.ReportAllocs()
				for b.Loop() {
					op()
				}
			})
			done()
		}
	}
}

// BenchmarkServe is the whole agent-side cost of one request for n
// objects (Table I's dynamic memory is its B/op): SNMP GetBulk through
// the agent, and each HTTP representation through the handler.
func BenchmarkServe(b *testing.B) {
	a := startSynthetic(b, 23)
	for _, n := range []int{1, 22, 66, 270} {
		b.Run(fmt.Sprintf("SNMP-GetBulk/%d", n), func(b *testing.B) {
			op := ServeSNMPOp(a, n)
			b.ReportAllocs()
			for b.Loop() {
				op()
			}
		})
		for _, m := range []string{SOAP, SOAPGzip, XML, JSON, JSONGzip, JSONZstd} {
			b.Run(fmt.Sprintf("%s/%d", m, n), func(b *testing.B) {
				op := ServeHTTPOp(a, m, n)
				b.ReportAllocs()
				for b.Loop() {
					op()
				}
			})
		}
	}
}
