package notify

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

var (
	senderEngine   = []byte{0x80, 0, 0x1f, 0x88, 4, 1, 2, 3, 4}
	receiverEngine = []byte{0x80, 0, 0x1f, 0x88, 4, 9, 9, 9, 9}
)

const testConf = `# receiver
authCommunity log,execute public 127.0.0.0/8
authCommunity log other
createUser -e 0x80001f88040102030400 ignored MD5 authpass123
createUser -e 0x80001f880401020304 trapper SHA authpass123 AES privpass123
createUser informer SHA-256 authpass123 AES
authUser log,execute trapper priv
authUser log informer
traphandle IF-MIB::linkDown /bin/true
traphandle default /bin/false
forward default udp:127.0.0.1:9162
format2 %B %v\n
ignoreAuthFailure yes
`

func testReceiver(t testing.TB) *Receiver {
	c, err := ParseConfig("test.conf", []byte(testConf))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Policy(receiverEngine, 1)
	if err != nil {
		t.Fatal(err)
	}
	return New(p, 4, nil)
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig("test.conf", []byte(testConf))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Communities) != 2 || c.Communities[0].Types != Log|Execute || c.Communities[0].Source != netip.MustParsePrefix("127.0.0.0/8") ||
		c.Communities[1].Source.IsValid() {
		t.Errorf("communities: %+v", c.Communities)
	}
	if len(c.Users) != 3 || c.Users[2].EngineID != nil || c.Users[2].User.PrivProtocol() != usm.PrivAES128 {
		t.Errorf("users: %+v", c.Users)
	}
	if len(c.AuthUsers) != 2 || c.AuthUsers[0].MinLevel != snmp.AuthPriv || c.AuthUsers[1].MinLevel != snmp.AuthNoPriv {
		t.Errorf("authUsers: %+v", c.AuthUsers)
	}
	if len(c.Handlers) != 2 || c.Handlers[0].OID.String() != "1.3.6.1.6.3.1.1.5.3" || c.Handlers[1].OID != nil || c.Handlers[1].Command != "/bin/false" {
		t.Errorf("handlers: %+v", c.Handlers)
	}
	if c.Format2 != `%B %v\n` || !c.IgnoreAuthFailure || len(c.Forwards) != 1 {
		t.Errorf("config: %+v", c)
	}
	for _, bad := range []struct{ conf, want string }{
		{"authCommunity log\n", "x.conf:1: authCommunity: want TYPES COMMUNITY"},
		{"\n# c\nauthCommunity read public\n", "x.conf:3: authCommunity: unknown type \"read\""},
		{"createUser -e 0x01 u MD5 authpass123\n", "x.conf:1: createUser: bad engine ID"},
		{"createUser u MD5 short\n", "x.conf:1: createUser: usm: password must be at least 8 octets"},
		{"createUser u MD5 authpass123 BLOWFISH\n", "x.conf:1: createUser: unknown privacy protocol"},
		{"authUser log u superpriv\n", "x.conf:1: authUser: unknown level"},
		{"traphandle NO-SUCH-MIB::x /bin/true\n", "x.conf:1: traphandle:"},
		{"traphandle default\n", "x.conf:1: traphandle: missing program"},
		{"disableAuthorization maybe\n", "x.conf:1: disableAuthorization: want yes or no"},
		{"snmpTrapdFoo 1\n", "x.conf:1: snmpTrapdFoo: unknown directive"},
	} {
		_, err := ParseConfig("x.conf", []byte(bad.conf))
		if err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want prefix %q", bad.conf, err, bad.want)
		}
	}
}

func TestAppendFormat(t *testing.T) {
	n := &Notification{Time: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), Domain: transport.UDP,
		Remote: netip.MustParseAddrPort("127.0.0.1:4000"), Local: netip.MustParseAddrPort("127.0.0.1:162"),
		Version: snmp.V1, Type: snmp.Trap, Enterprise: snmp.OID{1, 3, 6, 1, 4, 1, 99}, AgentAddr: [4]byte{10, 0, 0, 1},
		GenericTrap: 6, SpecificTrap: 3, Timestamp: 8640123}
	n.Security.Name = "public"
	n.VarBinds = []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 5, 0}, Value: snmp.StringValue("box")}}
	got := string(AppendFormat(nil, `%.4y-%.2m-%.2l %.2h:%.2j:%.2k %a %B [%b] %P: %N %W (%q/%w) %T %#T\t%v%%\n`, n))
	want := "2026-03-04 05:06:07 10.0.0.1 localhost [UDP: [127.0.0.1]:4000->[127.0.0.1]:162] TRAP, SNMP v1, community public: " +
		"SNMPv2-SMI::enterprises.99 Enterprise Specific (3/6) 86401 1 day, 0:00:01.23\tSNMPv2-MIB::sysName.0 = STRING: box%\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := n.TrapOID().String(); got != "1.3.6.1.4.1.99.0.3" {
		t.Errorf("TrapOID %s", got)
	}
	n.GenericTrap = 2
	if got := n.TrapOID().String(); got != "1.3.6.1.6.3.1.1.5.3" {
		t.Errorf("TrapOID of linkDown %s", got)
	}
}

func TestAddress(t *testing.T) {
	for in, want := range map[string]string{
		"udp:162": "udp:[]:162", "127.0.0.1": "udp:127.0.0.1:162", "tcp:127.0.0.1": "tcp:127.0.0.1:162",
		"dtls:127.0.0.1": "dtls:127.0.0.1:10162", "tls:[::1]": "tls6:[::1]:10162", "ssh:h": "ssh:h:5162", "udp:h:99": "udp:h:99",
	} {
		a, err := ParseAddress(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := strings.Replace(a.String(), "udp:[]", "udp:[]", 1); got != want && !(a.Host == "" && want == "udp:[]:162" && a.Port == 162) {
			t.Errorf("ParseAddress(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"h": "h:162", "tls:h": "tls:h:10162", "ssh:h:22": "ssh:h:22", "udp6:[::1]": "udp6:[::1]:162"} {
		if got := TargetSpec(in); got != want {
			t.Errorf("TargetSpec(%s) = %s, want %s", in, got, want)
		}
	}
}
