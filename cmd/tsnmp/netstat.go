package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// tsnmp netstat is snmpnetstat's connection listing: the TCP
// connections (tcpConnectionTable), with -Ca the listening sockets
// (tcpListenerTable), and the UDP endpoints (udpEndpointTable), IPv4 and
// IPv6, printed as snmpnetstat prints them.

var (
	oidTCPConnState    = snmp.OID{1, 3, 6, 1, 2, 1, 6, 19, 1, 7}
	oidTCPListenerProc = snmp.OID{1, 3, 6, 1, 2, 1, 6, 20, 1, 4}
	oidUDPEndpointProc = snmp.OID{1, 3, 6, 1, 2, 1, 7, 7, 1, 8}
)

var tcpStates = []string{"", "CLOSED", "LISTEN", "SYNSENT", "SYNRECEIVED", "ESTABLISHED", "FINWAIT1", "FINWAIT2", "CLOSEWAIT", "LASTACK", "CLOSING", "TIMEWAIT"}

type netstatRun struct {
	a       *app
	numeric bool // -Cn
	// iface is the interface -CI names (ifaceSet even when empty).
	iface    string
	ifaceSet bool
	verbose  bool // -Cv: names not cut
	family   int  // 0 any, 1 inet (-Cf inet), 2 inet6
	domain   string
	servs    map[string]string // "port/proto" -> service name
}

// walkColumn walks one column with GetNext; a first answer outside it
// or an exception gives no rows.
func (n *netstatRun) walkColumn(col snmp.OID) ([]snmp.VarBind, bool) {
	var out []snmp.VarBind
	cur := col
	for {
		resp, err := n.a.sess.Do(n.a.ctx, &snmp.PDU{Type: snmp.GetNextRequest, VarBinds: nullBinds([]snmp.OID{cur})})
		if err != nil {
			n.a.requestError(err, true)
			return out, false
		}
		if len(resp.VarBinds) == 0 {
			return out, true
		}
		vb := resp.VarBinds[0]
		if !vb.Name.HasPrefix(col) || vb.Value.Type.IsException() {
			return out, true
		}
		vb.Name = vb.Name.Clone()
		out = append(out, vb)
		cur = vb.Name
	}
}

// endpoint reads an InetAddressType, InetAddress, port triple from an
// index.
func endpoint(idx snmp.OID) (typ int, addr []byte, port int, rest snmp.OID, ok bool) {
	if len(idx) < 2 {
		return 0, nil, 0, nil, false
	}
	typ, l := int(idx[0]), int(idx[1])
	if len(idx) < 3+l {
		return 0, nil, 0, nil, false
	}
	for _, v := range idx[2 : 2+l] {
		addr = append(addr, byte(v))
	}
	return typ, addr, int(idx[2+l]), idx[3+l:], true
}

// service is getservbyport: the first /etc/services name of port/proto.
func (n *netstatRun) service(port int, proto string) (string, bool) {
	if n.servs == nil {
		n.servs = map[string]string{}
		if f, err := os.Open("/etc/services"); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				line, _, _ := strings.Cut(sc.Text(), "#")
				fs := strings.Fields(line)
				if len(fs) < 2 {
					continue
				}
				if _, ok := n.servs[fs[1]]; !ok {
					n.servs[fs[1]] = fs[0]
				}
			}
			f.Close()
		}
	}
	s, ok := n.servs[strconv.Itoa(port)+"/"+proto]
	return s, ok
}

// hostName is getnameinfo: the host's name, or the address in numbers
// with -Cn or when it has no name; "*" for the unspecified address; the
// local domain is cut off.
func (n *netstatRun) hostName(ip netip.Addr) string {
	if ip.IsUnspecified() {
		return "*"
	}
	s := ip.String()
	if n.numeric {
		return s
	}
	ctx, cancel := context.WithTimeout(n.a.ctx, 2*time.Second)
	defer cancel()
	if names, err := net.DefaultResolver.LookupAddr(ctx, s); err == nil && len(names) > 0 {
		s = strings.TrimSuffix(names[0], ".")
	}
	if n.domain != "" {
		if h, d, ok := strings.Cut(s, "."); ok && d == n.domain {
			s = h
		}
	}
	return s
}

