package config

import (
	"strings"
	"testing"
	"time"
)

const sshArgon = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"

func TestSSHYAML(t *testing.T) {
	c, err := ParseYAML("t.yaml", []byte(`
listen: [ssh:127.0.0.1:5161]
ssh:
  host_keys: [/etc/tsnmp/ssh_host_ed25519_key]
  authorized_keys:
    alice: /etc/tsnmp/keys/alice
  authorized_keys_dir: /etc/tsnmp/keys.d
  passwords:
    bob: "`+sshArgon+`"
  ciphers: [aes128-gcm@openssh.com]
  allow_none: true
  resumption_lifetime: 30m
  ticket_rotation: 10m
  max_sessions: 10
  idle_timeout: 60
user_access:
  - user: alice
    model: tsm
    level: authpriv
`))
	if err != nil {
		t.Fatal(err)
	}
	s := c.SSH
	if s.HostKeys[0] != "/etc/tsnmp/ssh_host_ed25519_key" || s.Passwords["bob"] != sshArgon || !s.AllowNone ||
		time.Duration(s.ResumptionLifetime) != 30*time.Minute || time.Duration(s.TicketRotation) != 10*time.Minute ||
		s.MaxSessions != 10 || time.Duration(s.IdleTimeout) != time.Minute || s.Ciphers[0] != "aes128-gcm@openssh.com" {
		t.Fatalf("%+v", s)
	}
	if s.AuthorizedKeysFile("alice") != "/etc/tsnmp/keys/alice" || s.AuthorizedKeysFile("carol") != "/etc/tsnmp/keys.d/carol" {
		t.Fatal("authorized keys lookup")
	}
	for _, bad := range []string{"", "..", "../root", "a/b"} {
		if f := s.AuthorizedKeysFile(bad); f != "" {
			t.Fatalf("user %q: %q", bad, f)
		}
	}
	if err := s.CheckSSH(); err != nil {
		t.Fatal(err)
	}
	s.Passwords["eve"] = "clear text"
	if err := s.CheckSSH(); err == nil {
		t.Fatal("clear-text password accepted")
	}
}

func TestSSHSnmpdConf(t *testing.T) {
	c, err := ParseSnmpdConf("snmpd.conf", []byte(`
sshHostKey /k/host
sshAuthorizedKeys alice /k/alice.pub
sshAuthorizedKeysDir /k/users
sshPassword bob `+sshArgon+`
sshAllowNone yes
sshCiphers aes256-gcm@openssh.com,none
sshMACs hmac-sha2-256:none
sshResumption no
sshResumptionLifetime 600
sshMaxSessions 5
sshtosnmpSocket /var/run/sshtosnmp
rouser -s tsm alice authpriv
`))
	if err != nil {
		t.Fatal(err)
	}
	s := c.SSH
	if s.HostKeys[0] != "/k/host" || s.AuthorizedKeys["alice"] != "/k/alice.pub" || s.AuthorizedKeysDir != "/k/users" ||
		s.Passwords["bob"] != sshArgon || !s.AllowNone || !s.NoResumption || s.MaxSessions != 5 ||
		time.Duration(s.ResumptionLifetime) != 10*time.Minute ||
		strings.Join(s.Ciphers, " ") != "aes256-gcm@openssh.com none" || strings.Join(s.MACs, " ") != "hmac-sha2-256 none" {
		t.Fatalf("%+v", s)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "sshtosnmpSocket") {
		t.Fatalf("warnings %v", c.Warnings)
	}
	c, err = ParseSnmpdConf("snmpd.conf", []byte("sshResumption cache\n"))
	if err != nil || c.SSH.NoResumption || strings.Join(c.SSH.ResumptionMethods, ",") != "cache" {
		t.Fatalf("sshResumption cache: %+v %v", c.SSH, err)
	}
	if err := (&SSH{ResumptionMethods: StringList{"psychic"}}).CheckSSH(); err == nil {
		t.Fatal("unknown resumption method accepted")
	}
	for _, bad := range []string{"sshPassword bob secret", "sshAuthorizedKeys alice", "sshMaxSessions -1", "sshAllowNone maybe", "sshResumptionLifetime x"} {
		if _, err := ParseSnmpdConf("snmpd.conf", []byte(bad+"\n")); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
