package main

import (
	"context"
	"crypto"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestDumpSecureLikeNetSNMP595: -d names the messages of a tls: and a
// dtls: session as Net-SNMP 5.9.5's snmpget does, against its snmpd
// (the sizes and the local port, which differ between the two runs,
// masked). The agent speaks TLS 1.2: its TLS 1.3 server sometimes
// leaves a request that arrives with the client's Finished unread.
func TestDumpSecureLikeNetSNMP595(t *testing.T) {
	t.Parallel()
	snmpget := testenv.NeedNetSNMP595(t, "bin/snmpget")
	testenv.Need(t, snmpdtest.NetSNMP595)
	dir := t.TempDir()
	if _, err := certs.NewPKI("", dir); err != nil {
		t.Fatal(err)
	}
	osslConf := filepath.Join(dir, "openssl.cnf")
	if err := os.WriteFile(osslConf, []byte("openssl_conf = c\n[c]\nssl_conf = s\n[s]\nsystem_default = d\n[d]\nProtocol = -TLSv1.3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := regexp.MustCompile(`(?m)^(Sending|Received) .*$`)
	mask := regexp.MustCompile(`(?m)\d+ byte|\]:\d+$`)
	for _, domain := range []string{"tls", "dtls"} {
		target := fmt.Sprintf("%s:127.0.0.1:%d", domain, testenv.FreePort(t))
		snmpdtest.StartSecure(t, snmpdtest.Secure{Snmpd: snmpdtest.NetSNMP595, Dir: dir, Listen: target,
			Hash: crypto.SHA1, Env: []string{"OPENSSL_CONF=" + osslConf}})
		var want string
		for range 20 { // snmpd may still be opening its socket
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			cmd := exec.CommandContext(ctx, snmpget, "-d", "-On", "-t", "2", "-r", "0", "-T", "our_identity=alice", "-T", "trust_cert=ca",
				"-T", "their_hostname=localhost", target, "1.3.6.1.2.1.1.5.0")
			cmd.Env = append(os.Environ(), "SNMPCONFPATH="+dir, "MIBS=", "HOME="+dir, "SNMP_PERSISTENT_DIR="+t.TempDir(), "OPENSSL_CONF="+osslConf)
			out, err := cmd.CombinedOutput()
			cancel()
			if err == nil {
				want = string(out)
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		got := tsnmpProcess(t, "get", "-d", "-On", "-t", "2", "-r", "0", "-T",
			"our_identity=alice,trust_cert=ca,their_hostname=localhost,resume=no,cert_dir="+dir, target, "1.3.6.1.2.1.1.5.0")
		w := mask.ReplaceAllString(strings.Join(lines.FindAllString(want, -1), "\n"), "N")
		g := mask.ReplaceAllString(strings.Join(lines.FindAllString(got.Stderr, -1), "\n"), "N")
		if got.Code != 0 || w == "" || w != g {
			t.Errorf("%s: tsnmp get -d (exit %d):\n%s\nNet-SNMP 5.9.5's snmpget -d:\n%s", domain, got.Code, g, w)
		}
	}
}