// addrField is inetprint and inet6print: "host.port" in a field of 27.
func (n *netstatRun) addrField(typ int, addr []byte, port int, proto string, local bool) string {
	cut := func(s string, w int) string {
		if !n.verbose && len(s) > w {
			return s[:w]
		}
		return s
	}
	var line string
	width := 27
	switch {
	case typ == 1 && len(addr) == 4:
		host := n.hostName(netip.AddrFrom4([4]byte(addr)))
		if len(host) > 15 {
			host = host[:15] // getnameinfo into 16 bytes
		}
		line = cut(host, width-9) + "."
		if sp, ok := n.service(port, proto); ok && !n.numeric && port != 0 {
			line += cut(sp, 8)
		} else if port == 0 {
			line += "*"
		} else {
			line += strconv.Itoa(port)
		}
	case typ == 2 && len(addr) == 16:
		host := n.hostName(netip.AddrFrom16([16]byte(addr)))
		w := width - 9
		if n.verbose && len(host) > w {
			w = len(host)
		}
		if len(host) > w {
			host = host[:w]
		}
		line = host + "."
		if sp, ok := n.service(port, proto); ok && !n.numeric && port != 0 && local {
			line += cut(sp, 8)
		} else if port == 0 {
			line += "*"
		} else {
			line += strconv.Itoa(port)
		}
	default:
		line = "*.*"
	}
	if n.verbose && len(line) > width {
		width = len(line)
	}
	if len(line) > width {
		line = line[:width]
	}
	return fmt.Sprintf(" %-*s", width, line)
}

func (n *netstatRun) wanted(typ int) bool {
	return n.family == 0 || n.family == 1 && typ != 2 || n.family == 2 && typ == 2
}

func lname(proto string, typ int) string {
	if typ == 2 {
		return proto + "6"
	}
	return proto + "4"
}

func (n *netstatRun) tcp(listeners bool) bool {
	rows, ok := n.walkColumn(oidTCPConnState)
	if !ok {
		return false
	}
	first, pid := true, int64(0)
	for _, vb := range rows {
		state := int(int32(vb.Value.Num))
		pidOID := append(oidTCPConnState[:len(oidTCPConnState)-1:len(oidTCPConnState)-1], 8)
		pidOID = append(pidOID, vb.Name[len(oidTCPConnState):]...)
		resp, err := n.a.sess.Do(n.a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds([]snmp.OID{pidOID})})
		if err != nil {
			return true
		}
		if len(resp.VarBinds) > 0 && !resp.VarBinds[0].Value.Type.IsException() {
			pid = int64(int32(resp.VarBinds[0].Value.Num))
		}
		lt, la, lp, rest, ok1 := endpoint(vb.Name[len(oidTCPConnState):])
		rt, ra, rp, _, ok2 := endpoint(rest)
		if !ok1 || !ok2 || !n.wanted(lt) {
			continue
		}
		if first {
			fmt.Fprintf(n.a.out, "Active Internet (tcp) Connections\n")
			fmt.Fprintf(n.a.out, "%-5.5s %-27.27s %-27.27s %11.11s %5.5s\n", "Proto", "Local Address", "Remote Address", "State", "PID")
			first = false
		}
		line := fmt.Sprintf("%-5.5s", lname("tcp", lt)) + n.addrField(lt, la, lp, "tcp", true) + n.addrField(rt, ra, rp, "tcp", false)
		if state < 1 || state >= len(tcpStates) {
			line += fmt.Sprintf(" %11d %5d\n", state, pid)
		} else {
			line += fmt.Sprintf(" %11s %5d\n", tcpStates[state], pid)
		}
		n.a.out.WriteString(line)
	}
	if !listeners {
		return true
	}
	rows, ok = n.walkColumn(oidTCPListenerProc)
	if !ok || len(rows) == 0 {
		return ok
	}
	fmt.Fprintf(n.a.out, "Listening Internet (tcp) Connections\n")
	fmt.Fprintf(n.a.out, "%-5.5s %-27.27s %5s\n", "Proto", "Local Address", "PID")
	for _, vb := range rows {
		lt, la, lp, _, ok := endpoint(vb.Name[len(oidTCPListenerProc):])
		if !ok || !n.wanted(lt) {
			continue
		}
		fmt.Fprintf(n.a.out, "%-5.5s%s %5d\n", lname("tcp", lt), n.addrField(lt, la, lp, "tcp", true), int32(vb.Value.Num))
	}
	return true
}

