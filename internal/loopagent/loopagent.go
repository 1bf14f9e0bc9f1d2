// Package loopagent starts an in-process tsnmp agent that serves one MIB
// tree over SNMP (UDP and TCP on loopback) and over HTTP (plain HTTP and
// https on loopback), for tests and the web-services experiments.
package loopagent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/ifmib"
	"github.com/tsnmp/tsnmp/mib/system"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
	"github.com/tsnmp/tsnmp/webmgmt"
)

// DefaultConfig is the agent configuration Start uses when Options.Config
// is empty: community public read-only and private read-write from
// loopback, "sys" reading only the system group, USM users alice
// (read-write) and bob (system group only), and the TLS client
// certificate of PKI.Alice mapped (by its rfc822Name) to the TSM name
// alice@example.com, read-only.
const DefaultConfig = `
communities:
  - community: public
    source: [127.0.0.0/8, "::1/128"]
  - community: private
    source: [127.0.0.0/8, "::1/128"]
    access: rw
  - community: sys
    source: [127.0.0.0/8, "::1/128"]
    oid: .1.3.6.1.2.1.1
users:
  - name: alice
    auth: SHA-256
    auth_password: alice-auth-pass
    priv: AES
    priv_password: alice-priv-pass
    access: rw
  - name: bob
    auth: SHA
    auth_password: bob-auth-pass
    access: ro
    oid: .1.3.6.1.2.1.1
user_access:
  - user: alice@example.com
    model: tsm
    level: priv
`

// Options configure Start.
type Options struct {
	// Config is the agent's YAML configuration (DefaultConfig if empty).
	Config string
	// IfCacheTTL is the ifTable cache lifetime; tests that compare two
	// reads use a long one so that both see the same snapshot.
	IfCacheTTL time.Duration
	// Rows, when positive, serves a synthetic ifTable of Rows rows
	// (ifTable and ifNumber only) instead of the kernel's interfaces.
	Rows int
	// Descr is sysDescr.0 (default "tsnmp webmgmt test agent").
	Descr string
	// NoTLS skips the https listener.
	NoTLS bool
	// Handler is passed to webmgmt.New (Agent, Users and CertNames are
	// filled in).
	Handler webmgmt.Config
}

// Agent is a running agent.
type Agent struct {
	Agent   *agent.Agent
	USM     *usm.USM
	IfMIB   *ifmib.MIB // nil with Options.Rows
	Handler *webmgmt.Handler
	PKI     *certs.PKI // nil with NoTLS

	SNMPAddr string // host:port of the UDP and TCP listeners
	HTTPURL  string // http://127.0.0.1:port
	HTTPSURL string // https://127.0.0.1:port

	servers []interface{ Close() error }
	dir     string
}

