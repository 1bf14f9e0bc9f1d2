package agent

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// The SNMPv3 error paths are tested against recorded exchanges with
// Net-SNMP's snmpget, as crypto/tls tests replay OpenSSL transcripts: with
// -update, each case runs snmpget against an agent with a fixed engine ID,
// boots and clock and writes what was sent and answered to
// testdata/netsnmp; without it, the recorded requests are replayed
// in-process into an agent in the same state, which must answer them
// byte for byte as recorded. So these tests run where Net-SNMP is not
// installed, and -update checks again that snmpget reads the answers as
// the errors they are.
//
//	go test ./agent -run TestNetSNMPReplay -update
var update = flag.Bool("update", false, "record the Net-SNMP exchanges in testdata/netsnmp anew (needs snmpget)")

// replayEngineID is the engine ID of the recorded agent.
var replayEngineID = []byte{0x80, 0x00, 0x1f, 0x88, 0x04, 't', 's', 'n', 'm', 'p', '-', 'r', 'e', 'p', 'l', 'a', 'y'}

// replayUsers are the recorded agent's users (SHA-1 authentication, DES
// privacy: every Net-SNMP build has them).
var replayUsers = []struct {
	name     string
	auth     usm.AuthProtocol
	priv     usm.PrivProtocol
	authPass string
	privPass string
}{
	{"noauth", usm.AuthNone, usm.PrivNone, "", ""},
	{"authuser", usm.AuthSHA1, usm.PrivNone, "authpass1234", ""},
	{"privuser", usm.AuthSHA1, usm.PrivDES, "authpass1234", "privpass1234"},
}

// replayCase is one snmpget run and what it must print.
type replayCase struct {
	name string
	// args are snmpget's arguments before the target.
	args []string
	oids []string
	// want is a line snmpget prints (recorded with -update).
	want string
	// last is what the agent's last answer must be: a PDU type and an
	// error status or the Report's varbind name (checked on replay too).
	last string
	// policy adjusts the agent's policy.
	policy func(p *Policy)
	// uptime is the agent's snmpEngineTime.
	uptime time.Duration
	// craft, if set, derives one more request from the recorded ones
	// (an exchange snmpget cannot be made to send); its answer is
	// recorded with the others.
	craft func(t *testing.T, recorded []exchange) []byte
}

type exchange struct{ req, resp []byte }

var (
	sysDescr0  = ".1.3.6.1.2.1.1.1.0"
	authArgs   = []string{"-u", "authuser", "-l", "authNoPriv", "-a", "SHA", "-A", "authpass1234"}
	replayList = []replayCase{
		{name: "ok-authnopriv", args: authArgs, oids: []string{sysDescr0},
			want: `.1.3.6.1.2.1.1.1.0 = STRING: "tsnmp test agent"`, last: "Response noError"},
		{name: "unknown-user", args: []string{"-u", "nobody", "-l", "noAuthNoPriv"}, oids: []string{sysDescr0},
			want: "Unknown user name", last: "Report 1.3.6.1.6.3.15.1.1.3.0"},
		{name: "unsupported-seclevel", args: []string{"-u", "noauth", "-l", "authNoPriv", "-a", "SHA", "-A", "authpass1234"}, oids: []string{sysDescr0},
			want: "Unsupported security level", last: "Report 1.3.6.1.6.3.15.1.1.1.0"},
		{name: "wrong-digest", args: []string{"-u", "authuser", "-l", "authNoPriv", "-a", "SHA", "-A", "wrongpass1234"}, oids: []string{sysDescr0},
			want: "Authentication failure (incorrect password, community or key)", last: "Report 1.3.6.1.6.3.15.1.1.5.0"},
		// A request to another engine ID gets usmStatsUnknownEngineIDs
		// from this engine, which snmpget does not accept as an answer
		// (snmpd 5.9.3 answers the same, and snmpget times out the same).
		{name: "unknown-engine-id", args: append([]string{"-e", "0x80001f8804756e6b6e6f776e"}, authArgs...), oids: []string{sysDescr0},
			want: "Timeout", last: "Report 1.3.6.1.6.3.15.1.1.4.0"},
		// snmpget's notion of the agent's time lags by 1000 s: the agent
		// answers notInTimeWindows at authNoPriv, snmpget takes the time
		// from it and asks again.
		{name: "not-in-time-window", args: append([]string{"-Z", "1,0"}, authArgs...), oids: []string{sysDescr0},
			want: `.1.3.6.1.2.1.1.1.0 = STRING: "tsnmp test agent"`, last: "Response noError", uptime: 1000 * time.Second},
		{name: "decryption-error", args: []string{"-u", "privuser", "-l", "authPriv", "-a", "SHA", "-A", "authpass1234", "-x", "DES", "-X", "privpass1234"},
			oids: []string{sysDescr0}, want: `.1.3.6.1.2.1.1.1.0 = STRING: "tsnmp test agent"`, craft: craftDecryptionError,
			last: "Report 1.3.6.1.6.3.15.1.1.6.0"},
		// RFC 3413 §3.2: a context this engine does not have is reported
		// (snmpUnknownContexts), at the request's security level.
		{name: "unknown-context", args: append([]string{"-n", "badcontext"}, authArgs...), oids: []string{sysDescr0},
			want: "snmpget: Bad context specified", last: "Report 1.3.6.1.6.3.12.1.5.0"},
		// RFC 3412 §4.2.2.1: no application handles another
		// contextEngineID (snmpUnknownPDUHandlers; snmpget words it
		// "Bad version specified").
		{name: "unknown-context-engine-id", args: append([]string{"-E", "0x80001f8804756e6b6e6f776e"}, authArgs...), oids: []string{sysDescr0},
			want: "snmpget: Bad version specified", last: "Report 1.3.6.1.6.3.11.2.1.3.0"},
		{name: "too-big", args: authArgs, oids: bigGet(40),
			want: "Reason: (tooBig) Response message would have been too large.", last: "Response tooBig",
			policy: func(p *Policy) { p.MaxResponse = 484 }},
	}
)