func (n *netstatRun) udp() bool {
	rows, ok := n.walkColumn(oidUDPEndpointProc)
	if !ok || len(rows) == 0 {
		return ok
	}
	fmt.Fprintf(n.a.out, "Active Internet (udp) Connections\n")
	fmt.Fprintf(n.a.out, "%-5.5s %-27.27s %-27.27s %5s\n", "Proto", "Local Address", "Remote Address", "PID")
	for _, vb := range rows {
		lt, la, lp, rest, ok1 := endpoint(vb.Name[len(oidUDPEndpointProc):])
		rt, ra, rp, _, ok2 := endpoint(rest)
		if !ok1 || !ok2 || !n.wanted(lt) {
			continue
		}
		fmt.Fprintf(n.a.out, "%-5.5s%s%s %5d\n", lname("udp", lt), n.addrField(lt, la, lp, "udp", true), n.addrField(rt, ra, rp, "udp", true), int32(vb.Value.Num))
	}
	return true
}

// netstat is snmpnetstat's connection listing (-Ca -Cn -Cv -Cf FAMILY
// -Cp PROTO).
func (a *app) netstat(ops []string) int {
	n := &netstatRun{a: a}
	proto := ""
	all, routes, ifaces, bytesToo, bytesOnly, drops := false, false, false, false, false, false
	statsFlag := 0 // -Cs, -Css
	interval := 0  // -Cw SECONDS
	for _, arg := range a.o.appOpts {
		for i := 0; i < len(arg); i++ {
			switch arg[i] {
			case 'a':
				all = true
			case 'n':
				n.numeric = true
			case 'v':
				n.verbose = true
			case 'r':
				routes = true
			case 'i':
				ifaces = true
			case 'b':
				bytesToo = true
			case 'o':
				bytesOnly = true
			case 'd':
				drops = true
			case 's':
				statsFlag++
			case 'w':
				v := arg[i+1:]
				if v == "" {
					v = a.o.tableC['w']
				}
				interval, _ = strconv.Atoi(v) // atoi, as snmpnetstat
				ifaces = true
				i = len(arg)
			case 'I':
				// One interface, as snmpnetstat's -CI: by name with -Ci,
				// and -Cw watches only it.
				v := arg[i+1:]
				if v == "" {
					v = a.o.tableC['I']
				}
				n.iface, n.ifaceSet = v, true
				ifaces = true
				i = len(arg)
			case 'f', 'p':
				v := arg[i+1:]
				if v == "" {
					v = a.o.tableC[arg[i]]
				}
				if arg[i] == 'f' {
					switch v {
					case "inet":
						n.family = 1
					case "inet6":
						n.family = 2
					default:
						a.errorf("snmpnetstat: %s: unknown address family\n", v)
						return 1
					}
				} else {
					proto = v
					switch proto {
					case "tcp", "udp", "ip", "icmp", "tcp6", "udp6", "ip6", "icmp6":
					default:
						a.errorf("snmpnetstat: %s: unknown protocol\n", v)
						return 1
					}
				}
				i = len(arg)
			default:
				a.errorf("snmpnetstat: Unknown or uninstrumented option -C%c\n", arg[i])
				return 1
			}
		}
	}
	if !n.numeric {
		if h, err := os.Hostname(); err == nil {
			if _, d, ok := strings.Cut(h, "."); ok {
				n.domain = d
			}
		}
	}
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	if ifaces && interval > 0 {
		return n.sideways(time.Duration(interval)*time.Second, drops) // netstat_stats.go
	}
	if ifaces {
		n.interfaces(bytesToo, bytesOnly, drops)
		return 0
	}
	if routes {
		if !n.routes() {
			return 1
		}
		return 0
	}
	if statsFlag > 0 {
		n.stats(proto, statsFlag > 1) // netstat_stats.go
		return 0
	}
	if proto == "" || proto == "tcp" {
		if !n.tcp(all) {
			return 1
		}
	}
	if proto == "" || proto == "udp" {
		if !n.udp() {
			return 1
		}
	}
	return 0
}

var oidInetCidrRouteEntry = snmp.OID{1, 3, 6, 1, 2, 1, 4, 24, 7, 1}

// ifName is snmpnetstat's get_ifname: ifName, else ifDescr, else ifN.
func (n *netstatRun) ifName(index int64, cache map[int64]string) string {
	if s, ok := cache[index]; ok {
		return s
	}
	name := fmt.Sprintf("if%d", index)
	for _, col := range []snmp.OID{{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1}, {1, 3, 6, 1, 2, 1, 2, 2, 1, 2}} {
		resp, err := n.a.sess.Do(n.a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds([]snmp.OID{append(col.Clone(), uint32(index))})})
		if err == nil && len(resp.VarBinds) > 0 && !resp.VarBinds[0].Value.Type.IsException() {
			b := resp.VarBinds[0].Value.Bytes
			name = string(b[:min(len(b), 63)])
			break
		}
	}
	cache[index] = name
	return name
}

