package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// echoAgent answers every request with a Response carrying the
// request's variable bindings, over UDP and over TCP, and keeps what it
// received: what a command sent, byte for byte, whatever the objects
// are, and from where.
type echoAgent struct {
	conn *net.UDPConn
	ln   *net.TCPListener
	mu   sync.Mutex
	last echoed
}

// echoed is one request an echoAgent received.
type echoed struct {
	network   string
	from      net.Addr
	version   snmp.Version
	community string
	id        int32
	varbinds  []byte // their encoding
}

func startEchoAgent(t *testing.T) *echoAgent {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	e := &echoAgent{conn: c, ln: ln}
	var wg sync.WaitGroup
	t.Cleanup(func() { c.Close(); ln.Close(); wg.Wait() })
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if reply := e.answer("udp", from, buf[:n]); reply != nil {
				c.WriteToUDP(reply, from)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(time.Minute))
				for {
					msg, err := readBERMessage(conn)
					if err != nil {
						return
					}
					if reply := e.answer("tcp", conn.RemoteAddr(), msg); reply != nil {
						conn.Write(reply)
					}
				}
			}()
		}
	}()
	return e
}

// answer records a community-based request and returns its echo.
func (e *echoAgent) answer(network string, from net.Addr, b []byte) []byte {
	var m snmp.Message
	if m.Unmarshal(b) != nil {
		return nil
	}
	var vbs []byte
	for i := range m.PDU.VarBinds {
		vbs = snmp.AppendVarBind(vbs, &m.PDU.VarBinds[i])
	}
	e.mu.Lock()
	e.last = echoed{network, from, m.Version, string(m.Community), m.PDU.RequestID, vbs}
	e.mu.Unlock()
	m.PDU.Type = snmp.Response
	return snmp.AppendMessage(nil, &m)
}

