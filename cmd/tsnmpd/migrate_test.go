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
// SIGTERM, so that it writes its persistent file. extra are more snmpd
// flags.
func runSnmpdOnce(t *testing.T, confDir, persist string, port int, args []string, extra ...string) string {
	t.Helper()
	snmpd := testenv.Need(t, "snmpd")
	flags := append([]string{"-f", "-Lo", "-p", filepath.Join(confDir, "snmpd.pid")}, extra...)
	cmd := exec.Command(snmpd, append(flags, fmt.Sprintf("udp:127.0.0.1:%d", port))...)
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
		if err == nil || strings.Contains(string(o), "Reason: ") {
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

// TestMigrateSecurityNameAndConfList: a usmUser line whose securityName
// differs from its user name is taken over, and access control sees
// the user name, as in Debian's snmpd (rouser NAME grants, rouser
// SECURITYNAME does not); both agents read `-c A,B` as one configuration;
// a usmUser line with 3DES privacy, which tsnmp does not implement, is
// refused with its file and line and what to do.
func TestMigrateSecurityNameAndConfList(t *testing.T) {
	testenv.Need(t, "snmpd")
	bin := buildDaemon(t)
	dir := t.TempDir()
	confDir, persist, other := filepath.Join(dir, "etc"), filepath.Join(dir, "var"), filepath.Join(dir, "other")
	for _, d := range []string{confDir, persist, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	port := testenv.FreePort(t)
	addr := fmt.Sprintf("udp:127.0.0.1:%d", port)
	// snmpd turns createUser into a usmUser line (securityName = user name).
	os.WriteFile(filepath.Join(confDir, "snmpd.conf"), []byte("rouser bob authPriv\n"), 0o600)
	pfile := filepath.Join(persist, "snmpd.conf")
	os.WriteFile(pfile, []byte("createUser bob SHA \"bobauth123\" AES \"bobpriv123\"\n"), 0o600)
	creds := []string{"-v3", "-l", "authPriv", "-u", "bob", "-a", "SHA", "-A", "bobauth123", "-x", "AES", "-X", "bobpriv123", addr, ".1.3.6.1.2.1.1.6.0"}
	runSnmpdOnce(t, confDir, persist, port, creds)
	data, _ := os.ReadFile(pfile)
	line := regexp.MustCompile(`(?m)^usmUser 1 3 (0x[0-9a-f]+) "bob" "bob" (.*)$`).FindStringSubmatch(string(data))
	if line == nil {
		t.Fatalf("snmpd wrote no usmUser line for bob:\n%s", data)
	}
	// Give bob the securityName robert.
	data = []byte(strings.Replace(string(data), line[0], fmt.Sprintf("usmUser 1 3 %s \"bob\" \"robert\" %s", line[1], line[2]), 1))
	os.WriteFile(pfile, data, 0o600)

	// Two configuration files; the second grants access to bob, or to
	// robert.
	a, bBob, bRobert := filepath.Join(dir, "a.conf"), filepath.Join(dir, "bob.conf"), filepath.Join(dir, "robert.conf")
	os.WriteFile(a, []byte("sysLocation from-a\n"), 0o600)
	os.WriteFile(bBob, []byte("rouser bob authPriv\n"), 0o600)
	os.WriteFile(bRobert, []byte("rouser robert authPriv\n"), 0o600)
	// snmpd reads its persistent file only without -C.
	snmpdBob := runSnmpdOnce(t, other, persist, port, creds, "-c", a+","+bBob)
	snmpdRobert := runSnmpdOnce(t, other, persist, port, creds, "-c", a+","+bRobert)
	if !strings.Contains(snmpdBob, `STRING: "from-a"`) || !strings.Contains(snmpdRobert, "authorizationError") {
		t.Fatalf("snmpd -c A,B: rouser bob: %s; rouser robert: %s", snmpdBob, snmpdRobert)
	}
	if data, _ := os.ReadFile(pfile); !strings.Contains(string(data), `"bob" "robert"`) {
		t.Fatalf("snmpd dropped the securityName:\n%s", data)
	}
	// A 3DES user, in the form snmpd writes usmUser lines.
	data, _ = os.ReadFile(pfile)
	data = append(data, fmt.Sprintf("usmUser 1 3 %s \"tripl\" \"tripl\" NULL .1.3.6.1.6.3.10.1.1.3 0x97c9ac6f1e6f4594a0c0aed97fcb982bac766180 .1.3.6.1.4.1.14832.1.1 0x2784a4f52d53d9107e7621d56c136f0d2784a4f52d53d9107e7621d56c136f0d \"\"\n", line[1])...)
	os.WriteFile(pfile, data, 0o600)
	tripleLine := strings.Count(string(data), "\n")

	state := filepath.Join(dir, "state")
	for _, c := range []struct{ conf, want string }{{bRobert, snmpdRobert}, {bBob, snmpdBob}} {
		p := startDaemon(t, bin, nil, "-f", "-Lo", "-C", "-c", a+","+c.conf, "--snmpd-persistent", pfile, "--state-dir", state, "--quiet", addr)
		o, _ := exec.Command(testenv.Need(t, "snmpget"), append([]string{"-M", "/dev/null", "-m", "", "-On", "-r", "1", "-t", "2"}, creds...)...).CombinedOutput()
		if out := string(o); strings.TrimSpace(out) != strings.TrimSpace(c.want) {
			t.Errorf("-c %s,%s: tsnmpd answers %q, snmpd %q\nlog:\n%s", a, c.conf, out, c.want, p.log)
		}
		log := p.log.String()
		for _, want := range []string{
			`usmUser \"bob\" (SHA/AES, storage nonVolatile, securityName \"robert\" kept, access control by the user name as snmpd does): taken over`,
			fmt.Sprintf(`level=ERROR msg="snmpd's persistent file: a user snmpd serves is not taken over" refused="%s:%d: usmUser: user \"tripl\" uses 3DES-EDE privacy`, pfile, tripleLine),
			"create the user again with AES (createUser tripl SHA AUTHPASS AES PRIVPASS",
		} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %q:\n%s", want, log)
			}
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Wait()
	}
	out, err := exec.Command(bin, "migrate", "-c", a+","+bBob, "--snmpd-persistent", pfile, "--state-dir", filepath.Join(dir, "none")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Not taken over (managers using these fail until you act):\n  "+fmt.Sprintf("%s:%d: usmUser: user \"tripl\"", pfile, tripleLine)) {
		t.Errorf("migrate: %v\n%s", err, out)
	}
}

// TestUSMStateSecurityName: tsnmpd's own usm-users.conf keeps a user's
// securityName when it differs from the user name, and still reads the
// six-field lines it wrote before.
func TestUSMStateSecurityName(t *testing.T) {
	eid := []byte{0x80, 0, 0x1f, 0x88, 0x04, 1, 2, 3}
	key := strings.Repeat("ab", 20)
	u, err := parseUSMLine(strings.Fields("usmUser 626f62 SHA none "+key+" - 726f62657274"), eid)
	if err != nil || u.Name() != "bob" || u.SecurityName() != "robert" {
		t.Fatalf("seven fields: %v %v", u, err)
	}
	u, err = parseUSMLine(strings.Fields("usmUser 626f62 SHA none "+key+" -"), eid)
	if err != nil || u.SecurityName() != "bob" {
		t.Fatalf("six fields: %v %v", u, err)
	}
}
