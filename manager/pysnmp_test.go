package manager_test

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

var update = flag.Bool("update", false, "record the exchanges in testdata anew from the real peers")

func startPysnmp(t *testing.T) string { return snmpdtest.StartPysnmp(t) }

// udpProxy relays datagrams between one client and an agent, recording
// them in order.
type udpProxy struct {
	conn  *net.UDPConn
	agent *net.UDPAddr

	mu   sync.Mutex
	log  []datagram
	peer *net.UDPAddr
	// rewrite may change what is relayed (the log keeps what was
	// received).
	rewrite func(fromAgent bool, b []byte) []byte
}

func (p *udpProxy) setRewrite(f func(fromAgent bool, b []byte) []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rewrite = f
}

type datagram struct {
	fromAgent bool
	b         []byte
}

func startProxy(t *testing.T, agent string) *udpProxy {
	t.Helper()
	aa, err := net.ResolveUDPAddr("udp", agent)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	p := &udpProxy{conn: c, agent: aa}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			b := append([]byte(nil), buf[:n]...)
			p.mu.Lock()
			fromAgent := from.String() == aa.String()
			p.log = append(p.log, datagram{fromAgent, b})
			to := aa
			if fromAgent {
				to = p.peer
			} else {
				p.peer = from
			}
			rewrite := p.rewrite
			p.mu.Unlock()
			if rewrite != nil {
				b = rewrite(fromAgent, b)
			}
			if to != nil {
				_, _ = c.WriteToUDP(b, to)
			}
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return p
}

func (p *udpProxy) Addr() string { return p.conn.LocalAddr().String() }

// Datagrams returns what the proxy relayed so far and forgets it.
func (p *udpProxy) Datagrams() []datagram {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.log
	p.log = nil
	return d
}

// pysnmpReportCases are requests a pysnmp agent answers with a Report.
// pysnmp sets the reportable flag on its Reports; RFC 3412 section 6.4
// has the receiver process a Report as if the flag were clear.
var pysnmpReportCases = []struct {
	name string
	cfg  manager.Config
	want usm.Counter
}{
	{"wrong-auth-password", manager.Config{Version: snmp.V3, User: "md5user", Level: snmp.AuthNoPriv,
		AuthProtocol: usm.AuthMD5, AuthPassword: "wrongpass1"}, usm.WrongDigests},
	{"wrong-priv-password", manager.Config{Version: snmp.V3, User: "shaaes", Level: snmp.AuthPriv,
		AuthProtocol: usm.AuthSHA1, AuthPassword: "authpass1", PrivProtocol: usm.PrivAES128, PrivPassword: "wrongpriv1"}, usm.DecryptionErrors},
	{"unknown-user", manager.Config{Version: snmp.V3, User: "nobody", Level: snmp.AuthNoPriv,
		AuthProtocol: usm.AuthMD5, AuthPassword: "authpass1"}, usm.UnknownUserNames},
}

func recordingPath(name string) string {
	return filepath.Join("testdata", "pysnmp-"+name+".hex")
}