// Start starts an agent on loopback.
func Start(o Options) (*Agent, error) {
	if o.Config == "" {
		o.Config = DefaultConfig
	}
	cfg, err := config.ParseYAML("loopagent.yaml", []byte(o.Config))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "loopagent")
	if err != nil {
		return nil, err
	}
	a := &Agent{dir: dir}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	st, err := engine.Open(dir, nil)
	if err != nil {
		return nil, err
	}
	a.USM, err = usm.New(usm.Config{EngineID: st.EngineID, EngineBoots: st.Boots, Users: usm.NewUserTable()})
	if err != nil {
		return nil, err
	}
	if o.Descr == "" {
		o.Descr = "tsnmp webmgmt test agent"
	}
	var tree mib.Tree
	system.New(system.Config{Descr: o.Descr, Start: st.Start(),
		Contact: system.Setting{Value: "ops@example.com"}, Location: system.Setting{Value: "lab"},
		Name: system.Setting{Value: "agent"}}).Register(&tree)
	if o.Rows > 0 {
		RegisterSyntheticIfTable(&tree, o.Rows, st.Start())
	} else {
		a.IfMIB = ifmib.New(ifmib.Config{CacheTTL: o.IfCacheTTL, Start: st.Start()})
		a.IfMIB.Register(&tree)
	}
	a.Agent = &agent.Agent{Tree: &tree, State: st}
	a.Agent.Stats.Register(&tree)
	p, err := cfg.Policy(config.PolicyOptions{USM: a.USM})
	if err != nil {
		return nil, err
	}
	a.Agent.SetPolicy(p)

	// SNMP over UDP and TCP on one port.
	var udp, tcp transport.Server
	for i := 0; i < 20 && tcp == nil; i++ {
		if udp, err = transport.Listen(transport.Address{Domain: transport.UDP, Network: "udp4", Host: "127.0.0.1"}, a.Agent, nil); err != nil {
			return nil, err
		}
		port := udp.Addr().(*net.UDPAddr).Port
		tcp, err = transport.Listen(transport.Address{Domain: transport.TCP, Network: "tcp4", Host: "127.0.0.1", Port: port}, a.Agent, nil)
		if err != nil {
			udp.Close()
			udp, tcp = nil, nil
		}
	}
	if tcp == nil {
		return nil, fmt.Errorf("no free port for UDP and TCP: %v", err)
	}
	a.SNMPAddr = udp.Addr().String()
	for _, s := range []transport.Server{udp, tcp} {
		a.servers = append(a.servers, s)
		go s.Serve()
	}

	hc := o.Handler
	hc.Agent, hc.Users = a.Agent, a.USM
	if !o.NoTLS {
		if a.PKI, err = certs.NewPKI("", ""); err != nil {
			return nil, err
		}
		m, err := tlstm.NewCertToTSN([]tlstm.Rule{{Priority: 1, Fingerprint: certs.Compute(crypto256, a.PKI.CA.Cert), Map: tlstm.MapRFC822}})
		if err != nil {
			return nil, err
		}
		roots := x509.NewCertPool()
		roots.AddCert(a.PKI.CA.Cert)
		hc.CertNames = webmgmt.TSMCertMapper(&tlstm.ClientIdentity{Map: m, Roots: roots})
	}
	a.Handler = webmgmt.New(hc)
	hs, err := webmgmt.Listen(webmgmt.ServerConfig{Addr: "127.0.0.1:0", Handler: a.Handler})
	if err != nil {
		return nil, err
	}
	a.servers = append(a.servers, hs)
	go hs.Serve()
	a.HTTPURL = "http://" + hs.Addr().String()
	if !o.NoTLS {
		tc := &tls.Config{Certificates: []tls.Certificate{a.PKI.Server.TLS()}, ClientAuth: tls.RequestClientCert}
		hs, err := webmgmt.Listen(webmgmt.ServerConfig{Addr: "127.0.0.1:0", Handler: a.Handler, TLS: tc})
		if err != nil {
			return nil, err
		}
		a.servers = append(a.servers, hs)
		go hs.Serve()
		a.HTTPSURL = "https://" + hs.Addr().String()
	}
	ok = true
	return a, nil
}

// ClientTLS returns a TLS configuration trusting the agent's certificate,
// presenting cert when it is not nil.
func (a *Agent) ClientTLS(cert *certs.Issued) *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(a.PKI.CA.Cert)
	c := &tls.Config{RootCAs: roots, ServerName: "localhost"}
	if cert != nil {
		c.Certificates = []tls.Certificate{cert.TLS()}
	}
	return c
}

// Close stops the agent.
func (a *Agent) Close() {
	for _, s := range a.servers {
		s.Close()
	}
	if a.IfMIB != nil {
		a.IfMIB.Close()
	}
	os.RemoveAll(a.dir)
}

// WaitReady waits until the HTTP listener answers.
func (a *Agent) WaitReady(ctx context.Context) error {
	host := a.HTTPURL[len("http://"):]
	for {
		c, err := net.Dial("tcp", host)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Port returns the SNMP port.
func (a *Agent) Port() int {
	_, p, _ := net.SplitHostPort(a.SNMPAddr)
	n, _ := strconv.Atoi(p)
	return n
}
