package bench

import (
	"context"
	"crypto"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// tlsAgent is tsnmpd's TLS and DTLS side (RFC 6353, TSM): a CA, the
// agent's certificate for 127.0.0.1 and a client certificate mapped to
// the securityName "benchtls", in Net-SNMP's layout beside tsnmpd's
// configuration.
type tlsAgent struct {
	dir            string
	addr, dtlsAddr string
	conf           string
}

// prepareTLS makes the certificates in dir and returns the configuration
// lines and free ports.
func prepareTLS(dir string) (*tlsAgent, error) {
	if _, err := certs.NewPKI("", dir); err != nil {
		return nil, err
	}
	return newTLSAgent(dir)
}

// prepareTLSKey is prepareTLS with only the CA, the agent's certificate
// and alice's, each with a key made by gen.
func prepareTLSKey(dir string, gen func() (crypto.Signer, error)) (*tlsAgent, error) {
	mk := func(name string, t certs.Template, parent *certs.Issued) (*certs.Issued, error) {
		k, err := gen()
		if err != nil {
			return nil, err
		}
		is, err := certs.Issue(t, k, parent)
		if err != nil {
			return nil, err
		}
		_, err = is.Save(dir, name)
		return is, err
	}
	ca, err := mk("ca", certs.Template{CommonName: "tsnmp bench CA", CA: true}, nil)
	if err != nil {
		return nil, err
	}
	if _, err := mk("server", certs.Template{CommonName: "localhost", Server: true, DNSNames: []string{"localhost"},
		IPs: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}}, ca); err != nil {
		return nil, err
	}
	if _, err := mk("alice", certs.Template{CommonName: "Alice", Client: true, Emails: []string{"alice@example.com"}}, ca); err != nil {
		return nil, err
	}
	return newTLSAgent(dir)
}

// newTLSAgent picks the ports of an agent whose certificates are in dir.
func newTLSAgent(dir string) (*tlsAgent, error) {
	p1, err := FreePort()
	if err != nil {
		return nil, err
	}
	p2, err := FreePort()
	if err != nil {
		return nil, err
	}
	return &tlsAgent{dir: dir, addr: fmt.Sprintf("127.0.0.1:%d", p1), dtlsAddr: fmt.Sprintf("127.0.0.1:%d", p2),
		conf: "[snmp] localCert server\n[snmp] trustCert ca\ncertSecName 10 alice --sn benchtls\nrouser -s tsm benchtls authpriv\n"}, nil
}

// startTLSAgent starts a tsnmpd serving SNMP over TLS and DTLS (besides
// UDP and TCP) with a CA, agent and manager certificate whose keys are of
// type kt; it is stopped when the experiment ends, if not before.
func startTLSAgent(env *Env, kt keyType) (*tlsAgent, *Proc, error) {
	dir := filepath.Join(env.Dir, fmt.Sprintf("agents%d", agentSeq.Add(1)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	a, err := prepareTLSKey(dir, kt.gen)
	if err != nil {
		return nil, nil, err
	}
	conf := filepath.Join(dir, "tsnmpd.conf")
	if err := os.WriteFile(conf, []byte(agentConf+a.conf), 0o600); err != nil {
		return nil, nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, nil, err
	}
	p, err := harness.StartTsnmpd(nil, env.Tsnmpd, conf, filepath.Join(dir, "tsnmpd-state"), port, a.listenArgs()...)
	if err != nil {
		return nil, nil, err
	}
	env.Defer(p.Stop)
	if err := a.waitListener(); err != nil {
		return nil, nil, fmt.Errorf("%w\n%s", err, p.Log())
	}
	return a, p, nil
}

func (a *tlsAgent) listenArgs() []string {
	return []string{"--listen", "tls:" + a.addr, "--listen", "dtls:" + a.dtlsAddr}
}

// waitListener waits for the TLS listener.
func (a *tlsAgent) waitListener() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", a.addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tsnmpd's tls listener did not come up: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (a *tlsAgent) port(dtls bool) int {
	addr := a.addr
	if dtls {
		addr = a.dtlsAddr
	}
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

func (a *tlsAgent) target(dtls bool) string {
	if dtls {
		return "dtls:" + a.dtlsAddr
	}
	return "tls:" + a.addr
}

// params returns the manager's transport parameters; resume keeps
// tickets in cache (empty: no resumption).
func (a *tlsAgent) params(cache string) *manager.TransportParams {
	return &manager.TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, CertDirs: []string{a.dir},
		CacheDir: cache, NoResume: cache == ""}
}

// cliArgs returns tsnmp's options for the target.
func (a *tlsAgent) cliArgs(cache string) []string {
	t := "our_identity=alice,trust_cert=ca,cert_dir=" + a.dir
	if cache == "" {
		t += ",resume=no"
	} else {
		t += ",resume=yes,cache_dir=" + cache
	}
	return []string{"-v3", "-l", "authPriv", "-T", t}
}

// getTLS opens a session over TLS or DTLS, gets sysDescr.0 and closes it;
// it reports whether the session was resumed.
func (a *tlsAgent) getTLS(ctx context.Context, dtls bool, cache string) (bool, error) {
	tgt := a.target(dtls)
	c, err := a.params(cache).ClientConfig(tgt)
	if err != nil {
		return false, err
	}
	s, err := manager.DialSecure(ctx, tgt, manager.Config{Version: snmp.V3, Level: snmp.AuthPriv}, c)
	if err != nil {
		return false, err
	}
	defer s.Close()
	return s.Resumed(), getSysDescr(ctx, s)
}

// dial opens an SNMP session over TLS or DTLS without resumption.
func (a *tlsAgent) dial(ctx context.Context, dtls bool) (*manager.Session, error) {
	return a.dialWith(ctx, dtls, manager.Config{})
}

// dialWith is dial with the manager's timeout, retries and retransmission
// taken from cfg (version and level are always SNMPv3 authPriv).
func (a *tlsAgent) dialWith(ctx context.Context, dtls bool, cfg manager.Config) (*manager.Session, error) {
	tgt := a.target(dtls)
	c, err := a.params("").ClientConfig(tgt)
	if err != nil {
		return nil, err
	}
	cfg.Version, cfg.Level = snmp.V3, snmp.AuthPriv
	return manager.DialSecure(ctx, tgt, cfg, c)
}

// walkKind returns the walk kind opening sessions over TLS or DTLS with
// cfg's timers; Transport names it as the walk experiments do.
func (a *tlsAgent) walkKind(dtls, bulk bool, cfg manager.Config) walkKind {
	name := "v3/TSM/TLS/ap"
	if dtls {
		name = "v3/TSM/DTLS/ap"
	}
	return walkKind{Transport: name, Bulk: bulk,
		open: func(ctx context.Context) (*manager.Session, error) { return a.dialWith(ctx, dtls, cfg) }}
}
