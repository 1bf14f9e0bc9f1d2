package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
)

// stdioSession is one tsnmpd --stdio process, as sshd runs it for one SSH
// session.
type stdioSession struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int32
}

func startStdio(t *testing.T, bin, conf, state string) *stdioSession {
	t.Helper()
	cmd := exec.Command(bin, "--stdio", "--snmpd-conf", conf, "--state-dir", state, "--quiet", "--log-level", "warn")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &stdioSession{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

// get sends a TSM Get in the agent's own context (RFC 5343) and returns
// the values.
func (s *stdioSession) get(t *testing.T, oids ...snmp.OID) []snmp.VarBind {
	t.Helper()
	s.id++
	var vbs []snmp.VarBind
	for _, o := range oids {
		vbs = append(vbs, snmp.VarBind{Name: o, Value: snmp.Value{Type: snmp.Null}})
	}
	scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: []byte{0x80, 0, 0, 0, 6},
		PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: s.id, VarBinds: vbs}})
	if _, err := s.in.Write(tsm.AppendMessage(nil, s.id, 65507, snmp.LevelFlags(snmp.AuthPriv)|snmp.FlagReportable, scoped)); err != nil {
		t.Fatal(err)
	}
	msg, err := readBER(s.out)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	var m snmp.V3Message
	if err := m.Unmarshal(msg); err != nil {
		t.Fatal(err)
	}
	var sp snmp.ScopedPDU
	if err := sp.Unmarshal(m.Data); err != nil {
		t.Fatal(err)
	}
	if sp.PDU.Type != snmp.Response || len(sp.PDU.VarBinds) != len(oids) {
		t.Fatalf("answer: %+v", sp.PDU)
	}
	return sp.PDU.VarBinds
}

func (s *stdioSession) close(t *testing.T) {
	t.Helper()
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("stdio session exit: %v", err)
	}
}

var (
	snmpEngineBoots0 = snmp.OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 2, 0}
	snmpEngineTime0  = snmp.OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 3, 0}
	sysUpTime0       = snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}
)

// TestStdioEngine: sessions of tsnmpd --stdio (an sshd subsystem runs one
// process per SSH session) describe one engine: a session, concurrent or
// later, is not a new boot, and sysUpTime and snmpEngineTime count from
// the engine's boot, not from the session's start.
func TestStdioEngine(t *testing.T) {
	bin := buildDaemon(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	os.WriteFile(conf, []byte("rouser -s tsm "+u.Username+" authpriv\n"), 0o600)
	state := filepath.Join(dir, "state")
	oids := []snmp.OID{snmpEngineBoots0, sysUpTime0, snmpEngineTime0}

	a := startStdio(t, bin, conf, state)
	first := a.get(t, oids...)
	boots := first[0].Value.Num
	time.Sleep(1200 * time.Millisecond)
	b := startStdio(t, bin, conf, state) // while a is open
	second := b.get(t, oids...)
	if second[0].Value.Num != boots {
		t.Errorf("concurrent session: snmpEngineBoots %d, first session %d", second[0].Value.Num, boots)
	}
	if second[1].Value.Num < 100 || second[2].Value.Num < 1 {
		t.Errorf("concurrent session 1.2 s after the first: sysUpTime %d, snmpEngineTime %d", second[1].Value.Num, second[2].Value.Num)
	}
	a.close(t)
	b.close(t)
	c := startStdio(t, bin, conf, state)
	third := c.get(t, oids...)
	if third[0].Value.Num != boots || third[1].Value.Num < second[1].Value.Num {
		t.Errorf("later session: snmpEngineBoots %d (first %d), sysUpTime %d (before %d)", third[0].Value.Num, boots, third[1].Value.Num, second[1].Value.Num)
	}
	c.close(t)
	for i, r := range [][]snmp.VarBind{first, second, third} {
		t.Logf("session %d: snmpEngineBoots %d, sysUpTime %d, snmpEngineTime %d", i+1, r[0].Value.Num, r[1].Value.Num, r[2].Value.Num)
	}
}

// readBER reads one BER TLV.
func readBER(r *bufio.Reader) ([]byte, error) {
	hdr := make([]byte, 2, 8)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	n := int(hdr[1])
	if n >= 0x80 {
		k := n & 0x7f
		if k == 0 || k > 4 {
			return nil, io.ErrUnexpectedEOF
		}
		ext := make([]byte, k)
		if _, err := io.ReadFull(r, ext); err != nil {
			return nil, err
		}
		hdr = append(hdr, ext...)
		n = 0
		for _, c := range ext {
			n = n<<8 | int(c)
		}
	}
	msg := append(hdr, make([]byte, n)...)
	_, err := io.ReadFull(r, msg[len(hdr):])
	return msg, err
}
