package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// agentConf serves both agents the same way: Net-SNMP's snmpd reads it as
// is, tsnmpd through --snmpd-conf. The USM users follow the papers:
// HMAC-MD5 and AES-128, one user per security level.
const agentConf = `engineID tsnmpbench
rocommunity public 127.0.0.1
createUser benchnn
createUser benchan MD5 benchauthpass
createUser benchap MD5 benchauthpass AES benchprivpass
createUser bench SHA-256 benchauthpass AES benchprivpass
rouser benchnn noauth
rouser benchan auth
rouser benchap priv
rouser bench priv
`

// Security levels as the resumption paper names them.
var levels = []struct {
	Short string
	Level snmp.SecurityLevel
	User  string
}{{"nn", snmp.NoAuthNoPriv, "benchnn"}, {"an", snmp.AuthNoPriv, "benchan"}, {"ap", snmp.AuthPriv, "benchap"}}

// usmConfig returns the manager configuration of the user for a level.
func usmConfig(level snmp.SecurityLevel) manager.Config {
	c := manager.Config{Version: snmp.V3, Level: level}
	switch level {
	case snmp.NoAuthNoPriv:
		c.User = "benchnn"
	case snmp.AuthNoPriv:
		c.User, c.AuthProtocol, c.AuthPassword = "benchan", usm.AuthMD5, "benchauthpass"
	default:
		c.User, c.AuthProtocol, c.AuthPassword, c.PrivProtocol, c.PrivPassword = "benchap", usm.AuthMD5, "benchauthpass", usm.PrivAES128, "benchprivpass"
	}
	return c
}

// usmArgs returns Net-SNMP command-line flags for the user of a level.
func usmArgs(level snmp.SecurityLevel) []string {
	switch level {
	case snmp.NoAuthNoPriv:
		return []string{"-v3", "-l", "noAuthNoPriv", "-u", "benchnn"}
	case snmp.AuthNoPriv:
		return []string{"-v3", "-l", "authNoPriv", "-u", "benchan", "-a", "MD5", "-A", "benchauthpass"}
	}
	return []string{"-v3", "-l", "authPriv", "-u", "benchap", "-a", "MD5", "-A", "benchauthpass", "-x", "AES", "-X", "benchprivpass"}
}

var sysDescr0 = snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}
var systemOID = snmp.OID{1, 3, 6, 1, 2, 1, 1}
var ifTableOID = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2}

// agents are tsnmpd and Net-SNMP's snmpd serving agentConf, each on its
// own port. snmpd is nil (and Missing says why) when it is not installed.
type agents struct {
	tsnmpd, snmpd *Proc
	Missing       string
	// ssh and tls are tsnmpd's SSH, TLS and DTLS sides when started with
	// startAgentsSSH.
	ssh *sshAgent
	tls *tlsAgent
}

// list returns the running agents, tsnmpd first.
func (a *agents) list() []*Proc {
	ps := []*Proc{a.tsnmpd}
	if a.snmpd != nil {
		ps = append(ps, a.snmpd)
	}
	return ps
}

var agentSeq atomic.Int32

// startAgents starts both agents (in ns when not nil), stopped when the
// experiment ends. Extra arguments go to tsnmpd.
func startAgents(env *Env, ns *netns.NS, extra ...string) (*agents, error) {
	return startAgentsWith(env, ns, false, extra...)
}

// startAgentsSSH is startAgents with tsnmpd also serving SNMP over SSH.
func startAgentsSSH(env *Env, ns *netns.NS) (*agents, error) {
	return startAgentsWith(env, ns, true)
}

