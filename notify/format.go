package notify

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// OIDs of the notification objects (SNMPv2-MIB, SNMP-COMMUNITY-MIB).
var (
	SysUpTime0          = snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}
	SnmpTrapOID0        = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}
	SnmpTrapEnterprise0 = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 3, 0}
	SnmpTrapAddress0    = snmp.OID{1, 3, 6, 1, 6, 3, 18, 1, 3, 0}
	SnmpTrapCommunity0  = snmp.OID{1, 3, 6, 1, 6, 3, 18, 1, 4, 0}
	snmpTraps           = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5}
)

var genericNames = [...]string{"Cold Start", "Warm Start", "Link Down", "Link Up", "Authentication Failure", "EGP Neighbor Loss", "Enterprise Specific"}

// TrapOID returns the notification's snmpTrapOID: the second varbind of an
// SNMPv2 notification, or the RFC 3584 §3.1 translation of a Trap-PDU's
// generic and specific trap.
func (n *Notification) TrapOID() snmp.OID {
	if n.Type == snmp.Trap {
		if n.GenericTrap >= 0 && n.GenericTrap < 6 {
			return snmpTraps.Append(uint32(n.GenericTrap + 1))
		}
		return n.Enterprise.Append(0, uint32(n.SpecificTrap))
	}
	if len(n.VarBinds) > 1 && n.VarBinds[1].Name.Equal(SnmpTrapOID0) && n.VarBinds[1].Value.Type == snmp.ObjectIdentifier {
		return n.VarBinds[1].Value.OID
	}
	return nil
}

// V2VarBinds returns the notification's varbinds in SNMPv2 form: a
// Trap-PDU's translated as RFC 3584 §3.1 does (sysUpTime.0, snmpTrapOID.0,
// its varbinds, snmpTrapAddress.0, snmpTrapCommunity.0 and
// snmpTrapEnterprise.0), as snmptrapd hands them to traphandle programs.
func (n *Notification) V2VarBinds() []snmp.VarBind {
	if n.Type != snmp.Trap {
		return n.VarBinds
	}
	vbs := []snmp.VarBind{
		{Name: SysUpTime0, Value: snmp.TimeTicksValue(n.Timestamp)},
		{Name: SnmpTrapOID0, Value: snmp.OIDValue(n.TrapOID())},
	}
	vbs = append(vbs, n.VarBinds...)
	return append(vbs,
		snmp.VarBind{Name: SnmpTrapAddress0, Value: snmp.IPValue(n.AgentAddr)},
		snmp.VarBind{Name: SnmpTrapCommunity0, Value: snmp.StringValue(n.Security.Name)},
		snmp.VarBind{Name: SnmpTrapEnterprise0, Value: snmp.OIDValue(n.Enterprise)})
}

// TransportString returns the sender's address as snmptrapd prints it
// ("UDP: [127.0.0.1]:40000->[127.0.0.1]:162"). Over stream transports it
// names the local end [0.0.0.0]:0, as Net-SNMP does; over SSH only the
// sender ("SSH: [127.0.0.1]:40000").
func (n *Notification) TransportString() string {
	return string(n.appendTransport(nil))
}

// appendTransport appends TransportString.
func (n *Notification) appendTransport(b []byte) []byte {
	switch n.Domain {
	case transport.DTLS:
		return append(b, "DTLSUDP: unknown"...) // what Net-SNMP prints for a DTLS sender
	case transport.TLS:
		b = append(b, "TLSTCP: "...)
		return n.Local.AppendTo(b) // Net-SNMP names the listening address
	}
	var name string
	switch n.Domain {
	case transport.UDP:
		name = "UDP"
	case transport.TCP:
		name = "TCP"
	case transport.SSH:
		name = "SSH"
	default:
		name = strings.ToUpper(string(n.Domain))
	}
	remote := n.Remote
	if remote.Addr().Is4In6() {
		remote = netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
	}
	b = append(b, name...)
	if remote.Addr().Is6() {
		if n.Domain == transport.UDP || n.Domain == transport.TCP {
			b = append(b, "/IPv6"...)
		}
		b = append(b, ": "...)
		return remote.AppendTo(b)
	}
	local := n.Local
	if local.Addr().Is4In6() {
		local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	}
	b = appendBracketed(append(b, ": "...), remote) // Net-SNMP's address format
	if n.Domain == transport.SSH {
		return b
	}
	if n.Domain == transport.TCP || n.Domain == transport.TLS || !local.IsValid() {
		local = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	}
	return appendBracketed(append(b, "->"...), local)
}