// bigGet names n instances of the test table's ifDescr column.
func bigGet(n int) []string {
	var o []string
	for i := 1; i <= n; i++ {
		o = append(o, fmt.Sprintf(".1.3.6.1.2.1.2.2.1.2.%d", i))
	}
	return o
}

// replayAgent returns an agent with the recorded agent's engine ID, boots
// (1: a new state directory) and a stopped clock, so that it answers a
// recorded request exactly as it did when recorded.
func replayAgent(t *testing.T, c *replayCase) *Agent {
	t.Helper()
	st, err := engine.Open(t.TempDir(), replayEngineID)
	if err != nil {
		t.Fatal(err)
	}
	users := usm.NewUserTable()
	for _, ru := range replayUsers {
		u, err := usm.NewUser(ru.name, ru.auth, []byte(ru.authPass), ru.priv, []byte(ru.privPass))
		if err != nil {
			t.Fatal(err)
		}
		users.Add(st.EngineID, u)
	}
	// The clock reads epoch when the USM starts and epoch+c.uptime ever
	// after: snmpEngineTime is c.uptime in every message.
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	started := false
	now := func() time.Time {
		if !started {
			started = true
			return epoch
		}
		return epoch.Add(c.uptime)
	}
	m, err := usm.New(usm.Config{EngineID: st.EngineID, EngineBoots: st.Boots, Users: users, Now: now, Salts: new(usm.SaltSource)})
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Access: testAccess{}, SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelUSM: m}}
	if c.policy != nil {
		c.policy(p)
	}
	return newTestAgent(t, st, p)
}

func TestNetSNMPReplay(t *testing.T) {
	for i := range replayList {
		c := &replayList[i]
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join("testdata", "netsnmp", c.name+".txt")
			if *update {
				record(t, c, file)
			}
			replay(t, c, file)
		})
	}
}

// recorder keeps the exchanges an agent serves.
type recorder struct {
	a  *Agent
	mu sync.Mutex
	x  []exchange
}

func (r *recorder) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	resp := r.a.ServeSNMP(ref, msg, out)
	r.mu.Lock()
	r.x = append(r.x, exchange{bytes.Clone(msg), bytes.Clone(resp)})
	r.mu.Unlock()
	return resp
}

