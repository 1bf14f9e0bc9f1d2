package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/notify/trapdtest"
	"github.com/tsnmp/tsnmp/snmp"
)

type syncBuf struct {
	mu    sync.Mutex
	b     bytes.Buffer
	lines int
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines += bytes.Count(p, []byte("\n"))
	return s.b.Write(p)
}

// Lines returns the number of lines written.
func (s *syncBuf) Lines() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lines
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// trapd is a `tsnmp trapd` running in the test process.
type trapd struct {
	port     int
	out, err *syncBuf
	stop     func() int
}

// startTrapd runs tsnmp trapd with conf (an snmptrapd.conf) and extra
// arguments on udp: and tcp: 127.0.0.1 at a free port.
func startTrapd(t testing.TB, conf string, extra ...string) *trapd {
	t.Helper()
	cf := filepath.Join(t.TempDir(), "snmptrapd.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return startTrapdAt(t, cf, []string{"udp", "tcp"}, extra...)
}

// startTrapdAt runs tsnmp trapd with the configuration file cf on the
// domains at 127.0.0.1 and one free port.
func startTrapdAt(t testing.TB, cf string, domains []string, extra ...string) *trapd {
	t.Helper()
	return startTrapdOn(t, "127.0.0.1", cf, domains, extra...)
}

// startTrapdOn is startTrapdAt at host.
func startTrapdOn(t testing.TB, host, cf string, domains []string, extra ...string) *trapd {
	t.Helper()
	dir := t.TempDir()
	for range 5 {
		port := testenv.FreePort(t)
		p := strconv.Itoa(port)
		ctx, cancel := context.WithCancel(context.Background())
		d := &trapd{port: port, out: &syncBuf{}, err: &syncBuf{}}
		code := make(chan int, 1)
		args := []string{"--snmptrapd-conf", cf, "--state-dir", filepath.Join(dir, "state")}
		for _, d := range domains {
			args = append(args, d+":"+host+":"+p)
		}
		args = append(args, extra...)
		go func() { code <- trapdMain(ctx, args, d.out, d.err) }()
		var once sync.Once
		var rc int
		d.stop = func() int {
			once.Do(func() { cancel(); rc = <-code })
			return rc
		}
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && !strings.Contains(d.err.String(), "listening on") && len(code) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		if strings.Contains(d.err.String(), "listening on") {
			t.Cleanup(func() { d.stop() })
			return d
		}
		d.stop()
		if !strings.Contains(d.err.String(), "cannot listen") {
			t.Fatalf("tsnmp trapd did not start: %s", d.err.String())
		}
	}
	t.Fatal("tsnmp trapd found no free port")
	return nil
}

func (d *trapd) addr(domain string) string { return domain + ":127.0.0.1:" + strconv.Itoa(d.port) }

// wait waits until tsnmp trapd logged n notifications.
func (d *trapd) wait(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := trapdtest.Records(d.out.String())
		if len(r) >= n {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("tsnmp trapd logged %d notifications, want %d:\n%s\nstderr:\n%s", len(r), n, d.out.String(), d.err.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTrapdInterop sends notifications with Net-SNMP's snmptrap and
// snmpinform (Debian's 5.9.3 and 5.9.5) to snmptrapd and to tsnmp trapd
// with the same snmptrapd.conf, and requires the same log and the same
// traphandle input.
func TestTrapdInterop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hn, ht := filepath.Join(dir, "netsnmp.handler"), filepath.Join(dir, "tsnmp.handler")
	handler := func(f string) string {
		return "\ntraphandle default /bin/sh -c 'cat >> " + f + "; echo ---- >> " + f + "'\n"
	}
	n := trapdtest.Start(t, trapdtest.Debian, trapdConf+handler(hn), "udp", "tcp")
	d := startTrapd(t, trapdConf+handler(ht))
	modern := "/opt/netsnmp-src/bin/"
	if _, err := os.Stat(modern + "snmptrap"); err != nil {
		if testenv.InCI() {
			t.Fatalf("Net-SNMP 5.9.5 is required (/work/shared/peers/install-netsnmp-5.9.5.sh): %v", err)
		}
		modern = ""
	}
	type tcase struct {
		name, tool, domain string
		opts, params       []string
	}
	var cases []tcase
	for _, prefix := range []string{"", modern} {
		if prefix == "" && modern == "" {
			continue
		}
		v := "5.9.3/"
		if prefix != "" {
			v = "5.9.5/"
		}
		v2c := []string{"-v2c", "-c", "public"}
		v1 := []string{"-v1", "-c", "public"}
		cases = append(cases,
			tcase{v + "v2c", prefix + "snmptrap", "udp", v2c, []string{"4242", "IF-MIB::linkDown", "ifIndex.2", "i", "2", "ifAdminStatus.2", "i", "1", "ifOperStatus.2", "i", "2"}},
			tcase{v + "v2c-types", prefix + "snmptrap", "udp", v2c, []string{"17", ".1.3.6.1.4.1.99.0.1", ".1.3.6.1.4.1.99.2", "c", "5",
				".1.3.6.1.4.1.99.3", "o", "1.3.6.1", ".1.3.6.1.4.1.99.4", "a", "1.2.3.4", ".1.3.6.1.4.1.99.5", "u", "7",
				".1.3.6.1.4.1.99.6", "C", "99999999999", ".1.3.6.1.4.1.99.7", "t", "360000", "sysLocation.0", "s", `here "q"`,
				"sysContact.0", "x", "41 42 43", "ifPhysAddress.1", "x", "00 11 22 33 44 55"}},
			tcase{v + "v2c-tcp", prefix + "snmptrap", "tcp", v2c, []string{"1", "SNMPv2-MIB::coldStart"}},
			tcase{v + "v1", prefix + "snmptrap", "udp", v1, []string{"1.3.6.1.4.1.8072.3.2.10", "127.0.0.1", "2", "0", "1234", "ifIndex.2", "i", "2"}},
			tcase{v + "v1-specific", prefix + "snmptrap", "udp", v1, []string{"1.3.6.1.4.1.99", "127.0.0.1", "6", "17", "8640099", "sysDescr.0", "s", "hello"}},
			tcase{v + "v1-empty", prefix + "snmptrap", "tcp", v1, []string{"", "127.0.0.1", "0", "0", "17280000"}},
			tcase{v + "v2c-inform", prefix + "snmpinform", "udp", v2c, []string{"123", "SNMPv2-MIB::warmStart", "sysName.0", "s", "box"}},
			tcase{v + "v3-noauth", prefix + "snmptrap", "udp", []string{"-v3", "-e", "0x80001f8804aabbccdd01", "-u", "trapnone", "-l", "noAuthNoPriv"}, []string{"55", "SNMPv2-MIB::coldStart"}},
			tcase{v + "v3-md5", prefix + "snmptrap", "udp", []string{"-v3", "-e", "0x80001f8804aabbccdd01", "-u", "trapmd5", "-l", "authNoPriv", "-a", "MD5", "-A", "authpass123"}, []string{"56", "IF-MIB::linkUp", "ifIndex.1", "i", "1"}},
			tcase{v + "v3-sha-aes", prefix + "snmptrap", "udp", []string{"-v3", "-e", "0x80001f8804aabbccdd01", "-u", "trapsha", "-l", "authPriv", "-a", "SHA", "-A", "authpass123", "-x", "AES", "-X", "privpass123"}, []string{"57", "IF-MIB::linkUp", "ifIndex.1", "i", "1"}},
			tcase{v + "v3-inform", prefix + "snmpinform", "udp", []string{"-v3", "-u", "informer", "-l", "authPriv", "-a", "SHA-256", "-A", "authpass123", "-x", "AES", "-X", "privpass123"}, []string{"58", "SNMPv2-MIB::coldStart", "sysName.0", "s", "box"}},
			tcase{v + "v3-inform-des-tcp", prefix + "snmpinform", "tcp", []string{"-v3", "-u", "informdes", "-l", "authPriv", "-a", "MD5", "-A", "authpass123", "-x", "DES", "-X", "privpass123"}, []string{"59", "SNMPv2-MIB::coldStart"}},
		)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			send := func(addr string) {
				t.Helper()
				args := append(append(append([]string{}, c.opts...), addr), c.params...)
				if r := snmpdtest.Tool(t, c.tool, args...); r.Code != 0 {
					t.Fatalf("%s %q: exit %d: %s", c.tool, args, r.Code, r.Stderr)
				}
			}
			send(n.Addr(c.domain))
			want := n.Wait(t, i+1, 5*time.Second)[i]
			send(d.addr(c.domain))
			got := d.wait(t, i+1)[i]
			if w, g := trapdtest.Normalize(want), trapdtest.Normalize(got); w != g {
				t.Errorf("logs differ\nsnmptrapd:\n%q\ntsnmp trapd:\n%q", w, g)
			}
		})
	}
	// Both ran the handler once per notification, with the same input.
	deadline := time.Now().Add(5 * time.Second)
	var wh, gh []byte
	for time.Now().Before(deadline) {
		wh, _ = os.ReadFile(hn)
		gh, _ = os.ReadFile(ht)
		if bytes.Count(wh, []byte("----")) == len(cases) && bytes.Count(gh, []byte("----")) == len(cases) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if nw, ng := bytes.Count(wh, []byte("----")), bytes.Count(gh, []byte("----")); nw != len(cases) || ng != len(cases) {
		t.Errorf("traphandle ran %d times under snmptrapd and %d under tsnmp trapd, want %d each\ntsnmp trapd's log:\n%s", nw, ng, len(cases), d.err.String())
	}
	if w, g := trapdtest.Normalize(string(wh)), trapdtest.Normalize(string(gh)); w != g {
		t.Errorf("traphandle input differs\nsnmptrapd:\n%s\ntsnmp trapd:\n%s", w, g)
	}
}

// TestTrapdWildcard: tsnmp trapd listening on every IPv4 address answers
// an inform sent to 127.0.0.2 from 127.0.0.2, so that tsnmp inform, whose
// socket is connected, takes the answer (it timed out when the answer
// came from 127.0.0.1, the address routing picks), and logs the address
// the notification came to, as snmptrapd does ("->[127.0.0.2]:PORT").
func TestTrapdWildcard(t *testing.T) {
	t.Parallel()
	cf := filepath.Join(t.TempDir(), "snmptrapd.conf")
	if err := os.WriteFile(cf, []byte("disableAuthorization yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startTrapdOn(t, "0.0.0.0", cf, []string{"udp"})
	to := "udp:127.0.0.2:" + strconv.Itoa(d.port)
	if r := tsnmpProcess(t, "inform", "-v2c", "-c", "public", "-t", "2", "-r", "1", to, "", "SNMPv2-MIB::coldStart"); r.Code != 0 {
		t.Fatalf("tsnmp inform to %s: exit %d: %s", to, r.Code, r.Stderr)
	}
	rec := d.wait(t, 1)[0]
	if want := "->[127.0.0.2]:" + strconv.Itoa(d.port) + "]"; !strings.Contains(rec, want) {
		t.Errorf("log %q does not name the address the inform came to (%q)", rec, want)
	}
}

// TestTrapdRejects sends what a receiver must drop and requires no reply,
// no log line and the right counter.
func TestTrapdRejects(t *testing.T) {
	t.Parallel()
	d := startTrapd(t, "authCommunity log public 127.0.0.1\ncreateUser informer SHA authpass123\nauthUser log informer\n")
	c, err := net.Dial("udp", "127.0.0.1:"+strconv.Itoa(d.port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	trap := func(comm string, typ snmp.PDUType) []byte {
		m := snmp.Message{Version: snmp.V2c, Community: []byte(comm), PDU: snmp.PDU{Type: typ, RequestID: 7,
			VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}, Value: snmp.TimeTicksValue(1)},
				{Name: snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 1})}}}}
		return snmp.AppendMessage(nil, &m)
	}
	noReply := func(what string, msg []byte) {
		t.Helper()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		buf := make([]byte, 2048)
		if n, err := c.Read(buf); err == nil {
			t.Errorf("%s: answered with %d bytes", what, n)
		}
	}
	noReply("inform with a wrong community", trap("wrong", snmp.InformRequest))
	noReply("a GetRequest", trap("public", snmp.GetRequest))
	noReply("garbage", []byte{0x30, 0x03, 0x02, 0x01})
	noReply("bad version", []byte{0x30, 0x03, 0x02, 0x01, 0x05})
	// An inform with the right community is answered with a Response
	// carrying its request-id and varbinds.
	if _, err := c.Write(trap("public", snmp.InformRequest)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 2048)
	nr, err := c.Read(buf)
	if err != nil {
		t.Fatalf("inform not answered: %v", err)
	}
	var m snmp.Message
	if err := m.Unmarshal(buf[:nr]); err != nil || m.PDU.Type != snmp.Response || m.PDU.RequestID != 7 || len(m.PDU.VarBinds) != 2 {
		t.Fatalf("inform answered with %+v (%v)", m.PDU, err)
	}
	d.wait(t, 1)
	if code := d.stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if r := trapdtest.Records(d.out.String()); len(r) != 1 {
		t.Errorf("logged %d notifications, want the one inform:\n%s", len(r), d.out.String())
	}
	for _, want := range []string{"received 1 ", "informs answered 1", "parse errors 1", "bad versions 1", "bad communities 1", "not notifications 1"} {
		if !strings.Contains(d.err.String(), want) {
			t.Errorf("exit counters lack %q:\n%s", want, d.err.String())
		}
	}
}

// TestTrapdJSON checks the JSON lines of a v1 trap and a v2c trap.
func TestTrapdJSON(t *testing.T) {
	t.Parallel()
	jf := filepath.Join(t.TempDir(), "n.json")
	d := startTrapd(t, "authCommunity log public\n", "--json", jf, "--no-log")
	if r := runTsnmp(t, "snmptrap", "-v1", "-c", "public", d.addr("udp"), "1.3.6.1.4.1.99", "127.0.0.1", "6", "3", "42", "ifIndex.1", "i", "1"); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	if r := runTsnmp(t, "snmptrap", "-v2c", "-c", "public", d.addr("tcp"), "43", "IF-MIB::linkDown", "ifOperStatus.2", "i", "2"); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	var lines []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(jf)
		if lines = strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(lines) != 2 {
		t.Fatalf("JSON lines: %q", lines)
	}
	// UDP and TCP are received by different goroutines, so the two
	// lines may be written in either order.
	var v1, v2 map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &v1); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &v2); err != nil {
		t.Fatal(err)
	}
	if v1["version"] != "1" {
		v1, v2 = v2, v1
		lines[0], lines[1] = lines[1], lines[0]
	}
	if v1["snmpTrapOID"] != "1.3.6.1.4.1.99.0.3" || v1["transport"] != "udp" || v1["version"] != "1" || v1["agentAddr"] != "127.0.0.1" || v1["securityName"] != "public" {
		t.Errorf("v1 trap: %s", lines[0])
	}
	vbs, _ := v2["varbinds"].([]any)
	if v2["snmpTrapName"] != "IF-MIB::linkDown" || v2["transport"] != "tcp" || len(vbs) != 3 {
		t.Fatalf("v2c trap: %s", lines[1])
	}
	if last, _ := vbs[2].(map[string]any); last["name"] != "IF-MIB::ifOperStatus.2" || last["value"] != "down" || last["type"] != "INTEGER" {
		t.Errorf("v2c trap varbind: %v", last)
	}
	if strings.TrimSpace(d.out.String()) != "" {
		t.Errorf("--no-log wrote the text log: %q", d.out.String())
	}
}

