package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// shellWords splits a README command line as sh would for the simple
// quoting the README uses.
func shellWords(line string) []string {
	var out []string
	var b strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		case c == '#':
			i = len(line)
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// readmeBlock returns the lines of the first ```sh block after marker in
// README.md.
func readmeBlock(t *testing.T, marker string) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("README.md has no %q", marker)
	}
	s = s[i:]
	i = strings.Index(s, "```sh\n")
	j := strings.Index(s[i+6:], "```")
	if i < 0 || j < 0 {
		t.Fatalf("no sh block after %q", marker)
	}
	return strings.Split(strings.TrimSpace(s[i+6:i+6+j]), "\n")
}

// TestREADMEManager runs the manager examples of the README as written,
// against the agents the README says they are for, on free ports.
func TestREADMEManager(t *testing.T) {
	bin, tool := buildDaemon(t), buildTool(t)
	port := testenv.FreePort(t)
	ps := strconv.Itoa(port)
	var listen []string
	for _, l := range []string{"udp:127.0.0.1", "tcp:127.0.0.1", "udp:[::1]", "tcp:[::1]"} {
		listen = append(listen, "--listen", l+":"+ps)
	}
	p := startDaemon(t, bin, []string{"XDG_STATE_HOME=" + t.TempDir()}, listen...)
	m := regexp.MustCompile(`-A (\S+) -x AES -X (\S+)`).FindStringSubmatch(p.log.String())
	if m == nil {
		t.Fatalf("no credentials printed:\n%s", p.log)
	}
	run := func(line string, repl ...string) {
		t.Helper()
		line = strings.NewReplacer(repl...).Replace(line)
		w := shellWords(line)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, tool, w[1:]...).CombinedOutput()
		if err != nil || len(out) == 0 {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
	}
	n := 0
	for _, line := range readmeBlock(t, "## Using the manager") {
		if strings.HasPrefix(line, "tsnmp ") {
			run(line, ":1161", ":"+ps, "-A PASS", "-A "+m[1], "-X PASS", "-X "+m[2])
			n++
		}
	}
	// The write example: its own configuration, state directory and port.
	block := readmeBlock(t, "The zero-config agent is read-only")
	if len(block) != 3 || !strings.HasPrefix(block[0], "printf 'rwcommunity private 127.0.0.1\\n' > rw.conf") ||
		!strings.HasPrefix(block[1], "tsnmpd --snmpd-conf rw.conf --state-dir ") {
		t.Fatalf("write example changed; update this test:\n%s", strings.Join(block, "\n"))
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rw.conf"), []byte("rwcommunity private 127.0.0.1\n"), 0o600)
	wport := strconv.Itoa(testenv.FreePort(t))
	args := shellWords(strings.NewReplacer("rw.conf", filepath.Join(dir, "rw.conf"), "/tmp/tsnmp-rw", filepath.Join(dir, "state"), ":1162", ":"+wport, "&", "").Replace(block[1]))
	startDaemon(t, bin, nil, args[1:]...)
	run(block[2], ":1162", ":"+wport)
	if n < 4 {
		t.Errorf("only %d manager examples found", n)
	}
}

// TestBannerAfterListen: the zero-config banner comes only once the
// listeners are bound, names an address that is listened on, and is not
// printed when the agent cannot listen.
func TestBannerAfterListen(t *testing.T) {
	bin := buildDaemon(t)
	// A port in use: the start fails and prints no credentials.
	busy, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cmd := exec.Command(bin, "--listen", "udp:"+busy.LocalAddr().String())
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "Walk this agent") || strings.Contains(string(out), "tsnmp walk") {
		t.Fatalf("start on a busy port: %v\n%s", err, out)
	}

	// Only https: and tcp: the walk command names the TCP address, after
	// it is bound.
	tport := testenv.FreePort(t)
	p := startDaemon(t, bin, []string{"XDG_STATE_HOME=" + t.TempDir()}, "--listen", "https:127.0.0.1:"+strconv.Itoa(testenv.FreePort(t)), "--listen", "tcp:0.0.0.0:"+strconv.Itoa(tport))
	log := p.log.String()
	m := regexp.MustCompile(`tsnmp walk .* (tcp:127\.0\.0\.1:(\d+)) system`).FindStringSubmatch(log)
	if m == nil || m[2] != strconv.Itoa(tport) {
		t.Fatalf("walk command:\n%s", log)
	}
	if strings.Index(log, "Walk this agent") < strings.LastIndex(log, "msg=listening") {
		t.Errorf("banner printed before the listeners were bound:\n%s", log)
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(m[1], "tcp:"))
	if err != nil {
		t.Fatalf("the printed address is not listened on: %v", err)
	}
	c.Close()

	// No SNMP listener: no walk command at all.
	p = startDaemon(t, bin, []string{"XDG_STATE_HOME=" + t.TempDir()}, "--listen", "https:127.0.0.1:"+strconv.Itoa(testenv.FreePort(t)))
	if l := p.log.String(); !strings.Contains(l, "created the SNMPv3 user") || strings.Contains(l, "tsnmp walk") {
		t.Errorf("banner without an SNMP listener:\n%s", l)
	}
}

