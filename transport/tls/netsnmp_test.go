package tls_test

import (
	"bufio"
	"context"
	"crypto"
	gotls "crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// startSnmpd595 runs Net-SNMP 5.9.5's snmpd on listen with its
// configuration directory dir (which holds the PKI) and the given
// configuration lines; it returns the agent's log.
func startSnmpd595(t *testing.T, dir, listen, conf string) *testenv.LogBuffer {
	t.Helper()
	snmpd := testenv.NeedNetSNMP595(t, "sbin/snmpd")
	persist := filepath.Join(dir, "persist")
	os.MkdirAll(persist, 0o700)
	confPath := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(confPath, []byte(fmt.Sprintf("[snmp] persistentDir %s\n%s\n", persist, conf)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(snmpd, "-f", "-Lo", "-C", "-c", confPath, "-p", filepath.Join(dir, "pid"), listen)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS="+dir, "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+persist)
	out := &testenv.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited }) // our child, by its PID
	// snmpd logs its version once its listeners are open.
	deadline := time.After(15 * time.Second)
	for !strings.Contains(out.String(), "NET-SNMP version") {
		select {
		case <-exited:
			t.Fatalf("snmpd exited:\n%s", out.String())
		case <-deadline:
			t.Fatalf("snmpd did not start in 15 s:\n%s", out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return out
}

// TestNetSNMP595MapsByCA: Net-SNMP 5.9.5's snmpd maps tsnmp's manager by
// the SHA-1 fingerprint of its CA (certSecName 10 --sha1 CAFP --cn), the
// most common rule, which matches only when the manager sends its chain:
// Net-SNMP consults the certificates the peer sent, not its own store.
// Over TLS 1.2, TLS 1.3 and DTLS 1.2. carol's certificate file holds no
// chain; her CA comes from the manager's trust store (trust_cert).
func TestNetSNMP595MapsByCA(t *testing.T) {
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	tlsAddr := fmt.Sprintf("tls:127.0.0.1:%d", port)
	dtlsAddr := fmt.Sprintf("dtls:127.0.0.1:%d", port)
	log := startSnmpd595(t, dir, tlsAddr+","+dtlsAddr, fmt.Sprintf(`[snmp] localCert server
[snmp] trustCert ca
certSecName 10 --sha1 %s --cn
rouser -s tsm carol authpriv
`, certs.Compute(crypto.SHA1, p.CA.Cert).Hex()))
	params := manager.TransportParams{OurIdentity: "carol", TrustCert: []string{"ca"}, TheirHostname: "localhost",
		CertDirs: []string{dir}, NoResume: true}
	for _, tc := range []struct {
		target string
		max    uint16
	}{
		{tlsAddr, gotls.VersionTLS12},
		{tlsAddr, gotls.VersionTLS13},
		{dtlsAddr, 0},
	} {
		pdu, err := snmpGet(t, tc.target, params, tc.max)
		if err != nil || len(pdu.VarBinds) != 1 || pdu.VarBinds[0].Value.Type != snmp.OctetString {
			t.Errorf("%s (max version %x): %v %v", tc.target, tc.max, pdu, err)
		}
	}
	if t.Failed() {
		t.Log("snmpd:\n" + log.String())
	}
}

func snmpGet(t *testing.T, target string, params manager.TransportParams, maxVersion uint16) (*snmp.PDU, error) {
	t.Helper()
	c, err := params.ClientConfig(target)
	if err != nil {
		t.Fatal(err)
	}
	c.MaxVersion = maxVersion
	s, err := manager.DialSecure(context.Background(), target, manager.Config{Timeout: 2 * time.Second, Retries: 2}, c)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0})
}

// TestNetSNMP595ChecksPurpose: Net-SNMP 5.9.5's snmpd refuses a manager
// whose certificate's extended key usage is serverAuth only ("unsuitable
// certificate purpose"), which tsnmp's agent now refuses too
// (TestPurpose); carol's clientAuth certificate from the same CA, under
// the same rule, is accepted.
func TestNetSNMP595ChecksPurpose(t *testing.T) {
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	target := fmt.Sprintf("tls:127.0.0.1:%d", testenv.FreePort(t))
	log := startSnmpd595(t, dir, target, fmt.Sprintf(`[snmp] localCert server
[snmp] trustCert ca
certSecName 10 --sha1 %s --cn
rouser -s tsm carol authpriv
rouser -s tsm localhost authpriv
`, certs.Compute(crypto.SHA1, p.CA.Cert).Hex()))
	params := manager.TransportParams{TrustCert: []string{"ca"}, TheirHostname: "localhost", CertDirs: []string{dir}, NoResume: true}
	params.OurIdentity = "carol"
	if _, err := snmpGet(t, target, params, gotls.VersionTLS12); err != nil {
		t.Fatalf("carol: %v\n%s", err, log.String())
	}
	params.OurIdentity = "server" // serverAuth only
	if _, err := snmpGet(t, target, params, gotls.VersionTLS12); err == nil {
		t.Errorf("Net-SNMP accepted a serverAuth-only manager certificate")
	}
	// snmpd logs why it refused once the handshake has failed, which may
	// be after the manager read its alert.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), "unsuitable certificate purpose"); {
		if time.Now().After(deadline) {
			t.Fatalf("snmpd did not refuse for the certificate's purpose (nothing logged in 10 s):\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNetSNMP595RequestWithFinished: Net-SNMP 5.9.5's snmpd reads TLS
// with OpenSSL's read-ahead, taking all its socket holds, but handles
// one record each time the socket becomes readable. Over TLS 1.3 the
// manager's first request can follow its Finished so closely that the
// agent reads both in the handshake's last read; the request then waits
// unread until more octets arrive. tsnmp's manager sends the first
// request of a stream again after Timeout, which wakes the agent: it
// answers the first copy, then reads the second. The manager writes
// its next request only once the second copy is answered too, else
// that request would be read with the copy and left unread in turn.
//
// A relay between them (coalesce) makes both arrivals happen every
// time instead of when the agent is slow to come back to its socket.
func TestNetSNMP595RequestWithFinished(t *testing.T) {
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	agentAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	log := startSnmpd595(t, dir, "tls:"+agentAddr, fmt.Sprintf(`[snmp] localCert server
[snmp] trustCert ca
certSecName 10 --sha1 %s --cn
rouser -s tsm carol authpriv
`, certs.Compute(crypto.SHA1, p.CA.Cert).Hex()))
	relay := coalesce(t, agentAddr)
	target := "tls:" + relay
	params := manager.TransportParams{OurIdentity: "carol", TrustCert: []string{"ca"}, TheirHostname: "localhost",
		CertDirs: []string{dir}, NoResume: true}
	c, err := params.ClientConfig(target)
	if err != nil {
		t.Fatal(err)
	}
	s, err := manager.DialSecure(context.Background(), target, manager.Config{Timeout: 2 * time.Second, Retries: 2}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The first request is RFC 5343's probe, the agent's snmpEngineID;
	// the gets follow it.
	for i := 0; i < 2; i++ {
		pdu, err := s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0})
		if err != nil || len(pdu.VarBinds) != 1 || pdu.VarBinds[0].Value.Type != snmp.OctetString {
			t.Fatalf("get %d: %v %v\nsnmpd:\n%s", i+1, pdu, err, log.String())
		}
	}
	if n := s.Retransmissions(); n != 1 {
		t.Errorf("%d retransmissions, want 1: the agent did not leave the first request unread, or later ones were left too", n)
	}
}

// coalesce relays one TLS connection to agent (host:port) and returns
// its own address. It passes on the manager's records so that they
// arrive as at an agent that is slow to read:
//   - the last flight of the manager's TLS 1.3 handshake (change cipher
//     spec, then Certificate, CertificateVerify and Finished, each in an
//     application_data record) and the first request, in one write;
//   - of the next record (the first request sent again), its first
//     octet at once, and the rest in one write with the record after it,
//     or alone once the manager has sent nothing for 500 ms.
//
// Everything after that is passed on as it comes, as are the agent's
// records to the manager.
func coalesce(t *testing.T, agent string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		m, err := ln.Accept()
		if err != nil {
			return
		}
		defer m.Close()
		a, err := net.Dial("tcp", agent)
		if err != nil {
			t.Errorf("relay: %v", err)
			return
		}
		defer a.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(m, a)
			m.Close()
		}()
		r := bufio.NewReader(m)
		// record reads one record; a pause of quiet ends the wait.
		record := func(quiet time.Duration) ([]byte, error) {
			if quiet > 0 {
				m.SetReadDeadline(time.Now().Add(quiet))
				defer m.SetReadDeadline(time.Time{})
			}
			h, err := r.Peek(5)
			if err != nil {
				return nil, err
			}
			rec := make([]byte, 5+(int(h[3])<<8|int(h[4])))
			_, err = io.ReadFull(r, rec)
			return rec, err
		}
		hello, err := record(0)
		if err != nil {
			return
		}
		a.Write(hello)
		var held []byte
		for data := 0; data < 4; {
			rec, err := record(time.Second)
			if err != nil {
				break
			}
			held = append(held, rec...)
			if rec[0] == 23 {
				data++
			}
		}
		a.Write(held)
		rec, err := record(0)
		if err != nil {
			return
		}
		a.Write(rec[:1])
		held = rec[1:]
		if next, err := record(500 * time.Millisecond); err == nil {
			held = append(held, next...)
		}
		a.Write(held)
		io.Copy(a, r)
	}()
	return ln.Addr().String()
}
