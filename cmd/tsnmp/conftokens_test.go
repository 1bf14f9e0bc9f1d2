package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/snmp"
)

// netsnmpWithConf runs a Net-SNMP tool with SNMPCONFPATH=confDir, as
// snmpdtest.Tool does otherwise (which reads no snmp.conf).
func netsnmpWithConf(t *testing.T, confDir, prog string, args ...string) snmpdtest.Result {
	t.Helper()
	path := testenv.Need(t, prog)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, append([]string{"-M", snmpdtest.MIBDir(t), "-m", "ALL"}, args...)...)
	cmd.Args[0] = prog
	persist := t.TempDir()
	if err := os.Mkdir(filepath.Join(persist, "cert_indexes"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "SNMPCONFPATH="+confDir, "HOME="+t.TempDir(), "SNMP_PERSISTENT_DIR="+persist, "MIBS=", "MIBDIRS=")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return snmpdtest.Result{Stdout: so.String(), Stderr: se.String(), Code: code}
}

// TestConfTokensLikeNetSNMP writes snmp.conf and hosts/HOST.conf files
// with the tokens that choose where and how requests go (transport,
// defDomain, defTarget, clientaddr, clientaddrUsesPort, 16bitIDs,
// defSecurityModel, dontLoadHostConfig, and any token as --TOKEN=VALUE)
// and requires snmpget and tsnmp get to print the same and send the
// same requests (version, community, domain, source address) to an
// agent that echoes them.
func TestConfTokensLikeNetSNMP(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	e := startEchoAgent(t)
	_, udpPort, _ := net.SplitHostPort(e.udpAddr())
	_, tcpPort, _ := net.SplitHostPort(e.tcpAddr())
	srcPort := testenv.FreePort(t)
	fast := []string{"-t", "0.5", "-r", "0"}
	for _, c := range []struct {
		name  string
		tool  string            // snmpget when empty
		conf  string            // snmp.conf
		hosts map[string]string // hosts/NAME.conf
		args  []string          // before the agent
		agent string
		check func(t *testing.T, got echoed)
		none  bool // the echo agent is not to hear the request
	}{
		{name: "host file transport and community", conf: "defVersion 2c\ndefCommunity generic\n",
			hosts: map[string]string{"myagent": "transport udp:" + e.udpAddr() + "\ndefCommunity hostcomm\ndefVersion 1\n"},
			agent: "myagent",
			check: func(t *testing.T, got echoed) {
				if got.community != "hostcomm" || got.version != snmp.V2c {
					t.Errorf("sent %v %q, want the host file's community, snmp.conf's version", got.version, got.community)
				}
			}},
		{name: "host file output settings", conf: "defVersion 2c\ndefCommunity public\n",
			hosts: map[string]string{"my-agent.example": "transport " + e.udpAddr() + "\nprintNumericOids yes\n"},
			agent: "my-agent.example"},
		{name: "host file not read", conf: "defVersion 2c\ndefCommunity public\ndontLoadHostConfig yes\ndefaultPort " + strconv.Itoa(srcPort) + "\n",
			hosts: map[string]string{"127.0.0.1": "transport " + e.udpAddr() + "\n"},
			agent: "127.0.0.1", none: true,
			check: func(t *testing.T, got echoed) {
				if got.network != "" {
					t.Errorf("the host file was read: the request went to the echo agent")
				}
			}},
		{name: "16bitIDs", conf: "defVersion 2c\ndefCommunity public\n16bitIDs yes\n", agent: e.udpAddr(),
			check: func(t *testing.T, got echoed) {
				if got.id <= 0 || got.id >= 1<<15 {
					t.Errorf("request-id %d, want 15 bits", got.id)
				}
			}},
		{name: "defDomain of traps", tool: "snmptrap", conf: "defVersion 2c\ndefCommunity public\ndefDomain snmptrap tcp\n", agent: e.tcpAddr(),
			check: func(t *testing.T, got echoed) {
				if got.network != "tcp" {
					t.Errorf("sent over %q, want tcp", got.network)
				}
			}},
		// Net-SNMP's command generators pass their own default domain:
		// defDomain snmp changes nothing (the request times out on UDP).
		{name: "defDomain of requests", conf: "defVersion 2c\ndefCommunity public\ndefDomain snmp tcp\n", agent: e.tcpAddr()},
		{name: "defTarget", conf: "defVersion 2c\ndefCommunity public\ndefTarget snmp udp 127.0.0.1:" + udpPort + "\n", agent: "127.0.0.1",
			check: func(t *testing.T, got echoed) {
				if got.network != "udp" {
					t.Errorf("sent over %q, want udp to the defTarget port", got.network)
				}
			}},
		{name: "defDomain and defTarget", tool: "snmptrap", conf: "defVersion 2c\ndefCommunity public\ndefDomain snmptrap tcp\ndefTarget snmptrap tcp 127.0.0.1:" + tcpPort + "\n",
			agent: "127.0.0.1",
			check: func(t *testing.T, got echoed) {
				if got.network != "tcp" {
					t.Errorf("sent over %q, want tcp to the defTarget port", got.network)
				}
			}},
		{name: "clientaddr", conf: "defVersion 2c\ndefCommunity public\nclientaddr 127.0.0.2:" + strconv.Itoa(srcPort) + "\n", agent: e.udpAddr(),
			check: func(t *testing.T, got echoed) {
				if a, ok := got.from.(*net.UDPAddr); !ok || a.IP.String() != "127.0.0.2" || a.Port == srcPort {
					t.Errorf("sent from %v, want 127.0.0.2 and a port of its own", got.from)
				}
			}},
		{name: "clientaddrUsesPort", conf: "defVersion 2c\ndefCommunity public\nclientaddr 127.0.0.2:" + strconv.Itoa(srcPort) + "\nclientaddrUsesPort yes\n",
			agent: e.udpAddr(),
			check: func(t *testing.T, got echoed) {
				if a, ok := got.from.(*net.UDPAddr); !ok || a.IP.String() != "127.0.0.2" || a.Port != srcPort {
					t.Errorf("sent from %v, want 127.0.0.2:%d", got.from, srcPort)
				}
			}},
		{name: "clientaddr on the command line", conf: "defVersion 2c\ndefCommunity public\n", args: []string{"--clientaddr=127.0.0.3"},
			agent: e.udpAddr(),
			check: func(t *testing.T, got echoed) {
				if a, ok := got.from.(*net.UDPAddr); !ok || a.IP.String() != "127.0.0.3" {
					t.Errorf("sent from %v, want 127.0.0.3", got.from)
				}
			}},
		{name: "defSecurityModel unknown", conf: "defVersion 2c\ndefCommunity public\ndefSecurityModel bogus\n", agent: e.udpAddr()},
		{name: "defSecurityModel usm", conf: "defVersion 2c\ndefCommunity public\ndefSecurityModel usm\n", agent: e.udpAddr()},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "snmp.conf"), []byte(c.conf), 0o600); err != nil {
				t.Fatal(err)
			}
			for name, text := range c.hosts {
				if err := os.MkdirAll(filepath.Join(dir, "hosts"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "hosts", name+".conf"), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("SNMPCONFPATH", dir)
			tool, operands := c.tool, []string{"sysDescr.0"}
			if tool == "" {
				tool = "snmpget"
			} else {
				operands = []string{"", "coldStart", "sysDescr.0", "s", "x"}
			}
			args := append(append(append(append([]string(nil), fast...), c.args...), c.agent), operands...)
			e.take()
			want := netsnmpWithConf(t, dir, tool, args...)
			wantSent := e.waitTake(c.check != nil && !c.none)
			got := runTsnmp(t, tool, args...)
			gotSent := e.waitTake(c.check != nil && !c.none)
			if got.Stdout != want.Stdout || got.Stderr != want.Stderr || got.Code != want.Code {
				t.Errorf("tsnmp (%d):\n%s%s\n%s (%d):\n%s%s", got.Code, got.Stdout, got.Stderr, tool, want.Code, want.Stdout, want.Stderr)
			}
			if c.check != nil {
				c.check(t, wantSent) // the test's own premise, on Net-SNMP
				c.check(t, gotSent)
			}
			if tool == "snmptrap" {
				// sysUpTime.0 differs; the rest is checked by the trap tests.
				wantSent.varbinds, gotSent.varbinds = nil, nil
			}
			if wantSent.network != gotSent.network || wantSent.version != gotSent.version || wantSent.community != gotSent.community ||
				!bytes.Equal(wantSent.varbinds, gotSent.varbinds) {
				t.Errorf("sent %s %v %q % x\nsnmpget sent %s %v %q % x", gotSent.network, gotSent.version, gotSent.community, gotSent.varbinds,
					wantSent.network, wantSent.version, wantSent.community, wantSent.varbinds)
			}
		})
	}
}
