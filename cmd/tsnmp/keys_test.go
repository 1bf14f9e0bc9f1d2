package main

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestKeysLikeNetSNMP gives snmpget and tsnmp get the users' keys
// instead of their passwords: master keys (-3m, -3M), keys localized to
// the agent's engine (-3k, -3K), mixed with passwords, in snmp.conf
// (defAuthMasterKey, defPrivMasterKey, defAuthLocalizedKey,
// defPrivLocalizedKey) and wrong, against snmpd.
func TestKeysLikeNetSNMP(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	empty := t.TempDir()
	t.Setenv("SNMPCONFPATH", empty)
	a := snmpdtest.Start(t, communities+`
createUser kaes SHA authpass-kaes AES privpass-kaes
rwuser kaes priv
createUser kdes MD5 authpass-kdes DES privpass-kdes
rwuser kdes priv
createUser k256 SHA-256 authpass-k256 AES256 privpass-k256
rwuser k256 priv
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := manager.Dial(ctx, a.Addr("udp"), manager.Config{Version: snmp.V3, User: "kaes", Level: snmp.AuthPriv,
		AuthProtocol: usm.AuthSHA1, AuthPassword: "authpass-kaes", PrivProtocol: usm.PrivAES128, PrivPassword: "privpass-kaes"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, snmp.MustParseOID("1.3.6.1.2.1.1.1.0")); err != nil {
		t.Fatal(err)
	}
	engine := s.EngineID()
	s.Close()
	type user struct {
		name, auth, priv string
		a                usm.AuthProtocol
		p                usm.PrivProtocol
	}
	for _, u := range []user{{"kaes", "SHA", "AES", usm.AuthSHA1, usm.PrivAES128}, {"kdes", "MD5", "DES", usm.AuthMD5, usm.PrivDES},
		{"k256", "SHA-256", "AES-256", usm.AuthSHA256, usm.PrivAES256}} {
		aKu, err := usm.PasswordToKey(u.a, []byte("authpass-"+u.name))
		if err != nil {
			t.Fatal(err)
		}
		pKu, _ := usm.PasswordToKey(u.a, []byte("privpass-"+u.name))
		aKul, err := usm.LocalizeKey(u.a, aKu, engine)
		if err != nil {
			t.Fatal(err)
		}
		pKul, err := usm.LocalizePrivKey(u.a, u.p, pKu, engine)
		if err != nil {
			t.Fatal(err)
		}
		x := hex.EncodeToString
		base := []string{"-v3", "-u", u.name, "-l", "authPriv", "-a", u.auth, "-x", u.priv, "-t", "1", "-r", "1"}
		for _, keys := range [][]string{
			{"-3m", x(aKu), "-3M", x(pKu)},
			{"-3k", x(aKul), "-3K", x(pKul)},
			{"-3m", "0x" + x(aKu), "-A", "authpass-" + u.name, "-3K", x(pKul)},
			{"-3k" + x(aKul), "-X", "privpass-" + u.name},
			{"-3m=" + x(aKu), "-3M", x(pKu), "-A", "wrong-password"},
		} {
			t.Run(u.name, func(t *testing.T) {
				same(t, "snmpget", append(append(append([]string(nil), base...), keys...), a.Addr("udp"), "1.3.6.1.2.1.1.5.0")...)
			})
		}
		// Wrong keys are refused by the agent as wrong passwords are.
		wrong := append([]byte(nil), aKul...)
		wrong[0] ^= 1
		same(t, "snmpget", append(append([]string(nil), base...), "-3k", x(wrong), "-3K", x(pKul), a.Addr("udp"), "1.3.6.1.2.1.1.5.0")...)
		// snmp.conf's keys, and how they rank with passphrases.
		for _, conf := range []string{
			"defAuthMasterKey " + x(aKu) + "\ndefPrivMasterKey " + x(pKu) + "\n",
			"defAuthLocalizedKey " + x(aKul) + "\ndefPrivLocalizedKey " + x(pKul) + "\n",
			"defAuthMasterKey " + x(aKu) + "\ndefAuthPassphrase wrong-password\ndefPrivLocalizedKey " + x(pKul) + "\n",
			"defAuthLocalizedKey " + x(wrong) + "\ndefAuthPassphrase authpass-" + u.name + "\ndefPrivPassphrase privpass-" + u.name + "\n",
		} {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "snmp.conf"), []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("SNMPCONFPATH", dir)
			args := append(append([]string(nil), base...), a.Addr("udp"), "1.3.6.1.2.1.1.5.0")
			want := netsnmpWithConf(t, dir, "snmpget", args...)
			got := runTsnmp(t, "snmpget", args...)
			if got.Stdout != want.Stdout || got.Stderr != want.Stderr || got.Code != want.Code {
				t.Errorf("snmp.conf\n%s: tsnmp get (%d):\n%s%s\nsnmpget (%d):\n%s%s", conf, got.Code, got.Stdout, got.Stderr, want.Code, want.Stdout, want.Stderr)
			}
			t.Setenv("SNMPCONFPATH", empty)
		}
	}
	same(t, "snmpget", "-v3", "-u", "kaes", "-l", "authNoPriv", "-3m", "zz", a.Addr("udp"), "sysName.0")
	same(t, "snmpget", "-v3", "-u", "kaes", "-l", "authNoPriv", "-3q", "00", a.Addr("udp"), "sysName.0")
	same(t, "snmpget", "-v3", "-u", "kaes", "-l", "authNoPriv", a.Addr("udp"), "sysName.0", "-3m")
}
