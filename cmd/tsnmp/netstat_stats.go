package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// tsnmp netstat -Cs prints the protocol statistics as snmpnetstat -Cs
// does: TCP-MIB and UDP-MIB's scalars, IP-MIB's ipSystemStatsTable for
// IPv4 and IPv6, icmpStatsTable and the icmpMsgStatsTable histogram;
// -Css leaves out what is zero, -Cp PROTO prints one protocol (tcp,
// udp, ip, ip6, icmp, icmp6).

// statLine is a counter and snmpnetstat's text for it: a printf
// format of the value and the plural "s".
type statLine struct {
	sub  uint32
	text string
}

var (
	tcpStatLines = []statLine{
		{5, "active open%s"}, {6, "passive open%s"}, {7, "failed attempt%s"},
		{8, "reset%s of established connections"}, {9, "currently established connection%s"},
		{10, "segment%s received"}, {11, "segment%s sent"}, {12, "segment%s retransmitted"},
		{14, "invalid segment%s received"}, {15, "reset%s sent"},
	}
	udpStatLines = []statLine{
		{1, "total datagram%s received"}, {2, "datagram%s to invalid port"},
		{3, "datagram%s dropped due to errors"}, {4, "output datagram request%s"},
	}
)

// sysStat is a column of ipSystemStatsTable (hc: its 64-bit twin, tried
// first) or icmpStatsTable, with snmpnetstat's text.
type sysStat struct {
	col, hc uint32
	text    string
}

var ipSysStats = []sysStat{
	{3, 4, "datagrams input"}, {5, 6, "octets received"}, {7, 0, "hdr errors input"},
	{8, 0, "no routes input"}, {9, 0, "address errors input"}, {10, 0, "unknown protocol input"},
	{12, 13, "input datagrams forwarded"}, {11, 0, "truncated datagrams input"},
	{14, 0, "input reassembly required"}, {15, 0, "input reassemled OK"}, {16, 0, "input reassembly failed"},
	{17, 0, "input datagrams discarded"}, {18, 19, "input datagrams received"},
	{20, 21, "output datagram requests"}, {22, 0, "output no route"}, {23, 24, "datagrams forwarded"},
	{25, 0, "output datagrams discarded"}, {26, 0, "output datagrams fragmentation required"},
	{27, 0, "output datagrams fragmented"}, {28, 0, "output fragmentation failed"},
	{29, 0, "fragments created"}, {30, 31, "datagrams transmitted"}, {32, 33, "octets transmitted"},
}

var icmpSysStats = []sysStat{
	{2, 0, "input messages"}, {3, 0, "input errors"}, {4, 0, "output messages"}, {5, 0, "output errors"},
}

var icmpTypeNames = map[int]string{
	0: "Echo reply", 3: "Destination unreachable", 4: "Source quench", 5: "Redirect",
	6: "Alternate host address", 8: "Echo request", 9: "Router advertisement", 10: "Router selection",
	11: "Time exceeded", 12: "Parameter problem", 13: "Timestamp request", 14: "Timestamp reply",
	15: "Information request", 16: "Information reply", 17: "Address mask request", 18: "Address mask reply",
}

var icmp6TypeNames = map[int]string{
	1: "Destination Unreachable", 2: "Packet Too Big", 3: "Time Exceeded", 4: "Parameter Problem",
	100: "Private experimentation 100", 101: "Private experimentation 101",
	127: "Reserved for expansion of ICMPv6 error messages", 128: "Echo Request", 129: "Echo Reply",
	130: "Multicast Listener Query", 131: "Multicast Listener Report", 132: "Multicast Listener Done",
	133: "Router Solicitation", 134: "Router Advertisement", 135: "Neighbor Solicitation",
	136: "Neighbor Advertisement", 137: "Redirect Message", 138: "Router Renumbering",
	139: "ICMP Node Information Query", 140: "ICMP Node Information Response",
	141: "Inverse Neighbor Discovery Solicitation Message", 142: "Inverse Neighbor Discovery Advertisement Message",
	143: "Version 2 Multicast Listener Report", 144: "Home Agent Address Discovery Request Message",
	145: "Home Agent Address Discovery Reply Message", 146: "Mobile Prefix Solicitation",
	147: "Mobile Prefix Advertisement", 148: "Certification Path Solicitation Message",
	149: "Certification Path Advertisement Message", 151: "Multicast Router Advertisement",
	152: "Multicast Router Solicitation", 153: "Multicast Router Termination", 154: "FMIPv6 Messages",
	155: "RPL Control Message",
}