// TestZeroConfigHTTPS: https: without a configured certificate serves
// with a self-signed one generated in the state directory and kept.
func TestZeroConfigHTTPS(t *testing.T) {
	bin := buildDaemon(t)
	xdg := t.TempDir()
	hport := testenv.FreePort(t)
	args := []string{"--listen", "https:127.0.0.1:" + strconv.Itoa(hport), "--listen", fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))}
	p := startDaemon(t, bin, []string{"XDG_STATE_HOME=" + xdg}, args...)
	certPath := filepath.Join(xdg, "tsnmp", "https-cert.pem")
	pem1, err := os.ReadFile(certPath)
	if err != nil {
		t.Fatalf("no certificate in the state directory: %v\n%s", err, p.log)
	}
	if fi, err := os.Stat(filepath.Join(xdg, "tsnmp", "https-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key: %v %v", err, fi)
	}
	get := func() {
		t.Helper()
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem1) {
			t.Fatal("certificate file holds no certificate")
		}
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}}}
		req, _ := http.NewRequest("GET", fmt.Sprintf("https://127.0.0.1:%d/mib/system", hport), nil)
		req.Header.Set("Authorization", "SNMP-Community public")
		req.Header.Set("Accept", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET /mib/system: %s", resp.Status)
		}
	}
	get()
	// The same certificate after a restart.
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	startDaemon(t, bin, []string{"XDG_STATE_HOME=" + xdg}, args...)
	if pem2, _ := os.ReadFile(certPath); string(pem2) != string(pem1) {
		t.Error("certificate replaced at restart")
	}
	get()
}

// TestReloadListen: a SIGHUP that changes the listen addresses applies
// them; one that names an address that cannot be opened changes nothing
// and says so.
func TestReloadListen(t *testing.T) {
	bin := buildDaemon(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	p1, p2 := testenv.FreePort(t), testenv.FreePort(t)
	write := func(ports ...int) {
		var b strings.Builder
		b.WriteString("rocommunity public 127.0.0.1\n")
		for _, p := range ports {
			fmt.Fprintf(&b, "agentaddress udp:127.0.0.1:%d\n", p)
		}
		os.WriteFile(conf, []byte(b.String()), 0o600)
	}
	answers := func(port int) bool {
		s, err := manager.Dial(context.Background(), fmt.Sprintf("udp:127.0.0.1:%d", port), manager.Config{Version: snmp.V2c, Community: "public", Timeout: 300 * time.Millisecond, Retries: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.Get(context.Background(), sysUpTime0)
		return err == nil
	}
	write(p1)
	p := startDaemon(t, bin, nil, "--state-dir", filepath.Join(dir, "state"), "--snmpd-conf", conf)
	if !answers(p1) {
		t.Fatal("no answer on the first address")
	}
	hup := func(want string) {
		t.Helper()
		before := strings.Count(p.log.String(), want)
		p.cmd.Process.Signal(syscall.SIGHUP)
		for deadline := time.Now().Add(10 * time.Second); strings.Count(p.log.String(), want) == before; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q after SIGHUP:\n%s", want, p.log)
			}
		}
	}
	write(p2)
	hup("configuration reloaded")
	if !answers(p2) || answers(p1) {
		t.Fatalf("after the reload: new address answers %v, old %v\n%s", answers(p2), answers(p1), p.log)
	}
	if !strings.Contains(p.log.String(), fmt.Sprintf("stopped listening\" address=udp:127.0.0.1:%d", p1)) {
		t.Errorf("closing the old address not logged:\n%s", p.log)
	}
	// An address in use: refused, the running one kept.
	busy, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	write(busy.LocalAddr().(*net.UDPAddr).Port)
	hup("reload failed")
	if n := strings.Count(p.log.String(), "configuration reloaded"); n != 1 {
		t.Errorf("%d reloads reported as done, want 1 (the failed one is not):\n%s", n, p.log)
	}
	if want := fmt.Sprintf("listen udp:127.0.0.1:%d", busy.LocalAddr().(*net.UDPAddr).Port); !strings.Contains(p.log.String(), want) {
		t.Errorf("the failed reload does not name the address (%q):\n%s", want, p.log)
	}
	if !answers(p2) {
		t.Fatalf("a failed reload closed the running address:\n%s", p.log)
	}
}