// routes is snmpnetstat -Cr: inetCidrRouteTable, IPv4 then IPv6.
func (n *netstatRun) routes() bool {
	cols := []uint32{7, 8, 9, 10, 11, 12} // IfIndex, Type, Proto, Age, NextHopAS, Metric1
	cur := make([]snmp.OID, len(cols))
	for i, c := range cols {
		cur[i] = append(oidInetCidrRouteEntry.Clone(), c)
	}
	first := append(oidInetCidrRouteEntry.Clone(), 7)
	names := map[int64]string{}
	hdr := 0
	for {
		resp, err := n.a.sess.Do(n.a.ctx, &snmp.PDU{Type: snmp.GetNextRequest, VarBinds: nullBinds(cur)})
		if err != nil || len(resp.VarBinds) != len(cols) {
			return true
		}
		vb := resp.VarBinds[0]
		if !vb.Name.HasPrefix(first) || vb.Value.Type.IsException() {
			return true
		}
		for i := range cur {
			cur[i] = resp.VarBinds[i].Name.Clone()
		}
		idx := vb.Name[len(first):]
		if len(idx) < 2 || idx[0] != 1 && idx[0] != 2 {
			n.a.errorf("Bad address type: %d\n", idx[0])
			return false
		}
		af, l := int(idx[0]), int(idx[1])
		if len(idx) < 2+l+1 {
			continue
		}
		dst := idx[2 : 2+l]
		mask := int(idx[2+l])
		rest := idx[3+l:]
		if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
			continue
		}
		rest = rest[1+rest[0]:] // the policy
		if len(rest) < 2+l {
			continue
		}
		hop := rest[2 : 2+l]
		var vals [6]int64
		complete := true
		for i, v := range resp.VarBinds {
			if !v.Name.HasPrefix(append(oidInetCidrRouteEntry.Clone(), cols[i])) || v.Value.Type.IsException() {
				complete = false
				break
			}
			vals[i] = int64(int32(v.Value.Num))
		}
		if !complete || n.family == 1 && af == 2 || n.family == 2 && af == 1 {
			continue
		}
		dstW, gwW := 26, 26
		if af == 2 && n.numeric {
			dstW, gwW = 34, 39
		}
		if hdr != af {
			if hdr != 0 {
				n.a.out.WriteString("\n")
			}
			hdr = af
			if af == 1 {
				n.a.out.WriteString("IPv4 Routing tables (inetCidrRouteTable)\n")
			} else {
				n.a.out.WriteString("IPv6 Routing tables (inetCidrRouteTable)\n")
			}
			fmt.Fprintf(n.a.out, "%-*.*s %-*.*s %-6.6s  %s\n", dstW, dstW, "Destination", gwW, gwW, "Gateway", "Flags", "Interface")
		}
		addr := func(o snmp.OID) netip.Addr {
			b := make([]byte, len(o))
			for i, v := range o {
				b[i] = byte(v)
			}
			a, _ := netip.AddrFromSlice(b)
			return a
		}
		d, h := addr(dst), addr(hop)
		full := 32
		if af == 2 {
			full = 128
		}
		var dstName string
		switch {
		case d.IsUnspecified():
			dstName = "default"
		case mask == full:
			dstName = n.routeName(d)
		default:
			dstName = fmt.Sprintf("%s/%d", d, mask)
		}
		flags := "<U"
		if mask == full {
			flags += "H"
		}
		if vals[2] == 4 {
			flags += "D"
		}
		if vals[1] == 4 {
			flags += "G"
		}
		flags += ">"
		line := fmt.Sprintf("%-*s %-*s %-6.6s  %s", dstW, dstName, gwW, n.routeName(h), flags, n.ifName(vals[0], names))
		if vals[4] != 0 {
			line += fmt.Sprintf(" (AS %d)", vals[4])
		}
		n.a.out.WriteString(line + "\n")
	}
}

// routeName is routexname: the host's name (numeric with -Cn).
func (n *netstatRun) routeName(ip netip.Addr) string {
	if n.numeric || !ip.IsValid() {
		return ip.String()
	}
	s := ip.String()
	ctx, cancel := context.WithTimeout(n.a.ctx, 2*time.Second)
	defer cancel()
	if names, err := net.DefaultResolver.LookupAddr(ctx, s); err == nil && len(names) > 0 {
		s = strings.TrimSuffix(names[0], ".")
	}
	if n.domain != "" {
		if h, d, ok := strings.Cut(s, "."); ok && d == n.domain {
			s = h
		}
	}
	return s
}