// appendBracketed appends "[ADDR]:PORT".
func appendBracketed(b []byte, a netip.AddrPort) []byte {
	b = append(b, '[')
	b = a.Addr().AppendTo(b)
	b = append(b, "]:"...)
	return strconv.AppendUint(b, uint64(a.Port()), 10)
}

// hosts is the host-name table of /etc/hosts. Names are looked up there
// only: a receiver that waits for DNS during a storm of traps loses them.
var hosts = struct {
	once sync.Once
	m    map[netip.Addr]string
}{}

// HostName returns the first name /etc/hosts gives addr, else addr.
func HostName(addr netip.Addr) string {
	hosts.once.Do(func() {
		hosts.m = map[netip.Addr]string{}
		f, err := os.Open("/etc/hosts")
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line, _, _ := strings.Cut(sc.Text(), "#")
			fs := strings.Fields(line)
			if len(fs) < 2 {
				continue
			}
			a, err := netip.ParseAddr(fs[0])
			if err != nil {
				continue
			}
			if _, ok := hosts.m[a]; !ok {
				hosts.m[a] = fs[1]
			}
		}
	})
	addr = addr.Unmap()
	if name, ok := hosts.m[addr]; ok {
		return name
	}
	return addr.String()
}

var (
	printOpts format.Options
	quickOpts = format.Options{Quick: true}
)

// Uptime formats TimeTicks as Net-SNMP's uptime strings ("1 day, 0:00:12.34").
func Uptime(t uint32) string { return string(appendUptime(nil, t)) }

func appendUptime(b []byte, t uint32) []byte {
	cs, s := t%100, t/100
	days, hours, mins, secs := s/86400, s/3600%24, s/60%60, s%60
	switch days {
	case 0:
	case 1:
		b = append(b, "1 day, "...)
	default:
		b = strconv.AppendUint(b, uint64(days), 10)
		b = append(b, " days, "...)
	}
	b = strconv.AppendUint(b, uint64(hours), 10)
	for _, v := range [...]uint32{mins, secs} {
		b = append(b, ':', byte('0'+v/10), byte('0'+v%10))
	}
	return append(b, '.', byte('0'+cs/10), byte('0'+cs%10))
}

// AppendText appends the notification in snmptrapd's default output
// format (snmptrapd -f -Lo), with the local time of its reception.
func AppendText(b []byte, n *Notification) []byte { return nameCache(nil).appendText(b, n) }

// nameCache holds the printed names of the OIDs a receiver has seen
// (notifications repeat the same few objects), keyed by the OID's bytes.
// A nil nameCache looks every name up.
type nameCache map[string]string

// nameCacheSize bounds a nameCache: it starts over when full.
const nameCacheSize = 4096

// oid returns printOpts.OID(o), from the cache when it is there.
func (c nameCache) oid(o snmp.OID) string {
	if c == nil || len(o) == 0 {
		return printOpts.OID(o)
	}
	k := unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(o))), len(o)*4)
	if s, ok := c[k]; ok {
		return s
	}
	s := printOpts.OID(o)
	if len(c) >= nameCacheSize {
		clear(c)
	}
	c[strings.Clone(k)] = s
	return s
}

// appendVarBind appends "NAME = VALUE" as printOpts.VarBind prints it.
func (c nameCache) appendVarBind(b []byte, vb snmp.VarBind) []byte {
	b = append(b, c.oid(vb.Name)...)
	b = append(b, " = "...)
	return printOpts.AppendValue(b, vb.Name, vb.Value)
}

func (c nameCache) appendText(b []byte, n *Notification) []byte {
	b = n.Time.AppendFormat(b, "2006-01-02 15:04:05 ")
	if n.Type == snmp.Trap {
		addr := netip.AddrFrom4(n.AgentAddr)
		for _, s := range []string{"", " ["} {
			b = addr.AppendTo(append(b, s...))
		}
		b = n.appendTransport(append(b, "] (via "...))
		b = append(b, ") TRAP, SNMP v1, community "...)
		b = append(b, n.Security.Name...)
		b = append(b, "\n\t"...)
		b = append(b, c.oid(n.Enterprise)...)
		b = append(b, ' ')
		b = append(b, genericName(n.GenericTrap)...)
		b = append(b, " Trap ("...)
		b = strconv.AppendInt(b, int64(n.SpecificTrap), 10)
		b = appendUptime(append(b, ") Uptime: "...), n.Timestamp)
		b = append(b, '\n')
		for _, vb := range n.VarBinds {
			b = c.appendVarBind(append(b, '\t'), vb)
		}
		return append(b, '\n')
	}
	if n.Domain == transport.DTLS || n.Domain == transport.TLS {
		b = n.appendTransport(b)
	} else {
		b = append(b, HostName(n.Remote.Addr())...)
	}
	b = n.appendTransport(append(b, " ["...))
	b = append(b, "]:\n"...)
	for i, vb := range n.VarBinds {
		if i > 0 {
			b = append(b, '\t')
		}
		b = c.appendVarBind(b, vb)
	}
	return append(b, '\n')
}

