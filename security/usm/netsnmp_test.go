package usm

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// buildUsmcheck compiles testdata/netsnmp/usmcheck.c against libnetsnmp,
// skipping the test when the C toolchain or Net-SNMP headers are missing.
func buildUsmcheck(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping Net-SNMP interoperability in -short mode")
	}
	cfg, err := exec.LookPath("net-snmp-config")
	if err != nil {
		t.Skip("net-snmp-config not installed")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	libs, err := exec.Command(cfg, "--libs").Output()
	if err != nil {
		t.Skipf("net-snmp-config --libs: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "usmcheck")
	args := append([]string{"-o", bin, "testdata/netsnmp/usmcheck.c"}, strings.Fields(string(libs))...)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Skipf("cannot build usmcheck (libsnmp-dev missing?): %v\n%s", err, out)
	}
	return bin
}

func runUsmcheck(t *testing.T, bin string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "SNMPCONFPATH="+home, "SNMP_PERSISTENT_DIR="+home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("usmcheck %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestNetSNMPMessages exchanges complete messages with the Net-SNMP
// library for every protocol combination: Net-SNMP builds a GetRequest that
// tsnmp's USM (as the agent) must accept, and Net-SNMP must accept tsnmp's
// Response.
func TestNetSNMPMessages(t *testing.T) {
	bin := buildUsmcheck(t)
	eid := []byte{0x80, 0x00, 0x1f, 0x88, 0x80, 0xe9, 0xbd, 0x0c, 0x1d, 0x12, 0x66, 0x7a, 0x51}
	eidHex := hex.EncodeToString(eid)
	for _, a := range AuthProtocols() {
		for _, pr := range PrivProtocols() {
			if a == AuthNone && pr != PrivNone {
				continue
			}
			name := a.String() + "/" + pr.String()
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				user := mustUser(t, "user"+fmt.Sprint(int(a)*10+int(pr)), a, pr, "netsnmp-auth-pw", "netsnmp-priv-pw")
				users := NewUserTable()
				users.Add(eid, user)
				clock := newClock()
				agent, err := New(Config{EngineID: eid, EngineBoots: 7, Users: users, Now: clock.Now})
				if err != nil {
					t.Fatal(err)
				}
				clock.Advance(1000 * time.Second)
				level := snmp.NoAuthNoPriv
				authName, authPW, privName, privPW := "-", "-", "-", "-"
				if a != AuthNone {
					level, authName, authPW = snmp.AuthNoPriv, a.String(), "netsnmp-auth-pw"
				}
				if pr != PrivNone {
					level, privName, privPW = snmp.AuthPriv, pr.String(), "netsnmp-priv-pw"
				}
				common := []string{eidHex, "7", "1000", user.Name(), authName, authPW, privName, privPW}

				out := runUsmcheck(t, bin, append(append([]string{"build"}, common...), fmt.Sprint(int(level)), "4242")...)
				req, ok := strings.CutPrefix(out, "ok ")
				if !ok {
					t.Fatalf("Net-SNMP build: %s", out)
				}
				msg, err := hex.DecodeString(req)
				if err != nil {
					t.Fatal(err)
				}
				in, err := agent.ProcessIncoming(nil, msg, nil)
				if err != nil {
					t.Fatalf("tsnmp rejected Net-SNMP request: %v", err)
				}
				var s snmp.ScopedPDU
				if err := s.Unmarshal(in.ScopedPDU); err != nil {
					t.Fatal(err)
				}
				if s.PDU.Type != snmp.GetRequest || s.PDU.RequestID != 4242 || in.Level != level || in.SecurityName != user.Name() {
					t.Fatalf("decoded %v %d %v %q", s.PDU.Type, s.PDU.RequestID, in.Level, in.SecurityName)
				}

				resp := scoped(t, snmp.Response, 4242, eid,
					snmp.VarBind{Name: snmp.MustParseOID("1.3.6.1.2.1.1.1.0"), Value: snmp.StringValue("tsnmp agent")})
				wire, err := agent.GenerateResponse(nil, &snmp.V3Message{MsgID: 4242, MaxSize: 65507, Flags: snmp.LevelFlags(level)}, in.State, resp)
				if err != nil {
					t.Fatal(err)
				}
				got := runUsmcheck(t, bin, append(append([]string{"parse"}, common...), hex.EncodeToString(wire))...)
				want := fmt.Sprintf("ok %d 4242 %s %d 1", int(snmp.Response), user.Name(), int(level))
				if got != want {
					t.Fatalf("Net-SNMP parsed tsnmp response as %q, want %q", got, want)
				}
				if level == snmp.AuthNoPriv || level == snmp.AuthPriv {
					// The harness must notice a wrong key.
					bad := append([]string{"parse"}, common...)
					bad[6] = "wrong-password"
					if got := runUsmcheck(t, bin, append(bad, hex.EncodeToString(wire))...); !strings.HasPrefix(got, "err") {
						t.Fatalf("Net-SNMP accepted a response under the wrong password: %q", got)
					}
				}
			})
		}
	}
}

// TestNetSNMPKeyChange checks EncodeKeyChange against Net-SNMP's
// decode_keychange for key lengths shorter than, equal to and longer than
// the hash output.
func TestNetSNMPKeyChange(t *testing.T) {
	bin := buildUsmcheck(t)
	for _, a := range AuthProtocols()[1:] {
		for _, n := range []int{16, a.DigestLen(), 32, 48} {
			oldKey := make([]byte, n)
			newKey := make([]byte, n)
			random := make([]byte, n)
			for i := range n {
				oldKey[i], newKey[i], random[i] = byte(i), byte(0xff-i), byte(3*i+1)
			}
			kc, err := EncodeKeyChange(a, oldKey, newKey, random)
			if err != nil {
				t.Fatal(err)
			}
			got := runUsmcheck(t, bin, "keychange", a.String(), hex.EncodeToString(oldKey), hex.EncodeToString(kc))
			if got != "ok "+hex.EncodeToString(newKey) {
				t.Errorf("%v/%d: Net-SNMP decoded %s", a, n, got)
			}
		}
	}
}
