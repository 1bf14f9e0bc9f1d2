package agent

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// Net-SNMP's agents do not serve SNMP-USM-DH-OBJECTS-MIB, so the
// Diffie-Hellman key change (RFC 2786) is recorded between Net-SNMP's
// snmpusm and this agent and replayed, as TestNetSNMPReplay does: with
// -update each case runs snmpusm changekey against an agent whose
// private values come from a fixed source, and writes the exchanges and
// what snmpusm printed to testdata/netsnmp; without it, the recorded
// requests are replayed into an agent in the same state, which must
// answer byte for byte as recorded and end with the keys snmpusm printed.
//
//	go test ./agent -run TestUSMDHReplay -update

type dhReplayCase struct {
	name string
	args []string // snmpusm's arguments after the target
	user string   // whose keys change
}

var dhReplayList = []dhReplayCase{
	// rw changes bob's keys (usmDHUserAuthKeyChange, usmDHUserPrivKeyChange).
	{"dh-changekey-user", []string{"-u", "rw", "-l", "authNoPriv", "-a", "SHA", "-A", "authpass1234", "-x", "DES", "changekey", "bob"}, "bob"},
	// rw changes its own authentication key (usmDHUserOwnAuthKeyChange).
	{"dh-changekey-own", []string{"-Ca", "-u", "rw", "-l", "authNoPriv", "-a", "SHA", "-A", "authpass1234", "changekey"}, "rw"},
}

// dhReplayAgent is the recorded agent: the replay engine ID, a stopped
// clock, users rw (SHA) and bob (SHA, DES), and usmDHUserKeyTable whose
// private values come from a ChaCha8 stream of a fixed seed.
func dhReplayAgent(t *testing.T) (*Agent, *USMUsers) {
	t.Helper()
	st, err := engine.Open(t.TempDir(), replayEngineID)
	if err != nil {
		t.Fatal(err)
	}
	users := usm.NewUserTable()
	for _, u := range []struct {
		name string
		priv usm.PrivProtocol
	}{{"rw", usm.PrivNone}, {"bob", usm.PrivDES}} {
		us, err := usm.NewUser(u.name, usm.AuthSHA1, []byte("authpass1234"), u.priv, []byte("privpass1234"))
		if err != nil {
			t.Fatal(err)
		}
		users.Add(st.EngineID, us)
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := usm.New(usm.Config{EngineID: st.EngineID, EngineBoots: st.Boots, Users: users, Now: func() time.Time { return epoch }, Salts: new(usm.SaltSource)})
	if err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, st, &Policy{Access: testAccess{}, SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelUSM: m}})
	src := &lockedReader{r: rand.NewChaCha8([32]byte{'r', 'f', 'c', '2', '7', '8', '6'})}
	tab := a.RegisterUSMUsers(a.Tree, USMUsersOptions{DHRand: src})
	return a, tab
}

type lockedReader struct {
	mu sync.Mutex
	r  *rand.ChaCha8
}

func (l *lockedReader) Read(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(b)
}

func TestUSMDHReplay(t *testing.T) {
	for _, c := range dhReplayList {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join("testdata", "netsnmp", c.name+".txt")
			if *update {
				recordDH(t, c, file)
			}
			a, tab := dhReplayAgent(t)
			ref := &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:50000")}
			before := userKeys(t, tab, c.user)
			var got []byte
			for i, e := range readExchanges(t, file) {
				got = a.ServeSNMP(ref, e.req, make([]byte, 0, 65536))
				if !bytes.Equal(got, e.resp) {
					t.Errorf("exchange %d: request\n%s\nanswered\n%s\nrecorded\n%s", i+1, describe(e.req), describe(got), describe(e.resp))
				}
			}
			if s := summary(got); s != "Response noError" {
				t.Errorf("the set was answered %q", s)
			}
			// The keys snmpusm printed are the ones the agent installed.
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			after := userKeys(t, tab, c.user)
			printed := regexp.MustCompile(`# \| new (auth|priv) key: 0x([0-9a-f]+)`).FindAllStringSubmatch(string(data), -1)
			if len(printed) == 0 {
				t.Fatalf("%s: no key printed", file)
			}
			for _, m := range printed {
				if after[m[1]] != m[2] {
					t.Errorf("%s key: snmpusm printed %s, the agent installed %s", m[1], m[2], after[m[1]])
				}
				if after[m[1]] == before[m[1]] {
					t.Errorf("%s key unchanged", m[1])
				}
			}
			if len(printed) == 1 && after["priv"] != before["priv"] {
				t.Error("-Ca changed the privacy key")
			}
		})
	}
}

// userKeys returns a user's keys in hex.
func userKeys(t *testing.T, tab *USMUsers, name string) map[string]string {
	t.Helper()
	for _, r := range tab.Rows() {
		if r.Name == name {
			return map[string]string{"auth": hex.EncodeToString(r.AuthKey), "priv": hex.EncodeToString(r.PrivKey)}
		}
	}
	t.Fatalf("no row of %s", name)
	return nil
}

// recordDH runs snmpusm against a dhReplayAgent on a UDP socket and
// writes the exchanges and snmpusm's output to file.
func recordDH(t *testing.T, c dhReplayCase, file string) {
	prog := testenv.Need(t, "snmpusm")
	a, _ := dhReplayAgent(t)
	rec := &recorder{a: a}
	port := testenv.FreePort(t)
	addr, _ := transport.ParseAddress(fmt.Sprintf("udp:127.0.0.1:%d", port), 0)
	s, err := transport.Listen(addr, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	var opts, rest []string
	for i, x := range c.args {
		if x == "changekey" {
			opts, rest = c.args[:i], c.args[i:]
		}
	}
	args := append(append([]string{"-M", "/dev/null", "-m", "", "-v3", "-r", "0", "-t", "2"}, opts...), fmt.Sprintf("udp:127.0.0.1:%d", port))
	args = append(args, rest...)
	cmd := exec.Command(prog, args...)
	dir := t.TempDir()
	cmd.Env = append(os.Environ(), "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+dir, "HOME="+dir)
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "SNMPv3 Key(s) successfully changed.") {
		t.Fatalf("snmpusm %s:\n%s", strings.Join(args, " "), out)
	}
	rec.mu.Lock()
	x := rec.x
	rec.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "# snmpusm %s (Net-SNMP %s)\n", strings.Join(c.args, " "), netSNMPVersion(prog))
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "Created directory") {
			fmt.Fprintf(&b, "# | %s\n", l)
		}
	}
	for _, e := range x {
		fmt.Fprintf(&b, "> %x\n", e.req)
		if e.resp == nil {
			b.WriteString("< -\n")
		} else {
			fmt.Fprintf(&b, "< %x\n", e.resp)
		}
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUSMDHRestoreFreshValues: after Restore (a reload, which may have
// removed a user and made it again), usmDHUserKeyTable gives a new public
// value: the private value of before is not used again (RFC 2786: a new
// xa upon the creation of a row).
func TestUSMDHRestoreFreshValues(t *testing.T) {
	_, tab := dhReplayAgent(t)
	s := dhSlot{userKey{string(replayEngineID), "bob"}, dhColAuthKeyChange}
	v1, err := tab.u.dhValue(s)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := tab.u.dhValue(s); !bytes.Equal(v.y, v1.y) {
		t.Fatal("a second read gave another value: the value must stay until a set")
	}
	tab.Restore(tab.Rows())
	v2, err := tab.u.dhValue(s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(v2.y, v1.y) || v2.x.Cmp(v1.x) == 0 {
		t.Error("after Restore, usmDHUserAuthKeyChange still holds the private value of before")
	}
}