// TestPysnmpReports runs requests that a pysnmp agent refuses with a
// Report and checks that the manager reports what failed instead of
// timing out. With -update it records the exchanges for
// TestPysnmpReportsReplayed.
func TestPysnmpReports(t *testing.T) {
	agent := startPysnmp(t)
	ctx := context.Background()
	good := manager.Config{Version: snmp.V3, User: "shaaes", Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA1,
		AuthPassword: "authpass1", PrivProtocol: usm.PrivAES128, PrivPassword: "privpass1", Retries: 2, Timeout: 5 * time.Second}
	s, err := manager.Dial(ctx, agent, good)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Get(ctx, sysDescr)
	s.Close()
	if err != nil || !strings.Contains(string(resp.VarBinds[0].Value.Bytes), "PySNMP") {
		t.Fatalf("get from pysnmp with the right keys: %v %v", resp, err)
	}
	for _, c := range pysnmpReportCases {
		t.Run(c.name, func(t *testing.T) {
			p := startProxy(t, agent)
			cfg := c.cfg
			cfg.Retries, cfg.Timeout = 1, 3*time.Second // a loaded machine may be slow
			s, err := manager.Dial(ctx, p.Addr(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Get(ctx, sysDescr)
			if *update {
				var b strings.Builder
				for _, d := range p.Datagrams() {
					dir := "manager"
					if d.fromAgent {
						dir = "agent"
					}
					fmt.Fprintf(&b, "%s %s\n", dir, hex.EncodeToString(d.b))
				}
				if err := os.WriteFile(recordingPath(c.name), []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var re *manager.ReportError
			if !errors.As(err, &re) || re.Counter != c.want {
				t.Fatalf("got %v, want a Report of %v", err, c.want)
			}
		})
	}
}

// replayAgent answers the n-th request it receives with the n-th agent
// message of a recorded exchange, its msgID set to the request's. An
// authenticated message is signed again with cfg's authentication key,
// localized to the recorded engine.
func replayAgent(t *testing.T, cfg manager.Config, recorded [][]byte) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for i := 0; i < len(recorded); i++ {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			var req, rep snmp.V3Message
			if req.Unmarshal(buf[:n]) != nil || rep.Unmarshal(recorded[i]) != nil {
				t.Errorf("replay: message %d does not parse", i)
				return
			}
			rep.MsgID = req.MsgID
			out, err := resign(cfg, &rep)
			if err != nil {
				t.Errorf("replay: message %d: %v", i, err)
				return
			}
			_, _ = c.WriteToUDP(out, from)
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return c.LocalAddr().String()
}

func readRecording(t *testing.T, name string) (agent [][]byte) {
	t.Helper()
	b, err := os.ReadFile(recordingPath(name))
	if err != nil {
		t.Fatalf("%v (record it with go test -run TestPysnmpReports -update)", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		dir, h, _ := strings.Cut(line, " ")
		m, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		if dir == "agent" {
			agent = append(agent, m)
		}
	}
	return agent
}

// TestPysnmpReportsReplayed is TestPysnmpReports without pysnmp: the
// agent's recorded Reports (reportable flag set) are replayed.
func TestPysnmpReportsReplayed(t *testing.T) {
	for _, c := range pysnmpReportCases {
		t.Run(c.name, func(t *testing.T) {
			rec := readRecording(t, c.name)
			var h snmp.V3Message
			if len(rec) == 0 || h.Unmarshal(rec[len(rec)-1]) != nil || h.Flags&snmp.FlagReportable == 0 {
				t.Fatal("the recorded Report has no reportable flag: the recording does not show the case")
			}
			cfg := c.cfg
			cfg.Retries, cfg.Timeout = -1, 5*time.Second
			ctx := context.Background()
			s, err := manager.Dial(ctx, replayAgent(t, cfg, rec), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Get(ctx, sysDescr)
			var re *manager.ReportError
			if !errors.As(err, &re) || re.Counter != c.want {
				t.Fatalf("got %v, want a Report of %v", err, c.want)
			}
		})
	}
}

// resign encodes m, computing its MAC anew when it is authenticated.
func resign(cfg manager.Config, m *snmp.V3Message) ([]byte, error) {
	var sp usm.SecurityParameters
	if err := sp.Unmarshal(m.SecurityParameters); err != nil {
		return nil, err
	}
	auth := m.Flags&snmp.FlagAuth != 0
	if auth {
		sp.AuthParams = make([]byte, len(sp.AuthParams))
	}
	params, authOff := usm.AppendSecurityParameters(nil, &sp)
	m.SecurityParameters = params
	out, off := snmp.AppendV3(nil, m, func(b []byte) []byte { return append(b, m.Data...) })
	if !auth {
		return out, nil
	}
	ku, err := usm.PasswordToKey(cfg.AuthProtocol, []byte(cfg.AuthPassword))
	if err != nil {
		return nil, err
	}
	kul, err := usm.LocalizeKey(cfg.AuthProtocol, ku, sp.EngineID)
	if err != nil {
		return nil, err
	}
	mac, err := cfg.AuthProtocol.MAC(nil, kul, out)
	if err != nil {
		return nil, err
	}
	copy(out[off+authOff:], mac)
	return out, nil
}
