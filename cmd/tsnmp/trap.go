package main

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/notify"
	"github.com/tsnmp/tsnmp/snmp"
)

// tsnmp trap and tsnmp inform are Net-SNMP's snmptrap and snmpinform:
//
//	tsnmp trap   [OPTIONS] RECEIVER UPTIME TRAP-OID [OID TYPE VALUE]...            (v2c, v3; -Ci sends an inform)
//	tsnmp trap -v1 [OPTIONS] RECEIVER ENTERPRISE AGENT-ADDR GENERIC SPECIFIC UPTIME [OID TYPE VALUE]...
//	tsnmp inform [OPTIONS] RECEIVER UPTIME TRAP-OID [OID TYPE VALUE]...
//
// An empty UPTIME is the host's uptime; an empty ENTERPRISE is
// snmptrap's default (enterprises.3.1.1), an empty AGENT-ADDR the first
// IPv4 address of a non-loopback interface. RECEIVER's default port is
// 162 (udp:, tcp:), 10162 (tls:, dtls:) or 5162 (ssh:). With -v3 a trap
// is sent with the sender as the authoritative engine: -e names that
// engine (the receiver localizes the user to it), else a random one is
// used; an inform discovers the receiver's engine ID unless -e names it.

// hostUptime returns the host's uptime in hundredths of a second, which
// snmptrap sends for an empty UPTIME.
func hostUptime() uint32 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	secs, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return 0
	}
	return uint32(uint64(secs*100) & 0xffffffff)
}

// Standard OIDs of notifications (SNMPv2-MIB, RFC 3584).
var (
	sysUpTime0         = snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}
	snmpTrapOID0       = snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}
	defaultEnterprise  = snmp.OID{1, 3, 6, 1, 4, 1, 3, 1, 1}
	trapUsageV1Missing = "Missing up-time parameter"
)

// trap is snmptrap and snmpinform.
func (a *app) trap(ops []string) int {
	f, ok := a.parseAppOpts("i", "", "")
	if !ok {
		return 1
	}
	inform := a.tool == "snmpinform" || f.set['i']
	v1 := a.o.cfg.Version == snmp.V1
	if inform && v1 {
		a.errorf("Cannot send INFORM as SNMPv1 PDU\n")
		return 1
	}
	var pdu snmp.PDU
	if v1 {
		pdu.Type = snmp.Trap
		if len(ops) < 5 {
			a.errorf("%s\n", map[bool]string{true: trapUsageV1Missing, false: "Missing parameters"}[len(ops) == 4])
			a.usage()
			return 1
		}
		pdu.Enterprise = defaultEnterprise
		if ops[0] != "" {
			o, ok := a.parseOID(ops[0])
			if !ok {
				return 1
			}
			pdu.Enterprise = o
		}
		if ops[1] != "" {
			ip, err := netip.ParseAddr(ops[1])
			if err != nil || !ip.Is4() {
				addrs, lerr := net.LookupIP(ops[1])
				if lerr != nil || len(addrs) == 0 || addrs[0].To4() == nil {
					a.errorf("%s: Unknown host (%s)\n", a.tool, ops[1])
					return 1
				}
				ip, _ = netip.AddrFromSlice(addrs[0].To4())
			}
			pdu.AgentAddr = ip.As4()
		} else {
			pdu.AgentAddr = notify.LocalIPv4()
		}
		g, err := strconv.Atoi(ops[2])
		if err != nil || g < 0 || g > 6 {
			a.errorf("Invalid generic trap type: %s\n", ops[2])
			return 1
		}
		s, err := strconv.Atoi(ops[3])
		if err != nil {
			a.errorf("Invalid specific trap type: %s\n", ops[3])
			return 1
		}
		pdu.GenericTrap, pdu.SpecificTrap = g, s
		pdu.Timestamp = hostUptime()
		if ops[4] != "" {
			u, err := strconv.ParseUint(ops[4], 10, 32)
			if err != nil {
				a.errorf("Invalid up-time: %s\n", ops[4])
				return 1
			}
			pdu.Timestamp = uint32(u)
		}
		ops = ops[5:]
	} else {
		pdu.Type = snmp.SNMPv2Trap
		if inform {
			pdu.Type = snmp.InformRequest
		}
		if len(ops) < 1 {
			a.errorf("%s\n", trapUsageV1Missing)
			a.usage()
			return 1
		}
		if len(ops) < 2 {
			a.errorf("Missing trap-oid parameter\n")
			a.usage()
			return 1
		}
		up := hostUptime()
		if ops[0] != "" {
			u, err := strconv.ParseUint(ops[0], 10, 32)
			if err != nil {
				a.errorf("Invalid up-time: %s\n", ops[0])
				return 1
			}
			up = uint32(u)
		}
		trapOID, ok := a.parseOID(ops[1])
		if !ok {
			return 1
		}
		pdu.VarBinds = []snmp.VarBind{
			{Name: sysUpTime0, Value: snmp.TimeTicksValue(up)},
			{Name: snmpTrapOID0, Value: snmp.OIDValue(trapOID)},
		}
		ops = ops[2:]
	}
	for i := 0; i < len(ops); i += 3 {
		if i+1 >= len(ops) {
			a.errorf("%s: Needs type and value\n", ops[i])
			return 1
		}
		if i+2 >= len(ops) {
			a.errorf("%s: Needs value\n", ops[i])
			return 1
		}
		oid, ok := a.parseOID(ops[i])
		if !ok {
			return 1
		}
		t := ops[i+1]
		if t == "" || strings.IndexByte("=iutaosxdbncCUIFD", t[0]) < 0 {
			a.errorf("%s: Bad object type: %s\n", ops[i], t[:min(len(t), 1)])
			return 1
		}
		v, err := parseSetValue(oid, t[:1], ops[i+2], a.setChecks())
		if err != nil {
			a.errorf("%s: %s\n", ops[i], err)
			return 1
		}
		pdu.VarBinds = append(pdu.VarBinds, snmp.VarBind{Name: oid, Value: v})
	}
	a.peer = notify.TargetSpec(a.peer)
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	if pdu.Type == snmp.InformRequest {
		if _, err := a.sess.Do(a.ctx, &pdu); err != nil {
			if err == manager.ErrTimeout {
				a.errorf("%s: Timeout\n", a.tool)
				return 1
			}
			a.requestError(err, false)
			return 1
		}
		return 0
	}
	if err := a.sess.Notify(a.ctx, &pdu); err != nil {
		a.errorf("%s: %v\n", a.tool, err)
		return 1
	}
	return 0
}
