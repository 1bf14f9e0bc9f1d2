package main

import (
	"context"
	"crypto"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestReloadFailureAppliesNothing: a reload whose new listen address
// cannot be opened is reported as failed and is: nothing of the new
// configuration applies. The agent keeps presenting its old certificate
// to new TLS sessions, a USM user the new file adds does not get in, and
// the old user and address still answer; the log does not also report
// the reload as done.
func TestReloadFailureAppliesNothing(t *testing.T) {
	bin := buildDaemon(t)
	users := "createUser ops SHA-256 authpass123 AES privpass123\nrouser ops authpriv\n"
	dir, pki, conf := tlsSetup(t, users)
	udp, tls := testenv.FreePort(t), testenv.FreePort(t)
	base, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	addrs := fmt.Sprintf("agentaddress udp:127.0.0.1:%d,tls:127.0.0.1:%d\n", udp, tls)
	if err := os.WriteFile(conf, append(append([]byte{}, base...), addrs...), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDaemon(t, bin, nil, "--state-dir", t.TempDir(), "--snmpd-conf", conf)
	target := fmt.Sprintf("tls:127.0.0.1:%d", tls)
	pin := func(is *certs.Issued) manager.TransportParams {
		return manager.TransportParams{OurIdentity: "alice", TheirIdentity: "sha256:" + certs.Compute(crypto.SHA256, is.Cert).Hex(),
			CertDirs: []string{dir}, NoResume: true}
	}
	usmGet := func(user string) error {
		s, err := manager.Dial(context.Background(), fmt.Sprintf("udp:127.0.0.1:%d", udp), manager.Config{Version: snmp.V3, User: user,
			Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA256, AuthPassword: "authpass123", PrivProtocol: usm.PrivAES128, PrivPassword: "privpass123",
			Timeout: 500 * time.Millisecond, Retries: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.Get(context.Background(), sysDescr0)
		return err
	}
	if _, _, err := secureGet(t, target, pin(pki.Server), snmp.AuthPriv, sysDescr0); err != nil {
		t.Fatalf("TLS session before the reload: %v\n%s", err, p.log)
	}
	if err := usmGet("ops"); err != nil {
		t.Fatalf("USM user ops before the reload: %v\n%s", err, p.log)
	}

	// The new file: another certificate, another user, and an address
	// that is in use.
	key, _ := certs.GenerateKey("")
	srv2, err := certs.Issue(certs.Template{CommonName: "localhost", Server: true, DNSNames: []string{"localhost"},
		IPs: []net.IP{net.ParseIP("127.0.0.1")}}, key, pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv2.Save(dir, "server2"); err != nil {
		t.Fatal(err)
	}
	busy, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	next := strings.Replace(string(base), "localCert server", "localCert server2", 1) +
		"createUser dev SHA-256 authpass123 AES privpass123\nrouser dev authpriv\n" + addrs +
		fmt.Sprintf("agentaddress udp:127.0.0.1:%d\n", busy.LocalAddr().(*net.UDPAddr).Port)
	if err := os.WriteFile(conf, []byte(next), 0o600); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.log.String(), "reload failed"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no \"reload failed\" after SIGHUP:\n%s", p.log)
		}
	}
	if strings.Contains(p.log.String(), "configuration reloaded") {
		t.Errorf("a failed reload also reported as done:\n%s", p.log)
	}
	if _, _, err := secureGet(t, target, pin(pki.Server), snmp.AuthPriv, sysDescr0); err != nil {
		t.Errorf("after a failed reload a new TLS session does not get the running certificate: %v\n%s", err, p.log)
	}
	if _, _, err := secureGet(t, target, pin(srv2), snmp.AuthPriv, sysDescr0); err == nil {
		t.Error("after a failed reload a new TLS session gets the certificate of the refused file")
	}
	if err := usmGet("dev"); err == nil {
		t.Error("after a failed reload the user only the refused file creates gets in")
	}
	if err := usmGet("ops"); err != nil {
		t.Errorf("after a failed reload the running user ops is refused: %v", err)
	}
}