// ifRow is one interface of snmpnetstat -Ci.
type ifRow struct {
	index                                                   uint32
	name, descr, ip, route                                  string
	mtu, drops                                              int64
	ipkts, opkts                                            uint64
	sIpkts, sIerrs, sOpkts, sOerrs, sIbytes, sObytes, sOutq string
}

// netName is snmpnetstat's netname: the leading octets of an interface
// address as many as its mask covers, and the mask length.
func netName(addr, mask [4]byte) string {
	m := uint32(mask[0])<<24 | uint32(mask[1])<<16 | uint32(mask[2])<<8 | uint32(mask[3])
	bits := 0
	if m != 0 {
		ffs := 1
		for m&1 == 0 {
			m >>= 1
			ffs++
		}
		bits = 33 - ffs
	}
	switch {
	case bits < 9:
		return fmt.Sprintf("%d/%d", addr[0], bits)
	case bits < 17:
		return fmt.Sprintf("%d.%d/%d", addr[0], addr[1], bits)
	case bits < 25:
		return fmt.Sprintf("%d.%d.%d/%d", addr[0], addr[1], addr[2], bits)
	}
	return fmt.Sprintf("%d.%d.%d.%d/%d", addr[0], addr[1], addr[2], addr[3], bits)
}

// interfaces is snmpnetstat -Ci (-Cb byte counts too, -Co byte counts
// only, -Cd drops).
func (n *netstatRun) interfaces(bytesToo, bytesOnly, drops bool) bool {
	ifCol := func(c uint32) snmp.OID { return snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, c} }
	cols := []snmp.OID{ifCol(2), ifCol(4), ifCol(8)}
	if bytesToo || bytesOnly {
		cols = append(cols, ifCol(10), ifCol(16))
	}
	if !bytesOnly {
		for _, c := range []uint32{11, 12, 14, 17, 18, 20, 21} {
			cols = append(cols, ifCol(c))
		}
	}
	if drops {
		cols = append(cols, ifCol(19))
	}
	cols = append(cols, snmp.OID{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1})
	maxName, maxIP, maxRoute, maxOutq := 4, 7, 7, 5
	maxIpkts, maxIerrs, maxOpkts, maxOerrs, maxIbytes, maxObytes := 5, 5, 5, 5, 6, 6
	grow := func(m *int, s string) {
		if len(s) > *m {
			*m = len(s)
		}
	}
	var rows []*ifRow
	cur := append([]snmp.OID(nil), cols...)
	// ipAddrTable: ipAdEntIfIndex and ipAdEntNetMask, read once.
	var addrIf, addrMask []snmp.VarBind
	addrRead := false
	for {
		resp, err := n.a.sess.Do(n.a.ctx, &snmp.PDU{Type: snmp.GetNextRequest, VarBinds: nullBinds(cur)})
		if err != nil || len(resp.VarBinds) != len(cur) {
			break
		}
		first := resp.VarBinds[0]
		if first.Value.Type.IsException() || !first.Name.HasPrefix(ifCol(2)) {
			break
		}
		for i := range cur {
			cur[i] = resp.VarBinds[i].Name.Clone()
		}
		r := &ifRow{index: first.Name[len(first.Name)-1]}
		for _, vb := range resp.VarBinds {
			if vb.Value.Type.IsException() || len(vb.Name) < 2 {
				continue
			}
			v := vb.Value
			col := vb.Name[len(vb.Name)-2]
			switch col {
			case 2:
				r.name = string(v.Bytes[:min(len(v.Bytes), 127)])
				r.descr = r.name
			case 4:
				r.mtu = int64(int32(v.Num))
			case 10:
				r.sIbytes = strconv.FormatUint(v.Num, 10)
				grow(&maxIbytes, r.sIbytes)
			case 11, 12:
				r.ipkts += v.Num
				r.sIpkts = strconv.FormatUint(r.ipkts, 10)
				grow(&maxIpkts, r.sIpkts)
			case 14:
				r.sIerrs = strconv.FormatUint(v.Num, 10)
				grow(&maxIerrs, r.sIerrs)
			case 16:
				r.sObytes = strconv.FormatUint(v.Num, 10)
				grow(&maxObytes, r.sObytes)
			case 17, 18:
				r.opkts += v.Num
				r.sOpkts = strconv.FormatUint(r.opkts, 10)
				grow(&maxOpkts, r.sOpkts)
			case 19:
				r.drops = int64(int32(v.Num))
			case 20:
				r.sOerrs = strconv.FormatUint(v.Num, 10)
				grow(&maxOerrs, r.sOerrs)
			case 21:
				r.sOutq = strconv.FormatUint(v.Num, 10)
				grow(&maxOutq, r.sOutq)
			case 1:
				r.name = string(v.Bytes[:min(len(v.Bytes), 127)])
				if len(r.name)+1 > maxName {
					maxName = len(r.name) + 1
				}
			}
		}
		// -CI: the other interfaces are left out here, after their
		// counts (and ifNames) have widened the columns, as in
		// snmpnetstat.
		if n.ifaceSet && r.name != n.iface && r.descr != n.iface {
			continue
		}
		if len(r.name)+1 > maxName {
			maxName = len(r.name) + 1
		}
		if !addrRead {
			addrRead = true
			addrIf, _ = n.walkColumn(snmp.OID{1, 3, 6, 1, 2, 1, 4, 20, 1, 2})
			addrMask, _ = n.walkColumn(snmp.OID{1, 3, 6, 1, 2, 1, 4, 20, 1, 3})
		}
		for i, vb := range addrIf {
			if int64(int32(vb.Value.Num)) != int64(int32(r.index)) || i >= len(addrMask) {
				continue
			}
			m := addrMask[i]
			if len(m.Name) >= 14 && len(m.Value.Bytes) >= 4 {
				a := [4]byte{byte(m.Name[10]), byte(m.Name[11]), byte(m.Name[12]), byte(m.Name[13])}
				r.ip = fmt.Sprintf("%d.%d.%d.%d", a[0], a[1], a[2], a[3])
				r.route = netName(a, [4]byte(m.Value.Bytes[:4]))
			}
			break
		}
		grow(&maxIP, r.ip)
		grow(&maxRoute, r.route)
		rows = append(rows, r)
	}
	out := n.a.out
	fmt.Fprintf(out, "%-*.*s %5.5s %-*.*s %-*.*s", maxName, maxName, "Name", "Mtu", maxRoute, maxRoute, "Network", maxIP, maxIP, "Address")
	if bytesOnly {
		fmt.Fprintf(out, " %*s %*s", maxIbytes, "Ibytes", maxObytes, "Obytes")
	} else {
		fmt.Fprintf(out, " %*s %*s", maxIpkts, "Ipkts", maxIerrs, "Ierrs")
		if bytesToo {
			fmt.Fprintf(out, " %*s", maxIbytes, "Ibytes")
		}
		fmt.Fprintf(out, " %*s %*s", maxOpkts, "Opkts", maxOerrs, "Oerrs")
		if bytesToo {
			fmt.Fprintf(out, " %*s", maxObytes, "Obytes")
		}
		fmt.Fprintf(out, " %*s", maxOutq, "Queue")
	}
	if drops {
		fmt.Fprintf(out, " %s", "Drop")
	}
	out.WriteString("\n")
	for _, r := range rows {
		if r.name == "" {
			continue
		}
		name := r.name
		if len(name) > maxName {
			name = name[:maxName]
		}
		fmt.Fprintf(out, "%-*s %5d", maxName, name, r.mtu)
		fmt.Fprintf(out, " %-*.*s", maxRoute, maxRoute, r.route)
		fmt.Fprintf(out, " %-*.*s", maxIP, maxIP, r.ip)
		if bytesOnly {
			fmt.Fprintf(out, " %*s %*s", maxIbytes, r.sIbytes, maxObytes, r.sObytes)
		} else {
			fmt.Fprintf(out, " %*s %*s", maxIpkts, r.sIpkts, maxIerrs, r.sIerrs)
			if bytesToo {
				fmt.Fprintf(out, " %*s", maxIbytes, r.sIbytes)
			}
			fmt.Fprintf(out, " %*s %*s", maxOpkts, r.sOpkts, maxOerrs, r.sOerrs)
			if bytesToo {
				fmt.Fprintf(out, " %*s", maxObytes, r.sObytes)
			}
			fmt.Fprintf(out, " %*s", maxOutq, r.sOutq)
		}
		if drops {
			fmt.Fprintf(out, " %4d", r.drops)
		}
		out.WriteString("\n")
	}
	return true
}