// hostName is the sender's name as snmptrapd prints it (%B).
func (n *Notification) hostName() string {
	if n.Domain == transport.DTLS || n.Domain == transport.TLS {
		return n.TransportString()
	}
	return HostName(n.Remote.Addr())
}

func genericName(g int) string {
	if g >= 0 && g < len(genericNames) {
		return genericNames[g]
	}
	return "Unknown"
}

// AppendHandlerInput appends what snmptrapd writes to a traphandle
// program's standard input: the sender's host name, its transport address,
// then one "NAME VALUE" line per varbind in SNMPv2 form.
func AppendHandlerInput(b []byte, n *Notification) []byte {
	b = append(b, n.hostName()...)
	b = append(b, '\n')
	b = append(b, n.TransportString()...)
	b = append(b, '\n')
	for _, vb := range n.V2VarBinds() {
		b = append(b, quickOpts.VarBind(vb)...)
		b = append(b, '\n')
	}
	return b
}

// jsonVarBind is one varbind of a JSON line.
type jsonVarBind struct {
	OID   string `json:"oid"`
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
	Hex   string `json:"hex,omitempty"`
}

type jsonNotification struct {
	Time       string        `json:"time"`
	Transport  string        `json:"transport"`
	Source     string        `json:"source"`
	Local      string        `json:"local,omitempty"`
	Version    string        `json:"version"`
	PDU        string        `json:"pdu"`
	Model      string        `json:"securityModel"`
	SecName    string        `json:"securityName"`
	Level      string        `json:"securityLevel"`
	EngineID   string        `json:"securityEngineID,omitempty"`
	ContextID  string        `json:"contextEngineID,omitempty"`
	Context    string        `json:"contextName,omitempty"`
	TrapOID    string        `json:"snmpTrapOID"`
	TrapName   string        `json:"snmpTrapName"`
	Enterprise string        `json:"enterprise,omitempty"`
	AgentAddr  string        `json:"agentAddr,omitempty"`
	Generic    *int          `json:"genericTrap,omitempty"`
	Specific   *int          `json:"specificTrap,omitempty"`
	Uptime     *uint32       `json:"uptime,omitempty"`
	VarBinds   []jsonVarBind `json:"varbinds"`
}

// AppendJSON appends the notification as one JSON object and a newline.
func AppendJSON(b []byte, n *Notification) []byte {
	j := jsonNotification{
		Time: n.Time.Format(time.RFC3339Nano), Transport: string(n.Domain), Source: n.Remote.String(),
		Version: n.Version.String(), PDU: n.Type.String(), Model: n.Security.Model.String(), SecName: n.Security.Name,
		Level: n.Security.Level.String(), Context: n.Security.Context, VarBinds: []jsonVarBind{},
	}
	if n.Local.IsValid() {
		j.Local = n.Local.String()
	}
	if len(n.Security.EngineID) > 0 {
		j.EngineID = hex.EncodeToString(n.Security.EngineID)
	}
	if len(n.Security.ContextID) > 0 {
		j.ContextID = hex.EncodeToString(n.Security.ContextID)
	}
	if t := n.TrapOID(); t != nil {
		j.TrapOID, j.TrapName = t.String(), smi.Format(t, false)
	}
	if n.Type == snmp.Trap {
		j.Enterprise = n.Enterprise.String()
		j.AgentAddr = netip.AddrFrom4(n.AgentAddr).String()
		g, s, u := n.GenericTrap, n.SpecificTrap, n.Timestamp
		j.Generic, j.Specific, j.Uptime = &g, &s, &u
	}
	for _, vb := range n.VarBinds {
		v := jsonVarBind{OID: vb.Name.String(), Name: smi.Format(vb.Name, false), Type: vb.Value.Type.String(),
			Value: quickOpts.Value(vb.Name, vb.Value)}
		switch vb.Value.Type {
		case snmp.OctetString, snmp.Opaque:
			v.Hex = hex.EncodeToString(vb.Value.Bytes)
		}
		j.VarBinds = append(j.VarBinds, v)
	}
	out, err := json.Marshal(&j)
	if err != nil {
		return b
	}
	b = append(b, out...)
	return append(b, '\n')
}