func startAgentsWith(env *Env, ns *netns.NS, withSSH bool, extra ...string) (*agents, error) {
	dir := filepath.Join(env.Dir, fmt.Sprintf("agents%d", agentSeq.Add(1)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte(agentConf), 0o600); err != nil {
		return nil, err
	}
	var a agents
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	tconf := conf
	if withSSH {
		if a.ssh, err = prepareSSH(dir); err != nil {
			return nil, err
		}
		if a.tls, err = prepareTLS(dir); err != nil {
			return nil, err
		}
		tconf = filepath.Join(dir, "tsnmpd.conf")
		if err := os.WriteFile(tconf, []byte(agentConf+a.ssh.conf+a.tls.conf), 0o600); err != nil {
			return nil, err
		}
		extra = append(extra, "--listen", "ssh:"+a.ssh.sshAddr)
		extra = append(extra, a.tls.listenArgs()...)
	}
	if a.tsnmpd, err = harness.StartTsnmpd(ns, env.Tsnmpd, tconf, filepath.Join(dir, "tsnmpd-state"), port, extra...); err != nil {
		return nil, err
	}
	env.Defer(a.tsnmpd.Stop)
	if withSSH {
		a.ssh.proc = a.tsnmpd
		if err := do(ns, a.ssh.waitListener); err != nil {
			return nil, err
		}
		if err := do(ns, a.tls.waitListener); err != nil {
			return nil, fmt.Errorf("%w\n%s", err, a.tsnmpd.Log())
		}
	}
	if peerPath("snmpd") == "" {
		a.Missing = "Net-SNMP's snmpd is not installed (apt-get install snmpd snmp): its column is empty"
		return &a, nil
	}
	sd := filepath.Join(dir, "snmpd-state")
	os.MkdirAll(sd, 0o700)
	if port, err = FreePort(); err != nil {
		return nil, err
	}
	if a.snmpd, err = harness.StartSnmpd(ns, conf, sd, port); err != nil {
		return nil, err
	}
	env.Defer(a.snmpd.Stop)
	return &a, nil
}

// nsCacheCommunity can read and write NET-SNMP-AGENT-MIB's nsCache group
// (1.3.6.1.4.1.8072.1.5, where snmpd lists its caches and their
// timeouts) from 127.0.0.1, and nothing else.
const nsCacheCommunity = "benchcache"

// startSnmpdCacheWritable starts one more Net-SNMP snmpd (in ns when not
// nil) serving agentConf and nsCacheCommunity, so that its caches'
// timeouts can be set, named name and stopped when the experiment ends.
// The configuration is its own: the other agents' files do not have the
// community.
func startSnmpdCacheWritable(env *Env, ns *netns.NS, name string) (*Proc, error) {
	if peerPath("snmpd") == "" {
		return nil, errors.New("bench: Net-SNMP's snmpd is not installed (apt-get install snmpd snmp)")
	}
	dir := filepath.Join(env.Dir, fmt.Sprintf("agents%d", agentSeq.Add(1)))
	if err := os.MkdirAll(filepath.Join(dir, "snmpd-state"), 0o700); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "snmpd.conf")
	text := agentConf + "rwcommunity " + nsCacheCommunity + " 127.0.0.1 .1.3.6.1.4.1.8072.1.5\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	p, err := harness.StartSnmpd(ns, conf, filepath.Join(dir, "snmpd-state"), port)
	if err != nil {
		return nil, err
	}
	p.Name = name
	env.Defer(p.Stop)
	return p, nil
}

// do runs fn in ns, or here when ns is nil.
func do(ns *netns.NS, fn func() error) error {
	if ns == nil {
		return fn()
	}
	return ns.Do(fn)
}

// needRoot returns why an experiment needing namespaces cannot run, or "".
func needRoot() string {
	if err := netns.Available(); err != nil {
		return "this experiment creates network namespaces and " + err.Error() + "; run tsnmp bench as root"
	}
	return ""
}

// timed runs fn and returns its duration.
func timed(fn func() error) (time.Duration, error) {
	t := time.Now()
	err := fn()
	return time.Since(t), err
}

// oneGet opens a session to target, gets sysDescr.0 and closes it.
func oneGet(ctx context.Context, target string, cfg manager.Config) error {
	s, err := manager.Dial(ctx, target, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	return getSysDescr(ctx, s)
}

// getSysDescr gets sysDescr.0 in session s and checks the answer.
func getSysDescr(ctx context.Context, s *manager.Session) error {
	p, err := s.Get(ctx, sysDescr0)
	if err != nil {
		return err
	}
	if len(p.VarBinds) != 1 || p.VarBinds[0].Value.Type != snmp.OctetString {
		return fmt.Errorf("bench: unexpected answer to get sysDescr.0 from %s: %v", s.Target().Spec, p.VarBinds)
	}
	return nil
}

// serveEach accepts connections on l until it is closed and hands each
// to handle in a goroutine of its own, closing it afterwards.
func serveEach(l net.Listener, handle func(net.Conn)) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			handle(c)
		}()
	}
}
