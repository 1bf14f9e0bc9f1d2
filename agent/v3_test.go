package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

func TestNetSNMPv3(t *testing.T) {
	users := usm.NewUserTable()
	p := &Policy{Access: testAccess{}, SecurityModels: map[snmp.SecurityModel]security.Model{}}
	port, a := startAgent(t, p)
	auths := []string{"MD5", "SHA", "SHA-224", "SHA-256", "SHA-384", "SHA-512"}
	privs := []string{"DES", "AES", "AES192", "AES256", "AES192C", "AES256C"}
	add := func(name, auth, priv string) {
		ap, err := usm.ParseAuthProtocol(auth)
		if err != nil {
			t.Fatal(err)
		}
		pp := usm.PrivNone
		if priv != "" {
			if pp, err = usm.ParsePrivProtocol(priv); err != nil {
				t.Fatal(err)
			}
		}
		u, err := usm.NewUser(name, ap, []byte("authpass-"+auth), pp, []byte("privpass-"+priv))
		if err != nil {
			t.Fatal(err)
		}
		users.Add(a.State.EngineID, u)
	}
	for _, au := range auths {
		add("u-"+au, au, "")
		for _, pr := range privs {
			add("u-"+au+"-"+pr, au, pr)
		}
	}
	nu, _ := usm.NewUser("noauth", usm.AuthNone, nil, usm.PrivNone, nil)
	users.Add(a.State.EngineID, nu)
	m, err := usm.New(usm.Config{EngineID: a.State.EngineID, EngineBoots: a.State.Boots, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	p.SecurityModels[snmp.SecurityModelUSM] = m
	a.SetPolicy(p)
	target := fmt.Sprintf("udp:127.0.0.1:%d", port)
	want := `.1.3.6.1.2.1.1.1.0 = STRING: "tsnmp test agent"`
	get := func(args ...string) (string, error) {
		return run(t, "snmpget", append(append([]string{"-v3", "-On", "-r", "0", "-t", "2"}, args...), target, ".1.3.6.1.2.1.1.1.0")...)
	}
	if out, err := get("-u", "noauth", "-l", "noAuthNoPriv"); err != nil || strings.TrimSpace(out) != want {
		t.Errorf("noAuthNoPriv: %v %q", err, out)
	}
	for _, au := range auths {
		if out, err := get("-u", "u-"+au, "-l", "authNoPriv", "-a", au, "-A", "authpass-"+au); err != nil || strings.TrimSpace(out) != want {
			t.Errorf("authNoPriv %s: %v %q", au, err, out)
		}
		for _, pr := range privs {
			out, err := get("-u", "u-"+au+"-"+pr, "-l", "authPriv", "-a", au, "-A", "authpass-"+au, "-x", pr, "-X", "privpass-"+pr)
			if err != nil || strings.TrimSpace(out) != want {
				t.Errorf("authPriv %s/%s: %v %q", au, pr, err, out)
			}
		}
	}
	// Failures give Net-SNMP's own error reports.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-u", "nobody", "-l", "noAuthNoPriv"}, "Unknown user name"},
		{[]string{"-u", "u-SHA", "-l", "authNoPriv", "-a", "SHA", "-A", "wrongpassword"}, "Authentication failure"},
		{[]string{"-u", "u-SHA", "-l", "authPriv", "-a", "SHA", "-A", "authpass-SHA", "-x", "AES", "-X", "privpass-x"}, "Unsupported security level"},
		{[]string{"-u", "u-SHA-AES", "-l", "authPriv", "-a", "SHA", "-A", "authpass-SHA", "-x", "AES", "-X", "wrongprivpass"}, "Timeout"},
	} {
		out, err := get(c.args...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("%v: %v %q, want %q", c.args, err, out, c.want)
		}
	}
	if n := m.Stats().Get(usm.DecryptionErrors); n == 0 {
		// A wrong privacy password decrypts to garbage: either the
		// decryption fails or the ScopedPDU does not parse.
		if a.Stats.InASNParseErrs.Load() == 0 {
			t.Error("wrong privacy key neither counted as decryption error nor parse error")
		}
	}
	if m.Stats().Get(usm.UnknownUserNames) == 0 || m.Stats().Get(usm.WrongDigests) == 0 {
		t.Error("usmStats not counted")
	}
}