// TestTrapdProtocols sends an SNMPv3 authPriv trap with every
// authentication and privacy protocol from Net-SNMP 5.9.3's snmptrap to
// snmptrapd and to tsnmp trapd: both must log it identically.
func TestTrapdProtocols(t *testing.T) {
	t.Parallel()
	conf := trapdConf + matrixConf()
	n := trapdtest.Start(t, trapdtest.Debian, conf, "udp")
	d := startTrapd(t, conf)
	for i, p := range protocolMatrix {
		t.Run(p[0], func(t *testing.T) {
			args := func(addr string) []string {
				return []string{"-v3", "-e", "0x80001f8804aabbccdd01", "-u", p[0], "-l", "authPriv", "-a", p[1], "-A", "authpass123",
					"-x", p[2], "-X", "privpass123", addr, "61", "IF-MIB::linkDown", "ifIndex.1", "i", "1"}
			}
			for _, addr := range []string{n.Addr("udp"), d.addr("udp")} {
				if r := snmpdtest.Tool(t, "snmptrap", args(addr)...); r.Code != 0 {
					t.Fatalf("snmptrap: %s", r.Stderr)
				}
			}
			want := n.Wait(t, i+1, 5*time.Second)[i]
			got := d.wait(t, i+1)[i]
			if trapdtest.Normalize(want) != trapdtest.Normalize(got) {
				t.Errorf("logs differ\nsnmptrapd:\n%s\ntsnmp trapd:\n%s", want, got)
			}
		})
	}
}