// readBERMessage reads one BER-framed message from a stream.
func readBERMessage(r io.Reader) ([]byte, error) {
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	n := int(hdr[1])
	if hdr[1]&0x80 != 0 {
		k := int(hdr[1] & 0x7f)
		if k == 0 || k > 3 {
			return nil, errors.New("bad length")
		}
		l := make([]byte, k)
		if _, err := io.ReadFull(r, l); err != nil {
			return nil, err
		}
		hdr = append(hdr, l...)
		n = 0
		for _, c := range l {
			n = n<<8 | int(c)
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return append(hdr, body...), nil
}

// take returns the last request and forgets it.
func (e *echoAgent) take() echoed {
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.last
	e.last = echoed{}
	return l
}

// waitTake is take, after waiting up to a few seconds for a request
// when one is expected (a trap is not answered, so the command may end
// before the agent has read it).
func (e *echoAgent) waitTake(expect bool) echoed {
	for i := 0; expect && i < 100; i++ {
		e.mu.Lock()
		got := e.last.network != ""
		e.mu.Unlock()
		if got {
			break
		}
		time.Sleep(30 * time.Millisecond)
	}
	return e.take()
}

// udpAddr and tcpAddr are the agent's addresses, without a domain.
func (e *echoAgent) udpAddr() string { return e.conn.LocalAddr().String() }
func (e *echoAgent) tcpAddr() string { return e.ln.Addr().String() }

// TestSetChecksLikeSnmpset gives snmpset and tsnmp set the same values
// for objects with ranges, sizes, enumerations and DISPLAY-HINTs, with
// and without -Ir and -Ih, and requires the same messages, exit codes
// and, where a request goes out, the same bytes on the wire.
func TestSetChecksLikeSnmpset(t *testing.T) {
	t.Parallel()
	e := startEchoAgent(t)
	target := []string{"-v2c", "-c", "private", "-t", "2", "-r", "0", e.udpAddr()}
	long := strings.Repeat("x", 300)
	for _, tc := range [][]string{
		// Sizes (DisplayString has a DISPLAY-HINT, TAddress none).
		{"sysContact.0", "s", long},
		{"sysContact.0", "s", "ops@example.net"},
		{"sysContact.0", "s", ""},
		{"sysContact.0", "x", strings.Repeat("41", 256)},
		{"ifAlias.1", "s", strings.Repeat("y", 65)},
		{"ifAlias.1", "s", strings.Repeat("y", 64)},
		{"snmpTargetAddrTAddress.1", "x", ""},
		{"snmpTargetAddrTAddress.1", "x", "7f 00 00 01 00 a2"},
		{"schedName.1", "s", ""},
		// Ranges.
		{"snmpTargetAddrTimeout.1", "i", "-5"},
		{"snmpTargetAddrTimeout.1", "i", "1500"},
		{"snmpTargetAddrTimeout.1", "i", "99999999999"},
		{"snmpTargetAddrTimeout.1", "i", ""},
		{"snmpTargetAddrTimeout.1", "i", " 7"},
		{"snmpTargetAddrTimeout.1", "i", "+7"},
		{"snmpTargetAddrRetryCount.1", "i", "300"},
		{"snmpTargetAddrRetryCount.1", "=", "256"},
		{"snmpTargetAddrRetryCount.1", "i", "255"},
		// Enumerations.
		{"ifAdminStatus.1", "i", "bogus"},
		{"ifAdminStatus.1", "i", "down"},
		{"ifAdminStatus.1", "i", "7"},
		{"schedWeekDay.1", "b", "monday friday"},
		{"schedWeekDay.1", "b", "someday"},
		{"schedMinute.1", "b", "1"},
		{"sysContact.0", "b", "1"},
		// DISPLAY-HINTs.
		{"dot1dStaticAddress.1", "s", "00:1a:2b:3c:4d:5e"},
		{"dot1dStaticAddress.1", "s", "0:1a:2b"},
		{"dot1dStaticAddress.1", "s", "abcdef"},
		{"dot1dStaticAddress.1", "s", "0x1f:2"},
		{"ifPhysAddress.1", "s", "00:1a:2b:3c:4d:5e:ff"},
		{"ifPhysAddress.1", "s", "hello world"},
		{"hrSystemDate.0", "s", "2026-11-26,13:30:5.7,+1:0"},
		{"hrSystemDate.0", "s", "2026-11-26,13:30:5.7"},
		{"hrSystemDate.0", "s", "2026-11-26"},
		{"hrSystemDate.0", "s", "2026-11"},
		{"hrSystemDate.0", "s", "late in 2026"},
		{"-Ih", "hrSystemDate.0", "s", "2026-11-26,13:30:5.7,+1:0"},
		{"-Ih", "dot1dStaticAddress.1", "s", "00:1a:2b:3c:4d:5e"},
		// -Ir: neither types nor ranges are checked.
		{"-Ir", "sysContact.0", "s", long},
		{"-Ir", "snmpTargetAddrRetryCount.1", "i", "300"},
		{"-Ir", "snmpTargetAddrTimeout.1", "i", "99999999999"},
		{"-Ir", "sysORID.1", "s", "x"},
		{"-Ir", "ifAdminStatus.1", "i", "bogus"},
		{"-Ir", "hrSystemDate.0", "s", "2026-11-26,13:30:5.7,+1:0,9"},
		{"sysORID.1", "s", "x"},
	} {
		var opts []string
		for len(tc) > 3 {
			opts, tc = append(opts, tc[0]), tc[1:]
		}
		args := append(append(opts, target...), tc...)
		want := snmpdtest.Tool(t, "snmpset", args...)
		wantSent := e.take().varbinds
		got := runTsnmp(t, "snmpset", args...)
		gotSent := e.take().varbinds
		name := strings.Join(append(opts, tc...), " ")
		if len(name) > 80 {
			name = name[:80] + "..."
		}
		if got.Stdout != want.Stdout || got.Stderr != want.Stderr || got.Code != want.Code {
			t.Errorf("set %s:\ntsnmp (%d):\n%s%s\nsnmpset (%d):\n%s%s", name, got.Code, got.Stdout, got.Stderr, want.Code, want.Stdout, want.Stderr)
		}
		if !bytes.Equal(gotSent, wantSent) {
			t.Errorf("set %s: sent\n% x\nsnmpset sent\n% x", name, gotSent, wantSent)
		}
	}
}

// hintTestMIB defines objects of DISPLAY-HINTs and ranges that the
// standard modules do not have.
const hintTestMIB = `TSNMP-HINT-TEST-MIB DEFINITIONS ::= BEGIN
IMPORTS OBJECT-TYPE, Integer32, Unsigned32, enterprises FROM SNMPv2-SMI
        TEXTUAL-CONVENTION FROM SNMPv2-TC;
hintTest OBJECT IDENTIFIER ::= { enterprises 99999 }
AddrPort ::= TEXTUAL-CONVENTION DISPLAY-HINT "1d.1d.1d.1d:2d" STATUS current DESCRIPTION "x" SYNTAX OCTET STRING (SIZE (6))
Hex2 ::= TEXTUAL-CONVENTION DISPLAY-HINT "2x" STATUS current DESCRIPTION "x" SYNTAX OCTET STRING
Dec4 ::= TEXTUAL-CONVENTION DISPLAY-HINT "4d" STATUS current DESCRIPTION "x" SYNTAX OCTET STRING
Oct1 ::= TEXTUAL-CONVENTION DISPLAY-HINT "1o" STATUS current DESCRIPTION "x" SYNTAX OCTET STRING
Counted ::= TEXTUAL-CONVENTION DISPLAY-HINT "*1x:" STATUS current DESCRIPTION "x" SYNTAX OCTET STRING
Terminated ::= TEXTUAL-CONVENTION DISPLAY-HINT "1d,1d." STATUS current DESCRIPTION "x" SYNTAX OCTET STRING
Mixed ::= TEXTUAL-CONVENTION DISPLAY-HINT "1a1x-2d" STATUS current DESCRIPTION "x" SYNTAX OCTET STRING (SIZE (0 | 4 | 8..10))
tAddrPort OBJECT-TYPE SYNTAX AddrPort MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 1 }
tHex2 OBJECT-TYPE SYNTAX Hex2 MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 2 }
tDec4 OBJECT-TYPE SYNTAX Dec4 MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 3 }
tOct1 OBJECT-TYPE SYNTAX Oct1 MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 4 }
tCounted OBJECT-TYPE SYNTAX Counted MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 5 }
tTerminated OBJECT-TYPE SYNTAX Terminated MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 6 }
tMixed OBJECT-TYPE SYNTAX Mixed MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 7 }
tRanges OBJECT-TYPE SYNTAX Integer32 (-5..5 | 10 | 20..30) MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 8 }
tWide OBJECT-TYPE SYNTAX INTEGER (0..4294967295) MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 9 }
tHexRange OBJECT-TYPE SYNTAX INTEGER ('0a'H..'ff'H) MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 10 }
tUnsigned OBJECT-TYPE SYNTAX Unsigned32 (1..10) MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 11 }
tSized OBJECT-TYPE SYNTAX OCTET STRING (SIZE (2..3 | 5)) MAX-ACCESS read-write STATUS current DESCRIPTION "x" ::= { hintTest 12 }
END
`

// TestSetHintsLikeSnmpset loads a module of DISPLAY-HINTs and ranges the
// standard modules lack (-m +MODULE -M +DIR) and compares tsnmp set
// with snmpset on values in and out of their forms.
func TestSetHintsLikeSnmpset(t *testing.T) {
	std := snmpdtest.MIBDir(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	defer smi.Install(nil)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "TSNMP-HINT-TEST-MIB.txt"), []byte(hintTestMIB), 0o644); err != nil {
		t.Fatal(err)
	}
	e := startEchoAgent(t)
	base := []string{"-M", dir + ":" + std, "-m", "ALL", "-v2c", "-c", "private", "-t", "2", "-r", "0", e.udpAddr()}
	for _, tc := range [][]string{
		{"tAddrPort.0", "s", "192.0.2.7:161"},
		{"tAddrPort.0", "s", "192.0.2.7"},
		{"tAddrPort.0", "s", "192.0.2.7:161:1"},
		{"tHex2.0", "s", "abcd1234"},
		{"tHex2.0", "s", "ff ff"},
		{"tHex2.0", "s", "0x12"},
		{"tDec4.0", "s", "-1"},
		{"tDec4.0", "s", "99999999999999999999"},
		{"tOct1.0", "s", "17"},
		{"tOct1.0", "s", "19"},
		{"tCounted.0", "s", "1:2:3"},
		{"tCounted.0", "s", ""},
		{"tTerminated.0", "s", "1,2.3,4."},
		{"tTerminated.0", "s", "1,2."},
		{"tTerminated.0", "s", "1,2.3"},
		{"tMixed.0", "s", "ab-7"},
		{"tMixed.0", "s", "a1-7"},
		{"tMixed.0", "s", "aff-7"},
		{"tMixed.0", "s", "xyz"},
		{"tRanges.0", "i", "-6"},
		{"tRanges.0", "i", "-5"},
		{"tRanges.0", "i", "10"},
		{"tRanges.0", "i", "11"},
		{"tRanges.0", "i", "25"},
		{"tWide.0", "i", "7"},
		{"tHexRange.0", "i", "9"},
		{"tHexRange.0", "i", "10"},
		{"tUnsigned.0", "u", "11"},
		{"tSized.0", "s", "a"},
		{"tSized.0", "x", "01 02"},
		{"tSized.0", "d", "1.2.3.4"},
		{"tSized.0", "s", "abcde"},
	} {
		args := append(slices.Clone(base), tc...)
		want := snmpdtest.Tool(t, "snmpset", args...)
		wantSent := e.take().varbinds
		got := runTsnmp(t, "snmpset", args...)
		gotSent := e.take().varbinds
		if got.Stdout != want.Stdout || got.Stderr != want.Stderr || got.Code != want.Code {
			t.Errorf("set %q:\ntsnmp (%d):\n%s%s\nsnmpset (%d):\n%s%s", tc, got.Code, got.Stdout, got.Stderr, want.Code, want.Stdout, want.Stderr)
		}
		if !bytes.Equal(gotSent, wantSent) {
			t.Errorf("set %q: sent\n% x\nsnmpset sent\n% x", tc, gotSent, wantSent)
		}
	}
}

// TestParseOctetHintEnds covers hints that would read nothing forever
// (snmpset loops on them): tsnmp gives up and takes the value as text.
func TestParseOctetHintEnds(t *testing.T) {
	for _, h := range []string{"0a", "0x", "1d,1d.,", "1x:"} {
		done := make(chan bool, 1)
		go func() {
			_, ok := format.ParseOctetHint(h, "1,2.3;4")
			done <- ok
		}()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("ParseOctetHint(%q) took a value that does not fit", h)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ParseOctetHint(%q) does not end", h)
		}
	}
}
