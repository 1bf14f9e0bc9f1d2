package main

import (
	"bytes"
	"context"
	"crypto"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestMain lets tests run tsnmp as a process of its own: the test binary
// with TSNMP_TEST_MAIN=1 is tsnmp, with its file size limit set to
// TSNMP_TEST_FSIZE octets where that is set.
func TestMain(m *testing.M) {
	if os.Getenv("TSNMP_TEST_MAIN") == "1" {
		if v := os.Getenv("TSNMP_TEST_FSIZE"); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				fmt.Fprintln(os.Stderr, "TSNMP_TEST_FSIZE:", err)
				os.Exit(2)
			}
			var lim syscall.Rlimit
			err = syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim)
			if err == nil {
				lim.Cur = n
				err = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "file size limit:", err)
				os.Exit(2)
			}
		}
		os.Exit(run(context.Background(), "tsnmp", os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// tsnmpProcess runs tsnmp with args in a process of its own.
func tsnmpProcess(t *testing.T, args ...string) snmpdtest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TSNMP_TEST_MAIN=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return snmpdtest.Result{Stdout: o.String(), Stderr: e.String(), Code: code}
}

// TestRefusedResumptionProcesses: consecutive tsnmp processes against
// Net-SNMP 5.9.5, which refuses to resume TLS sessions. Every second
// process failed with "tls: internal error"; now each falls back to a
// full handshake (the second says so with -D) and later ones do not offer
// a ticket at all. The agent speaks TLS 1.2 here: its TLS 1.3 server
// sometimes leaves a request that arrives with the client's Finished
// unread (fixed in Net-SNMP after 5.9.5).
func TestRefusedResumptionProcesses(t *testing.T) {
	t.Parallel()
	testenv.Need(t, snmpdtest.NetSNMP595)
	dir := t.TempDir()
	if _, err := certs.NewPKI("", dir); err != nil {
		t.Fatal(err)
	}
	osslConf := filepath.Join(dir, "openssl.cnf")
	if err := os.WriteFile(osslConf, []byte("openssl_conf = c\n[c]\nssl_conf = s\n[s]\nsystem_default = d\n[d]\nProtocol = -TLSv1.3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, domain := range []string{"tls", "dtls"} {
		t.Run(domain, func(t *testing.T) {
			target := fmt.Sprintf("%s:127.0.0.1:%d", domain, testenv.FreePort(t))
			snmpdtest.StartSecure(t, snmpdtest.Secure{Snmpd: snmpdtest.NetSNMP595, Dir: dir, Listen: target,
				Hash: crypto.SHA1, Env: []string{"OPENSSL_CONF=" + osslConf}})
			cache := t.TempDir()
			args := []string{"get", "-D", "-On", "-t", "2", "-r", "0", "-T", "our_identity=alice,trust_cert=ca,their_hostname=localhost",
				"-T", "cert_dir=" + dir + ",cache_dir=" + cache, target, "1.3.6.1.2.1.1.5.0"}
			var r snmpdtest.Result
			for range 20 { // snmpd may still be opening its socket
				if r = tsnmpProcess(t, args...); r.Code == 0 {
					break
				}
				time.Sleep(250 * time.Millisecond)
			}
			if r.Code != 0 || !strings.HasPrefix(r.Stdout, ".1.3.6.1.2.1.1.5.0 = STRING: ") {
				t.Fatalf("first get: %d %q %q", r.Code, r.Stdout, r.Stderr)
			}
			want := r.Stdout
			for i := 2; i <= 3; i++ {
				r := tsnmpProcess(t, args...)
				if r.Code != 0 || r.Stdout != want {
					t.Fatalf("get %d: %d %q %q", i, r.Code, r.Stdout, r.Stderr)
				}
				refused := strings.Contains(r.Stderr, "retrying with a full handshake")
				if domain == "tls" && refused != (i == 2) {
					t.Errorf("get %d: refusal logged %v, want %v: %q", i, refused, i == 2, r.Stderr)
				}
			}
		})
	}
}

// TestCertificateErrorMessages: certificate problems are reported as such,
// not as "Unknown host" (Net-SNMP 5.9.5 as the agent).
func TestCertificateErrorMessages(t *testing.T) {
	t.Parallel()
	testenv.Need(t, snmpdtest.NetSNMP595)
	dir := t.TempDir()
	if _, err := certs.NewPKI("", dir); err != nil {
		t.Fatal(err)
	}
	target := fmt.Sprintf("tls:127.0.0.1:%d", testenv.FreePort(t))
	snmpdtest.StartSecure(t, snmpdtest.Secure{Snmpd: snmpdtest.NetSNMP595, Dir: dir, Listen: target, Hash: crypto.SHA1})
	for _, c := range []struct {
		params, want string
	}{
		{"our_identity=alice,trust_cert=otherca,their_hostname=localhost", "the agent's certificate is not trusted"},
		{"our_identity=alice,trust_cert=ca,their_hostname=agent.example", "the agent's certificate does not name agent.example"},
		{"our_identity=mallory,trust_cert=ca,their_hostname=localhost", "the agent refused our certificate"},
	} {
		r := tsnmpProcess(t, "get", "-t", "1", "-r", "0", "-T", c.params+",resume=no,cert_dir="+dir, target, "1.3.6.1.2.1.1.5.0")
		if r.Code != 1 || !strings.HasPrefix(r.Stderr, "snmpget: "+target+": "+c.want) || strings.Contains(r.Stderr, "Unknown host") {
			t.Errorf("-T %s: exit %d, stderr %q; want %q", c.params, r.Code, r.Stderr, c.want)
		}
	}
}

// TestPysnmpReportErrors: a pysnmp agent sets the reportable flag on its
// Reports; tsnmp prints what failed exactly as snmpget does (it printed
// "Timeout" before).
func TestPysnmpReportErrors(t *testing.T) {
	t.Parallel()
	agent := snmpdtest.StartPysnmp(t)
	for _, args := range [][]string{
		{"-l", "authNoPriv", "-u", "md5user", "-a", "MD5", "-A", "wrongpass1"},
		{"-l", "authPriv", "-u", "shaaes", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "wrongpriv1"},
		{"-l", "authNoPriv", "-u", "nobody", "-a", "MD5", "-A", "authpass1"},
		{"-l", "authPriv", "-u", "shaaes", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1"},
	} {
		r := same(t, "snmpget", append(append([]string{"-v3", "-t", "5", "-r", "1"}, args...), agent, "sysObjectID.0")...)
		if r.Code == 0 && !strings.Contains(r.Stdout, "sysObjectID.0 = OID:") {
			t.Errorf("%q: %q", args, r.Stdout)
		}
	}
}
