package tls_test

import (
	"context"
	"crypto"
	gotls "crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/internal/connset"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// delayFirst answers the first message of each session 2 s late, from
// a goroutine of its own, by when the agent's session has parked: the
// answer goes out on the parked session, and the manager's next message
// wakes it.
type delayFirst struct {
	h       transport.Handler
	mu      sync.Mutex
	seen    map[any]time.Time
	delayed atomic.Int64
	late    atomic.Int64 // messages answered after the session parked
}

func (d *delayFirst) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	d.mu.Lock()
	first, ok := d.seen[ref.Session]
	if !ok {
		d.seen[ref.Session] = time.Now()
	}
	d.mu.Unlock()
	if !ok {
		d.delayed.Add(1)
		resp := d.h.ServeSNMP(ref, msg, nil)
		go func() {
			time.Sleep(2 * time.Second)
			ref.Session.(net.Conn).Write(resp)
		}()
		return nil
	}
	if time.Since(first) > 1200*time.Millisecond {
		d.late.Add(1)
	}
	return d.h.ServeSNMP(ref, msg, out)
}

// tsmAgent serves sysName.0 to carol over TLS on a listener of its own.
func tsmAgent(t *testing.T, p *certs.PKI) (*tlstm.Server, *delayFirst) {
	t.Helper()
	st, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tree mib.Tree
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 1}, &mib.Scalars{Prefix: snmp.OID{1, 3, 6, 1, 2, 1, 1},
		Objects: []mib.Scalar{{Sub: 5, Get: func(*mib.Request) snmp.Value { return snmp.StringValue("parked agent") }}}})
	cfg, err := config.ParseSnmpdConf("test.conf", []byte("rouser -s tsm carol authpriv\n"))
	if err != nil {
		t.Fatal(err)
	}
	acm, err := cfg.BuildVACM()
	if err != nil {
		t.Fatal(err)
	}
	a := &agent.Agent{Tree: &tree, State: st}
	a.RegisterEngine(&tree)
	a.SetPolicy(&agent.Policy{Access: agent.VACMAccess{VACM: acm},
		SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelTSM: tsm.New(false, nil)}})
	m, err := tlstm.NewCertToTSN([]tlstm.Rule{{Priority: 10, Fingerprint: certs.Compute(crypto.SHA256, p.CA.Cert), Map: tlstm.MapCN}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &delayFirst{h: a, seen: map[any]time.Time{}}
	s, err := tlstm.NewServer(l, d, &tlstm.ServerConfig{Certificates: []gotls.Certificate{p.Server.TLS()},
		TrustAnchors: []*x509.Certificate{p.CA.Cert}, Map: m}, &tlstm.Options{Stats: new(tlstm.Stats)})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s, d
}

// maxParked samples connset.Parked until stop is closed.
func maxParked(stop chan struct{}) *atomic.Int64 {
	var m atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if n := int64(connset.Parked()); n > m.Load() {
				m.Store(n)
			}
		}
	}()
	return &m
}

// TestNetSNMP595ParkedSession: Net-SNMP 5.9.5's snmpget, over TLS 1.2 and
// TLS 1.3, gets the answer to its first message (RFC 5343's probe) 2 s
// late, sent on the agent's session after it parked (no goroutine, no
// buffer, no cipher objects); its get then wakes the session, which
// answers in the agent's own record layer.
func TestNetSNMP595ParkedSession(t *testing.T) {
	snmpget := testenv.NeedNetSNMP595(t, "bin/snmpget")
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	tls12 := filepath.Join(dir, "openssl-tls12.cnf")
	os.WriteFile(tls12, []byte("openssl_conf = c\n[c]\nssl_conf = s\n[s]\nsystem_default = d\n[d]\nProtocol = -TLSv1.3\n"), 0o644)
	for _, tc := range []struct{ name, opensslConf string }{{"TLS 1.2", tls12}, {"TLS 1.3", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			s, d := tsmAgent(t, p)
			stop := make(chan struct{})
			parked := maxParked(stop)
			cmd := exec.Command(snmpget, "-v3", "-On", "-t", "5", "-r", "0", "-T", "our_identity=carol", "-T", "trust_cert=ca",
				"-T", "their_hostname=localhost", "tls:"+s.Addr().String(), ".1.3.6.1.2.1.1.5.0")
			cmd.Env = append(os.Environ(), "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+t.TempDir(), "MIBS=", "MIBDIRS=/dev/null")
			if tc.opensslConf != "" {
				cmd.Env = append(cmd.Env, "OPENSSL_CONF="+tc.opensslConf)
			}
			out, err := cmd.CombinedOutput()
			close(stop)
			if err != nil || !strings.Contains(string(out), `.1.3.6.1.2.1.1.5.0 = STRING: "parked agent"`) {
				t.Fatalf("snmpget: %v\n%s\nsessions %d, delayed %d", err, out, s.Stats().Get(tlstm.SessionAccepts), d.delayed.Load())
			}
			if n := s.Stats().Get(tlstm.SessionAccepts); n != 1 {
				t.Errorf("%d sessions; want snmpget's retry on its one session", n)
			}
			if d.delayed.Load() != 1 || d.late.Load() == 0 || parked.Load() == 0 {
				t.Errorf("answered late %d, answered after parking %d, parked at most %d: the session did not park and wake",
					d.delayed.Load(), d.late.Load(), parked.Load())
			}
		})
	}
}

// TestManagerParkedSession: tsnmp's manager keeps a session across
// pauses in which the agent's session parks; the first answer comes on
// the parked session, and later requests wake it.
func TestManagerParkedSession(t *testing.T) {
	dir := t.TempDir()
	p, err := certs.NewPKI("", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []uint16{gotls.VersionTLS12, gotls.VersionTLS13} {
		t.Run(fmt.Sprintf("%x", max), func(t *testing.T) {
			s, d := tsmAgent(t, p)
			params := manager.TransportParams{OurIdentity: "carol", TrustCert: []string{"ca"}, TheirHostname: "localhost",
				CertDirs: []string{dir}, NoResume: true}
			target := "tls:" + s.Addr().String()
			c, err := params.ClientConfig(target)
			if err != nil {
				t.Fatal(err)
			}
			c.MaxVersion = max
			sess, err := manager.DialSecure(context.Background(), target, manager.Config{Timeout: 5 * time.Second, Retries: -1}, c)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			stop := make(chan struct{})
			parked := maxParked(stop)
			for i := 0; i < 2; i++ {
				pdu, err := sess.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0})
				if err != nil || len(pdu.VarBinds) != 1 || string(pdu.VarBinds[0].Value.Bytes) != "parked agent" {
					t.Fatalf("get %d: %v %v", i, pdu, err)
				}
				time.Sleep(1600 * time.Millisecond)
			}
			close(stop)
			if d.late.Load() < 1 || parked.Load() == 0 {
				t.Errorf("%d answers after the session parked, parked at most %d", d.late.Load(), parked.Load())
			}
		})
	}
}
