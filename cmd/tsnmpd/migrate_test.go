package main

import (
	"bufio"
	"fmt"
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
)

// runSnmpdOnce starts Debian's snmpd on conf with persistent directory
// persist, waits until it answers, queries it with args and stops it with
// SIGTERM, so that it writes its persistent file.
func runSnmpdOnce(t *testing.T, confDir, persist string, port int, args []string) string {
	t.Helper()
	snmpd := testenv.Need(t, "snmpd")
	cmd := exec.Command(snmpd, "-f", "-Lo", "-p", filepath.Join(confDir, "snmpd.pid"), fmt.Sprintf("udp:127.0.0.1:%d", port))
	// The persistent directory is on snmpd's configuration path, so it
	// reads the createUser line there and turns it into a usmUser line,
	// as net-snmp-create-v3-user relies on.
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+persist, "SNMPCONFPATH="+confDir+":"+persist, "MIBS=", "MIBDIRS=/dev/null")
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
		close(done)
	}()
	var answer string
	for i := 0; i < 50; i++ {
		o, err := exec.Command(testenv.Need(t, "snmpget"), append([]string{"-M", "/dev/null", "-m", "", "-On", "-r", "0", "-t", "1"}, args...)...).CombinedOutput()
		if err == nil {
			answer = string(o)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	<-done
	cmd.Wait()
	if answer == "" {
		t.Fatalf("snmpd never answered:\n%s", log.String())
	}
	return answer
}

// TestMigrateFromSnmpd runs Debian's snmpd once with a createUser line in
// its persistent directory, stops it, and starts tsnmpd on the same
// snmpd.conf and persistent file: the same SNMPv3 credentials work, the
// engine ID is snmpd's, engineBoots is above snmpd's last, and snmpd's
// file is advanced to it so that snmpd started again would not go back.
func TestMigrateFromSnmpd(t *testing.T) {
	testenv.Need(t, "snmpd")
	bin := buildDaemon(t)
	dir := t.TempDir()
	confDir, persist := filepath.Join(dir, "etc"), filepath.Join(dir, "var")
	for _, d := range []string{confDir, persist} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	port := testenv.FreePort(t)
	conf := filepath.Join(confDir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rouser miguser authPriv\nsysLocation lab\nfrobnicateWidgets 3\nproc sshd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pfile := filepath.Join(persist, "snmpd.conf")
	if err := os.WriteFile(pfile, []byte("createUser miguser SHA \"migauth123\" AES \"migpriv123\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	creds := []string{"-v3", "-l", "authPriv", "-u", "miguser", "-a", "SHA", "-A", "migauth123", "-x", "AES", "-X", "migpriv123",
		fmt.Sprintf("udp:127.0.0.1:%d", port), ".1.3.6.1.6.3.10.2.1.1.0", ".1.3.6.1.6.3.10.2.1.2.0"}
	before := runSnmpdOnce(t, confDir, persist, port, creds)
	data, _ := os.ReadFile(pfile)
	if !strings.Contains(string(data), "usmUser 1 3 ") || !strings.Contains(string(data), "oldEngineID 0x") {
		t.Fatalf("snmpd wrote no usmUser/oldEngineID:\n%s", data)
	}
	idRe := regexp.MustCompile(`\.1\.3\.6\.1\.6\.3\.10\.2\.1\.1\.0 = Hex-STRING: ([0-9A-F \n]+)`)
	bootsRe := regexp.MustCompile(`\.1\.3\.6\.1\.6\.3\.10\.2\.1\.2\.0 = INTEGER: (\d+)`)
	m1, b1 := idRe.FindStringSubmatch(before), bootsRe.FindStringSubmatch(before)
	if m1 == nil || b1 == nil {
		t.Fatalf("snmpd's answer: %s", before)
	}

	// tsnmpd with snmpd's own command line, plus its state directory.
	state := filepath.Join(dir, "state")
	p := startDaemon(t, bin, nil, "-f", "-Lo", "-C", "-c", conf, "--snmpd-persistent", pfile, "--state-dir", state, "--quiet",
		fmt.Sprintf("udp:127.0.0.1:%d", port))
	after := netsnmp(t, "snmpget", creds...)
	m2, b2 := idRe.FindStringSubmatch(after), bootsRe.FindStringSubmatch(after)
	if m2 == nil || b2 == nil {
		t.Fatalf("tsnmpd's answer: %s\nlog:\n%s", after, p.log)
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), "") }
	if norm(m1[1]) != norm(m2[1]) {
		t.Errorf("engine ID: snmpd %s, tsnmpd %s", m1[1], m2[1])
	}
	sb, _ := strconv.Atoi(b1[1])
	tb, _ := strconv.Atoi(b2[1])
	if tb <= sb {
		t.Errorf("engineBoots: tsnmpd %d, not above snmpd's %d", tb, sb)
	}
	data, _ = os.ReadFile(pfile)
	if !strings.Contains(string(data), fmt.Sprintf("engineBoots %d\n", tb)) {
		t.Errorf("snmpd's persistent file not advanced to engineBoots %d:\n%s", tb, data)
	}
	log := p.log.String()
	for _, want := range []string{
		"snmpd.conf:3: frobnicateWidgets: unknown directive; ignored",
		`usmUser \"miguser\" (SHA/AES, storage nonVolatile): taken over`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()

	// A second start continues the count under the same engine ID.
	p = startDaemon(t, bin, nil, "-f", "-Lo", "-C", "-c", conf, "--snmpd-persistent", pfile, "--state-dir", state, "--quiet",
		fmt.Sprintf("udp:127.0.0.1:%d", port))
	again := netsnmp(t, "snmpget", creds...)
	if b3 := bootsRe.FindStringSubmatch(again); b3 == nil || b3[1] != strconv.Itoa(tb+1) {
		t.Errorf("second start: %s, want engineBoots %d", again, tb+1)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()

	// --strict refuses the unknown line, naming file and line.
	out, err := exec.Command(bin, "--strict", "-c", conf, "--snmpd-persistent", "none", "--state-dir", filepath.Join(dir, "strict")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), conf+":3: frobnicateWidgets: unknown directive (--strict)") {
		t.Errorf("--strict: %v\n%s", err, out)
	}
	// tsnmpd migrate reports without touching the state.
	out, err = exec.Command(bin, "migrate", "-c", conf, "--snmpd-persistent", pfile, "--state-dir", filepath.Join(dir, "none")).CombinedOutput()
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	for _, want := range []string{"engine ID " + strings.ToLower(norm(m1[1])), "usmUser \"miguser\"", "frobnicateWidgets: unknown directive", "ifXTable"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("migrate output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); err == nil {
		t.Error("migrate created the state directory")
	}
}

// TestDebianDefaultConf starts tsnmpd on the snmpd.conf Debian's snmpd
// package installs, with snmpd's command line and a trailing listening
// address: it starts, and answers as that file says (public sees the
// systemonly view).
func TestDebianDefaultConf(t *testing.T) {
	testenv.Need(t, "snmpd")
	if _, err := os.Stat("/etc/snmp/snmpd.conf"); err != nil {
		t.Fatalf("Debian's snmpd package is installed but %v", err)
	}
	bin := buildDaemon(t)
	port := testenv.FreePort(t)
	addr := fmt.Sprintf("udp:127.0.0.1:%d", port)
	p := startDaemon(t, bin, nil, "-f", "-Lo", "-C", "-c", "/etc/snmp/snmpd.conf", "--snmpd-persistent", "none",
		"--state-dir", filepath.Join(t.TempDir(), "state"), "--quiet", addr)
	if out := netsnmp(t, "snmpget", "-v2c", "-c", "public", addr, ".1.3.6.1.2.1.1.5.0"); !strings.Contains(out, ".1.3.6.1.2.1.1.5.0 = STRING") {
		t.Errorf("sysName: %s", out)
	}
	if out := netsnmp(t, "snmpget", "-v2c", "-c", "public", addr, ".1.3.6.1.2.1.2.1.0"); !strings.Contains(out, "No Such Object") {
		t.Errorf("ifNumber outside systemonly: %s", out)
	}
	if strings.Contains(p.log.String(), "level=ERROR") {
		t.Errorf("log:\n%s", p.log)
	}
}