// record runs snmpget against a replay agent on a UDP socket and writes
// the exchanges to file.
func record(t *testing.T, c *replayCase, file string) {
	prog := testenv.Need(t, "snmpget")
	rec := &recorder{a: replayAgent(t, c)}
	port := testenv.FreePort(t)
	addr, _ := transport.ParseAddress(fmt.Sprintf("udp:127.0.0.1:%d", port), 0)
	s, err := transport.Listen(addr, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	args := append([]string{"-M", "/dev/null", "-m", "", "-On", "-v3", "-r", "0", "-t", "1"}, c.args...)
	args = append(append(args, fmt.Sprintf("udp:127.0.0.1:%d", port)), c.oids...)
	cmd := exec.Command(prog, args...)
	// No user or system snmp.conf, and Net-SNMP's own persistent state
	// out of the way.
	dir := t.TempDir()
	cmd.Env = append(os.Environ(), "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+dir, "HOME="+dir)
	out, _ := cmd.CombinedOutput()
	rec.mu.Lock()
	x := rec.x
	rec.mu.Unlock()
	if !strings.Contains(string(out), c.want) {
		var d strings.Builder
		for _, e := range x {
			fmt.Fprintf(&d, "sent\n%s\nanswered\n%s\n", describe(e.req), describe(e.resp))
		}
		t.Fatalf("snmpget %s:\n%s\nwant a line %q; exchanges:\n%s", strings.Join(args, " "), out, c.want, d.String())
	}
	if c.craft != nil {
		req := c.craft(t, x)
		x = append(x, exchange{req, bytes.Clone(rec.a.ServeSNMP(&transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:161")}, req, nil))})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# snmpget %s (Net-SNMP %s)\n", strings.Join(c.args, " ")+" udp:127.0.0.1 "+strings.Join(c.oids, " "), netSNMPVersion(prog))
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(l, "Created directory") {
			continue // Net-SNMP's first use of its persistent directory
		}
		fmt.Fprintf(&b, "# | %s\n", l)
	}
	for _, e := range x {
		fmt.Fprintf(&b, "> %x\n", e.req)
		if e.resp == nil {
			b.WriteString("< -\n")
		} else {
			fmt.Fprintf(&b, "< %x\n", e.resp)
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func netSNMPVersion(prog string) string {
	out, _ := exec.Command(prog, "--version").CombinedOutput()
	v, _ := strings.CutPrefix(strings.TrimSpace(string(out)), "NET-SNMP version: ")
	return v
}

func readExchanges(t *testing.T, file string) []exchange {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("%v (record it with go test ./agent -run TestNetSNMPReplay -update)", err)
	}
	defer f.Close()
	var x []exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "> "):
			b, err := hex.DecodeString(l[2:])
			if err != nil {
				t.Fatalf("%s:%d: %v", file, n, err)
			}
			x = append(x, exchange{req: b})
		case strings.HasPrefix(l, "< "):
			if len(x) == 0 || x[len(x)-1].resp != nil {
				t.Fatalf("%s:%d: answer without a request", file, n)
			}
			if l[2:] == "-" {
				continue
			}
			b, err := hex.DecodeString(l[2:])
			if err != nil {
				t.Fatalf("%s:%d: %v", file, n, err)
			}
			x[len(x)-1].resp = b
		}
	}
	if len(x) == 0 {
		t.Fatalf("%s: no exchanges", file)
	}
	return x
}

// replay feeds the recorded requests to a fresh replay agent in order and
// compares its answers with the recorded ones.
func replay(t *testing.T, c *replayCase, file string) {
	a := replayAgent(t, c)
	ref := &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:50000")}
	var got []byte
	for i, e := range readExchanges(t, file) {
		got = a.ServeSNMP(ref, e.req, make([]byte, 0, 65536))
		if !bytes.Equal(got, e.resp) {
			t.Errorf("exchange %d: request\n%s\nanswered\n%s\nrecorded\n%s", i+1, describe(e.req), describe(got), describe(e.resp))
		}
	}
	if s := summary(got); s != c.last {
		t.Errorf("last answer is %q, want %q:\n%s", s, c.last, describe(got))
	}
}

// summary names a plaintext v3 answer's PDU type and its error status, or
// a Report's varbind.
func summary(b []byte) string {
	var h snmp.V3Message
	var sc snmp.ScopedPDU
	if b == nil || h.Unmarshal(b) != nil || h.Flags&snmp.FlagPriv != 0 || sc.Unmarshal(h.Data) != nil {
		return "undecodable"
	}
	if sc.PDU.Type == snmp.Report && len(sc.PDU.VarBinds) == 1 {
		return "Report " + sc.PDU.VarBinds[0].Name.String()
	}
	return fmt.Sprintf("%v %v", sc.PDU.Type, sc.PDU.ErrorStatus)
}

// describe decodes a v3 message for failure output.
func describe(b []byte) string {
	if b == nil {
		return "  (nothing)"
	}
	var h snmp.V3Message
	if err := h.Unmarshal(b); err != nil {
		return fmt.Sprintf("  undecodable %x: %v", b, err)
	}
	var sp usm.SecurityParameters
	_ = sp.Unmarshal(h.SecurityParameters)
	s := fmt.Sprintf("  msgID %d flags %#x user %q engine %x boots %d time %d", h.MsgID, h.Flags, sp.UserName, sp.EngineID, sp.EngineBoots, sp.EngineTime)
	var sc snmp.ScopedPDU
	if h.Flags&snmp.FlagPriv == 0 && sc.Unmarshal(h.Data) == nil {
		s += fmt.Sprintf("\n  %v request-id %d error %v/%d context %x/%q", sc.PDU.Type, sc.PDU.RequestID, sc.PDU.ErrorStatus, sc.PDU.ErrorIndex, sc.ContextEngineID, sc.ContextName)
		for _, vb := range sc.PDU.VarBinds {
			s += fmt.Sprintf("\n    %v = %v", vb.Name, vb.Value)
		}
	}
	return s
}

// craftDecryptionError takes the last authPriv request snmpget sent and
// cuts one octet from its DES ciphertext, which is then no multiple of the
// block size, and authenticates the result again with privuser's key: an
// authentic message that cannot be decrypted (RFC 3414 §3.2 step 8), which
// no Net-SNMP tool sends.
func craftDecryptionError(t *testing.T, recorded []exchange) []byte {
	t.Helper()
	var req []byte
	for _, e := range recorded {
		var h snmp.V3Message
		if h.Unmarshal(e.req) == nil && h.Flags&snmp.FlagPriv != 0 {
			req = e.req
		}
	}
	if req == nil {
		t.Fatal("snmpget sent no authPriv request")
	}
	var h snmp.V3Message
	if err := h.Unmarshal(req); err != nil {
		t.Fatal(err)
	}
	var sp usm.SecurityParameters
	if err := sp.Unmarshal(h.SecurityParameters); err != nil {
		t.Fatal(err)
	}
	ct := h.Data[2 : len(h.Data)-1] // OCTET STRING contents, one octet short
	if h.Data[0] != 0x04 || h.Data[1] >= 0x80 {
		t.Fatalf("encryptedPDU % x... is not a short OCTET STRING", h.Data[:4])
	}
	sp.AuthParams = make([]byte, 12)
	h.SecurityParameters, _ = usm.AppendSecurityParameters(nil, &sp)
	authOff := bytes.Index(h.SecurityParameters, sp.AuthParams) // 12 zero octets: the first run of them
	msg, off := snmp.AppendV3(nil, &h, func(b []byte) []byte {
		b = append(b, 0x04, byte(len(ct)))
		return append(b, ct...)
	})
	ku, err := usm.PasswordToKey(usm.AuthSHA1, []byte("authpass1234"))
	if err != nil {
		t.Fatal(err)
	}
	kul, err := usm.LocalizeKey(usm.AuthSHA1, ku, replayEngineID)
	if err != nil {
		t.Fatal(err)
	}
	mac, err := usm.AuthSHA1.MAC(nil, kul, msg)
	if err != nil {
		t.Fatal(err)
	}
	copy(msg[off+authOff:], mac)
	return msg
}

// newTestAgent returns an agent serving the test MIB (the system group
// and a 300-row table) with state st under policy p.
func newTestAgent(t testing.TB, st *engine.State, p *Policy) *Agent {
	var tree mib.Tree
	contact := "admin"
	table := rows(300)
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 1}, &mib.Scalars{
		Prefix: snmp.OID{1, 3, 6, 1, 2, 1, 1},
		Objects: []mib.Scalar{
			{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.StringValue("tsnmp test agent") }},
			{Sub: 4, Get: func(*mib.Request) snmp.Value { return snmp.StringValue(contact) },
				Test: func(v snmp.Value) snmp.ErrorStatus {
					if v.Type != snmp.OctetString {
						return snmp.WrongType
					}
					return snmp.NoError
				}},
		},
		Commit: func(v map[uint32]snmp.Value) error { contact = string(v[4].Bytes); return nil },
	})
	tree.Register(snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}, &mib.Table{
		Entry: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}, Columns: []uint32{1, 2, 6},
		Rows: func(*mib.Request) mib.Rows { return table },
	})
	a := &Agent{Tree: &tree, State: st}
	a.Stats.Register(&tree)
	a.RegisterEngine(&tree)
	a.SetPolicy(p)
	return a
}
