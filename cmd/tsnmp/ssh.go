package main

import (
	"errors"
	"strings"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
	tssh "github.com/tsnmp/tsnmp/ssh"
)

// openSSH opens a session to an ssh: agent (RFC 5592 with the Transport
// Security Model). -u names the SSH user (the agent's securityName; the
// login name by default), -l defaults to authPriv, and -T KEY=VALUE
// parameters choose keys, host key checking and resumption (see
// manager.SSHParams.Parse):
//
//	tsnmp get -T identity=~/.ssh/id_ed25519,host_key=SHA256:… ssh:agent.example sysDescr.0
func (a *app) openSSH() bool {
	var p manager.SSHParams
	for _, v := range a.o.transportParams {
		if err := p.Parse(v); err != nil {
			a.errorf("%s: %v\n", a.tool, err)
			return false
		}
	}
	cfg := a.o.cfg
	if a.o.level == "" {
		cfg.Level = snmp.AuthPriv
	}
	t, err := manager.SSHTarget(a.peer)
	if err != nil {
		a.errorf("%s: Unknown host (%s)\n", a.tool, a.peer)
		return false
	}
	c, err := p.ClientConfig(t.String(), cfg.User)
	if err != nil {
		a.errorf("%s: %v\n", a.tool, err)
		return false
	}
	s, err := manager.DialSSH(a.ctx, a.peer, cfg, c)
	if err != nil {
		var he *tssh.HostKeyError
		var ae *tssh.AuthError
		switch {
		case errors.As(err, &he):
			a.errorf("%s: %s: host key %s refused: %s (add it to known_hosts, pin it with -T host_key=%s, or -T accept_new=yes)\n",
				a.tool, a.peer, he.Fingerprint, he.Reason, he.Fingerprint)
		case errors.As(err, &ae):
			a.errorf("%s: %s: SSH authentication failed as %q\n", a.tool, a.peer, c.SSH.User)
		default:
			a.errorf("%s: Unknown host (%s) (%v)\n", a.tool, a.peer, strings.TrimPrefix(unwrapOp(err).Error(), "manager: "))
		}
		return false
	}
	a.sess = s
	return true
}