// stats prints the statistics of proto ("" for all), in snmpnetstat's
// order; zeros only when nonzero is false (-Cs once).
func (n *netstatRun) stats(proto string, nonzero bool) {
	all := proto == ""
	if all || proto == "tcp" {
		n.scalarStats("tcp", snmp.OID{1, 3, 6, 1, 2, 1, 6}, tcpStatLines, nonzero)
	}
	if all || proto == "udp" {
		n.scalarStats("udp", snmp.OID{1, 3, 6, 1, 2, 1, 7}, udpStatLines, nonzero)
	}
	sysTable := snmp.OID{1, 3, 6, 1, 2, 1, 4, 31, 1, 1}
	if all || proto == "ip" {
		n.tableStats("ip", sysTable, 1, ipSysStats, nonzero)
	}
	if all || proto == "ip6" {
		n.tableStats("ip6", sysTable, 2, ipSysStats, nonzero)
	}
	icmpTable := snmp.OID{1, 3, 6, 1, 2, 1, 5, 29, 1}
	if all || proto == "icmp" {
		n.tableStats("icmp", icmpTable, 1, icmpSysStats, nonzero)
		n.histogram("icmp", 1, icmpTypeNames, nonzero)
	}
	if all || proto == "icmp6" {
		n.tableStats("icmp6", icmpTable, 2, icmpSysStats, nonzero)
		n.histogram("icmp6", 2, icmp6TypeNames, nonzero)
	}
}

// scalarStats asks for the scalars of group in one request; a failed
// request prints nothing, as with snmpnetstat.
func (n *netstatRun) scalarStats(name string, group snmp.OID, lines []statLine, nonzero bool) {
	oids := make([]snmp.OID, len(lines))
	for i, l := range lines {
		oids[i] = append(group.Clone(), l.sub, 0)
	}
	resp, err := n.a.sess.Do(n.a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds(oids)})
	if err != nil || resp.ErrorStatus != snmp.NoError {
		return
	}
	fmt.Fprintf(n.a.out, "%s:\n", name)
	for i, vb := range resp.VarBinds {
		if i >= len(lines) || vb.Value.Type.IsException() {
			continue
		}
		v := vb.Value.Num
		if v > 0 || !nonzero {
			fmt.Fprintf(n.a.out, "%14d "+lines[i].text+"\n", v, plural(v))
		}
	}
}

// tableStats prints the columns of one row (IP version ver) of
// ipSystemStatsTable or icmpStatsTable, one request per counter.
func (n *netstatRun) tableStats(name string, table snmp.OID, ver uint32, st []sysStat, nonzero bool) {
	fmt.Fprintf(n.a.out, "%s:\n", name)
	get := func(col uint32) (snmp.Value, bool) {
		resp, err := n.a.sess.Do(n.a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds([]snmp.OID{append(table.Clone(), col, ver)})})
		if err != nil || resp.ErrorStatus != snmp.NoError || len(resp.VarBinds) != 1 {
			return snmp.Value{}, false
		}
		return resp.VarBinds[0].Value, true
	}
	for _, s := range st {
		v, ok := snmp.Value{}, false
		if s.hc != 0 {
			v, ok = get(s.hc)
		}
		if !ok {
			v, ok = get(s.col)
		}
		switch {
		case ok && v.Type == snmp.Counter32:
			if v.Num > 0 || !nonzero {
				fmt.Fprintf(n.a.out, "%14d %s\n", v.Num, s.text)
			}
		case ok && v.Type == snmp.Counter64:
			if v.Num > 0 || !nonzero {
				fmt.Fprintf(n.a.out, "%14s %s\n", strconv.FormatUint(v.Num, 10), s.text)
			}
		default:
			fmt.Fprintf(n.a.out, "%14s %s\n", "-", s.text)
		}
	}
}

// histogram prints icmpMsgStatsTable's counts by message type for IP
// version ver.
func (n *netstatRun) histogram(name string, ver uint32, names map[int]string, nonzero bool) {
	col := snmp.OID{1, 3, 6, 1, 2, 1, 5, 30, 1}
	rows, ok := n.walkColumn(col)
	if !ok {
		return
	}
	fmt.Fprintf(n.a.out, "     %s histogram:\n", name)
	fmt.Fprintf(n.a.out, "     %10s %10s %s\n", "input", "output", "type")
	type counts struct {
		in, out uint64
		found   bool
	}
	byType := map[int]*counts{}
	for _, vb := range rows {
		o := vb.Name
		if len(o) < 12 || o[10] != ver || o[11] > 255 {
			continue
		}
		c := byType[int(o[11])]
		if c == nil {
			c = &counts{}
			byType[int(o[11])] = c
		}
		c.found = true
		if o[9] == 3 {
			c.in = vb.Value.Num
		} else {
			c.out = vb.Value.Num
		}
	}
	for code := 0; code < 256; code++ {
		c := byType[code]
		if c == nil || !c.found || (c.in == 0 && c.out == 0 && nonzero) {
			continue
		}
		label, ok := names[code]
		if !ok {
			label = "type " + strconv.Itoa(code)
		}
		fmt.Fprintf(n.a.out, "     %10d %10d %s\n", c.in, c.out, label)
	}
}

