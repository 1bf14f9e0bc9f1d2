package manager_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

func keyFiles(t *testing.T, dir string) []string {
	t.Helper()
	fs, _ := filepath.Glob(filepath.Join(dir, "usm-keys-*"))
	return fs
}

func getOnce(cfg manager.Config, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := manager.Dial(ctx, addr, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Get(ctx, sysDescr)
	return err
}

// TestKeyCache: with a key cache, a session stores the user's keys
// localized to the agent's engine (0600 in a 0700 directory), and a later
// session with the same user, protocols and passwords uses them: keys
// spoilt in the file cost a refused request (two more datagrams), after
// which the keys from the passwords are used and cached again. A
// different password never takes the cached keys nor replaces them, and
// authNoPriv, authPriv with key extension and a second agent each get a
// file of their own.
func TestKeyCache(t *testing.T) {
	a := snmpdtest.Start(t, agentConf)
	p := startProxy(t, a.Addr("udp")[len("udp:"):])
	addr := p.Addr()
	dir := filepath.Join(t.TempDir(), "cache")
	cfg := manager.Config{Version: snmp.V3, User: "sha256aes", Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA256,
		AuthPassword: "authpass-1", PrivProtocol: usm.PrivAES128, PrivPassword: "privpass-1", Timeout: 2 * time.Second,
		KeyCache: &manager.KeyCache{Dir: dir}}
	if err := getOnce(cfg, addr); err != nil {
		t.Fatal(err)
	}
	fs := keyFiles(t, dir)
	if len(fs) != 1 {
		t.Fatalf("%d key files after one session, want 1", len(fs))
	}
	if st, err := os.Stat(fs[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, mode %v; want 0600", err, st.Mode())
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("key directory: %v, mode %v; want 0700", err, st.Mode())
	}
	p.Datagrams()
	if err := getOnce(cfg, addr); err != nil {
		t.Fatalf("second session, from the cache: %v", err)
	}
	if n := len(p.Datagrams()); n != 4 {
		t.Errorf("session with cached keys: %d datagrams, want 4", n)
	}

	// A wrong password is not covered by the cached keys.
	bad := cfg
	bad.AuthPassword = "authpass-X"
	var re *manager.ReportError
	if err := getOnce(bad, addr); !errors.As(err, &re) || re.Counter != usm.WrongDigests {
		t.Errorf("wrong password with a cached key: %v, want an authentication failure", err)
	}

	// The keys come from the file: spoil them (keeping the check value).
	b, err := os.ReadFile(fs[0])
	if err != nil {
		t.Fatal(err)
	}
	spoilt := append([]byte(nil), b...)
	spoilt[len(spoilt)-1] ^= 0xff // last octet of the privacy key
	spoilt[8+16+32+1] ^= 0xff     // first octet of the authentication key
	os.WriteFile(fs[0], spoilt, 0o600)
	p.Datagrams()
	if err := getOnce(cfg, addr); err != nil {
		t.Fatalf("spoilt cached keys: %v", err)
	}
	if n := len(p.Datagrams()); n != 6 {
		t.Errorf("session with spoilt cached keys: %d datagrams, want 6 (the refused request, then the right one)", n)
	}
	if b2, _ := os.ReadFile(fs[0]); len(b2) != len(b) {
		t.Errorf("spoilt cache file not replaced")
	}
	if err := getOnce(cfg, addr); err != nil {
		t.Fatalf("replaced cache: %v", err)
	}
	if n := len(p.Datagrams()); n != 4 {
		t.Errorf("session with the replaced cache: %d datagrams, want 4", n)
	}

	// A damaged file counts as absent, and is replaced.
	os.WriteFile(fs[0], b[:20], 0o600)
	if err := getOnce(cfg, addr); err != nil {
		t.Fatalf("damaged cache file: %v", err)
	}
	if b2, _ := os.ReadFile(fs[0]); len(b2) != len(b) {
		t.Errorf("damaged cache file not replaced: %d octets", len(b2))
	}

	// Other users and protocols get files of their own.
	des := manager.Config{Version: snmp.V3, User: "sha512des", Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA512,
		AuthPassword: "authpass-2", PrivProtocol: usm.PrivDES, PrivPassword: "privpass-2", Timeout: 2 * time.Second,
		KeyCache: cfg.KeyCache}
	md5 := manager.Config{Version: snmp.V3, User: "md5", Level: snmp.AuthNoPriv, AuthProtocol: usm.AuthMD5,
		AuthPassword: "authpass-3", Timeout: 2 * time.Second, KeyCache: cfg.KeyCache}
	for _, c := range []manager.Config{des, md5, des, md5} {
		if err := getOnce(c, addr); err != nil {
			t.Fatalf("%s: %v", c.User, err)
		}
	}
	if n := len(keyFiles(t, dir)); n != 3 {
		t.Errorf("%d key files for three users, want 3", n)
	}

	// Another agent (engine) gets its own file.
	a2 := snmpdtest.Start(t, agentConf)
	if err := getOnce(cfg, a2.Addr("udp")); err != nil {
		t.Fatal(err)
	}
	if n := len(keyFiles(t, dir)); n != 4 {
		t.Errorf("%d key files after a second agent, want 4", n)
	}
}