// plural is snmpnetstat's: "s" unless exactly one.
func plural(v uint64) string {
	if v == 1 {
		return ""
	}
	return "s"
}

// sideways is snmpnetstat's interval mode (-Cw SECONDS): every interval
// the packets, errors, bytes and queue lengths of all interfaces
// together (or, with -CI, of one), as the change since the last line,
// under a banner printed again every 21 lines; until interrupted. The
// sums are those of the ifTable's rows: snmpnetstat 5.9 walks its
// columns on past their ends (into the following columns and tables)
// and so prints other numbers.
func (n *netstatRun) sideways(interval time.Duration, drops bool) int {
	ifEntry := snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}
	type totals struct{ ip, ie, ib, op, ob, oe, co, dr uint64 }
	add := func(t *totals, col uint32, v uint64) {
		switch col {
		case 10:
			t.ib += v
		case 11, 12:
			t.ip += v
		case 14:
			t.ie += v
		case 16:
			t.ob += v
		case 17, 18:
			t.op += v
		case 19:
			t.dr += v
		case 20:
			t.oe += v
		case 21:
			t.co += v
		}
	}
	title := "(Total)"
	var sample func() totals
	if n.ifaceSet {
		// The interface by ifDescr, else ifName, else ifAlias.
		var index uint32
		found := false
		for _, col := range []snmp.OID{append(ifEntry.Clone(), 2), {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1}, {1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 18}} {
			vbs, _ := n.walkColumn(col)
			for _, vb := range vbs {
				if string(vb.Value.Bytes) == n.iface && len(vb.Name) > len(col) {
					index, found = vb.Name[len(col)], true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			n.a.errorf("%s: unknown interface\n", n.iface)
			return 1
		}
		title = n.iface
		cols := []uint32{10, 16, 11, 12, 14, 17, 18, 20, 21}
		if drops {
			cols = append(cols, 19)
		}
		sample = func() totals {
			var t totals
			binds := make([]snmp.OID, len(cols))
			for i, c := range cols {
				binds[i] = append(ifEntry.Clone(), c, index)
			}
			resp, err := n.a.sess.Do(n.a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds(binds)})
			if err != nil || resp.ErrorStatus != snmp.NoError {
				return t
			}
			for _, vb := range resp.VarBinds {
				if vb.Value.Type.IsException() || len(vb.Name) != len(ifEntry)+2 {
					continue
				}
				add(&t, vb.Name[len(ifEntry)], vb.Value.Num)
			}
			return t
		}
	} else {
		cols := []uint32{11, 12, 14, 17, 18, 20, 21, 10, 16}
		if drops {
			cols = append(cols, 19)
		}
		sample = func() totals {
			var sum totals
			cur := make([]snmp.OID, len(cols))
			for i, c := range cols {
				cur[i] = append(ifEntry.Clone(), c)
			}
			for {
				resp, err := n.a.sess.Do(n.a.ctx, &snmp.PDU{Type: snmp.GetNextRequest, VarBinds: nullBinds(cur)})
				if err != nil || resp.ErrorStatus != snmp.NoError || len(resp.VarBinds) != len(cur) {
					break
				}
				if resp.VarBinds[0].Value.Type.IsException() || !resp.VarBinds[0].Name.HasPrefix(append(ifEntry.Clone(), cols[0])) {
					break
				}
				for i, vb := range resp.VarBinds {
					cur[i] = vb.Name.Clone()
					if vb.Value.Type.IsException() || !vb.Name.HasPrefix(append(ifEntry.Clone(), cols[i])) {
						continue
					}
					add(&sum, vb.Name[len(ifEntry)], vb.Value.Num)
				}
			}
			return sum
		}
	}
	var last totals
	first := true
	deadline := time.Now().Add(interval)
	for {
		fmt.Fprintf(n.a.out, "%17s %14s %16s\n", "input", title, "output")
		fmt.Fprintf(n.a.out, "%10s %5s %10s %10s %5s %10s %5s", "packets", "errs", "bytes", "packets", "errs", "bytes", "colls")
		if drops {
			fmt.Fprintf(n.a.out, " %5.5s", "drops")
		}
		fmt.Fprintln(n.a.out)
		n.a.out.Flush()
		for line := 0; line < 21; line++ {
			sum := sample()
			if !first {
				fmt.Fprintf(n.a.out, "%10d %5d %10d %10d %5d %10d %5d", sum.ip-last.ip, sum.ie-last.ie, sum.ib-last.ib,
					sum.op-last.op, sum.oe-last.oe, sum.ob-last.ob, sum.co-last.co)
				if drops {
					fmt.Fprintf(n.a.out, " %5d", sum.dr-last.dr)
				}
				fmt.Fprintln(n.a.out)
				n.a.out.Flush()
			}
			last, first = sum, false
			select {
			case <-n.a.ctx.Done():
				return 0
			case <-time.After(time.Until(deadline)):
			}
			deadline = time.Now().Add(interval)
		}
	}
}
