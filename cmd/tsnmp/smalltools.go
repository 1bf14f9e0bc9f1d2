package main

import (
	"errors"
	"fmt"
	"net"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// Net-SNMP's small tools that operators script with: snmpstatus and
// snmpdf, with their requests, arithmetic and output.

var (
	oidSysDescr      = snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}
	oidSysUpTime     = snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}
	oidIPInReceives  = snmp.OID{1, 3, 6, 1, 2, 1, 4, 3, 0}
	oidIPOutRequests = snmp.OID{1, 3, 6, 1, 2, 1, 4, 10, 0}
	oidIfOperStatus  = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 8}
	oidIfInUcast     = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 11}
	oidIfInNUcast    = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 12}
	oidIfOutUcast    = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 17}
	oidIfOutNUcast   = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 18}
	oidHrStorage     = snmp.OID{1, 3, 6, 1, 2, 1, 25, 2, 3, 1} // hrStorageEntry
	oidDskEntry      = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 9, 1}
)

// uptimeString is Net-SNMP's uptime_string.
func uptimeString(t uint32) string {
	cs, s := t%100, t/100
	days, hours, mins, secs := s/86400, s/3600%24, s/60%60, s%60
	switch days {
	case 0:
		return fmt.Sprintf("%d:%02d:%02d.%02d", hours, mins, secs, cs)
	case 1:
		return fmt.Sprintf("1 day, %d:%02d:%02d.%02d", hours, mins, secs, cs)
	}
	return fmt.Sprintf("%d days, %d:%02d:%02d.%02d", days, hours, mins, secs, cs)
}

// remember makes the session record the addresses of the last message
// received, which snmpstatus prints, keeping -d's dump.
func (a *app) remember(local, remote *net.Addr) {
	prev := a.o.cfg.Trace
	a.o.cfg.Trace = func(sent bool, msg []byte, l, r net.Addr) {
		if prev != nil {
			prev(sent, msg, l, r)
		}
		if !sent {
			*local, *remote = l, r
		}
	}
}

// status is snmpstatus: the agent's description and uptime, its
// interfaces' packet counts and IP counts, and how many interfaces are
// not up.
func (a *app) status(ops []string) int {
	if _, ok := a.parseAppOpts("f", "", ""); !ok {
		return 1
	}
	var local, remote net.Addr
	a.remember(&local, &remote)
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	oids := []snmp.OID{oidSysDescr, oidSysUpTime, oidIPInReceives, oidIPOutRequests}
	var descr *string
	var uptime, ipin, ipout int64
	for {
		resp, err := a.sess.Do(a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds(oids)})
		var se *manager.StatusError
		if errors.As(err, &se) {
			a.packetError(se, true)
			if se.Index < 1 || se.Index > len(resp.VarBinds) || len(resp.VarBinds) < 2 {
				return 2
			}
			oids = oids[:0]
			for i, vb := range resp.VarBinds {
				if i != se.Index-1 {
					oids = append(oids, vb.Name.Clone())
				}
			}
			continue
		}
		if errors.Is(err, manager.ErrTimeout) {
			a.errorf("Timeout: No Response from %s\n", a.peerName())
			return 1
		}
		if err != nil {
			a.requestError(err, false)
			return 2
		}
		for _, vb := range resp.VarBinds {
			switch {
			case vb.Name.Equal(oidSysDescr):
				s := string(vb.Value.Bytes)
				descr = &s
			case vb.Name.Equal(oidSysUpTime) && !vb.Value.Type.IsException():
				uptime = int64(vb.Value.Num)
			case vb.Name.Equal(oidIPInReceives) && !vb.Value.Type.IsException():
				ipin = int64(vb.Value.Num)
			case vb.Name.Equal(oidIPOutRequests) && !vb.Value.Type.IsException():
				ipout = int64(vb.Value.Num)
			}
		}
		break
	}
	d := "(null)"
	if descr != nil {
		d = *descr
	}
	network := "udp"
	if t, err := manager.ParseTarget(a.peer); err == nil {
		network = t.Network
	}
	fmt.Fprintf(a.out, "[%s]=>[%s] Up: %s\n", transportAddr(network, false, local, remote), d, uptimeString(uint32(uptime)))

	// The interface table, column by column with GetNext, as snmpstatus
	// walks it: a round counts an interface when all five columns
	// answered; the round past the end still adds what falls in a
	// matching column.
	cols := []snmp.OID{oidIfOperStatus, oidIfInUcast, oidIfInNUcast, oidIfOutUcast, oidIfOutNUcast}
	next := append([]snmp.OID(nil), cols...)
	var ipackets, opackets int32
	interfaces, down, exit := 0, 0, 0
	for good := 5; good == 5; {
		good = 0
		resp, err := a.sess.Do(a.ctx, &snmp.PDU{Type: snmp.GetNextRequest, VarBinds: nullBinds(next)})
		var se *manager.StatusError
		switch {
		case errors.As(err, &se):
			a.packetError(se, true)
			exit = 2
			continue
		case errors.Is(err, manager.ErrTimeout):
			a.errorf("Timeout: No Response from %s\n", a.peerName())
			exit = 1
			continue
		case err != nil:
			a.requestError(err, false)
			exit = 1
			continue
		}
		next = next[:0]
		for _, vb := range resp.VarBinds {
			if vb.Value.Type.IsException() {
				a.printVarBind(vb)
				continue
			}
			n := vb.Name
			switch {
			case n.HasPrefix(oidIfOperStatus) && vb.Value.Type == snmp.Integer:
				if int64(int32(vb.Value.Num)) != 1 {
					down++
				}
			case (n.HasPrefix(oidIfInUcast) || n.HasPrefix(oidIfInNUcast)) && vb.Value.Type == snmp.Counter32:
				ipackets += int32(vb.Value.Num)
			case (n.HasPrefix(oidIfOutUcast) || n.HasPrefix(oidIfOutNUcast)) && vb.Value.Type == snmp.Counter32:
				opackets += int32(vb.Value.Num)
			default:
				continue
			}
			next = append(next, n.Clone())
			good++
		}
		if good == 5 {
			interfaces++
		}
	}
	fmt.Fprintf(a.out, "Interfaces: %d, Recv/Trans packets: %d/%d | IP: %d/%d\n", interfaces, ipackets, opackets, int32(ipin), int32(ipout))
	if down > 0 {
		if down > 1 {
			fmt.Fprintf(a.out, "%d interfaces are down!\n", down)
		} else {
			fmt.Fprintf(a.out, "%d interface is down!\n", down)
		}
	}
	return exit
}

// formatHuman is snmpdf's size with -Ch (scale 1024) or -CH (1000),
// computed in single precision as it does.
func formatHuman(mem uint64, scale uint64) string {
	i := ""
	if scale == 1024 {
		i = "i"
	}
	f := float32(mem)
	switch {
	case mem >= scale*scale*scale*scale:
		return fmt.Sprintf("%4.2fP%sB", f/float32(scale*scale*scale*scale), i)
	case mem >= scale*scale*scale:
		return fmt.Sprintf("%4.2fT%sB", f/float32(scale*scale*scale), i)
	case mem >= scale*scale:
		return fmt.Sprintf("%4.2fG%sB", f/float32(scale*scale), i)
	case mem >= scale:
		return fmt.Sprintf("%4.2fM%sB", f/float32(scale), i)
	}
	return fmt.Sprintf("%4.2fkB", f)
}

func convertUnits(value, units, divisor uint64) uint64 {
	return uint64(float64(value) * float64(units) / float64(divisor))
}

// dfErr ends snmpdf after a failed exchange as it does.
func (a *app) dfErr(err error) int {
	var se *manager.StatusError
	if errors.As(err, &se) {
		a.errorf("snmpdf: Error in packet: %s\n", errorString(se.Status))
		return 1
	}
	if errors.Is(err, manager.ErrTimeout) {
		a.errorf("snmpdf: Timeout\n")
		return 1
	}
	a.errorf("snmpdf: %s\n", a.withDetail(err.Error()))
	return 1
}

// collect walks a column with GetNext, as snmpdf does.
func (a *app) collect(col snmp.OID) ([]snmp.OID, error) {
	var out []snmp.OID
	cur := col
	for {
		resp, err := a.sess.Do(a.ctx, &snmp.PDU{Type: snmp.GetNextRequest, VarBinds: nullBinds([]snmp.OID{cur})})
		if err != nil {
			return nil, err
		}
		if len(resp.VarBinds) == 0 {
			return out, nil
		}
		vb := resp.VarBinds[0]
		if !vb.Name.HasPrefix(col) || vb.Value.Type.IsException() {
			return out, nil
		}
		out = append(out, vb.Name.Clone())
		cur = vb.Name.Clone()
	}
}

// df is snmpdf: the size, use and free space of each storage area of
// HOST-RESOURCES-MIB's hrStorageTable, or of UCD-SNMP-MIB's dskTable
// (-Cu, or when the agent has no hrStorageTable).
func (a *app) df(ops []string) int {
	f, ok := a.parseAppOpts("uhH", "", "")
	if !ok {
		return 1
	}
	if len(ops) > 0 {
		a.errorf("snmpdf: extra argument: %s\n", ops[0])
		return 1
	}
	var human uint64
	switch {
	case f.set['H']:
		human = 1000
	case f.set['h']:
		human = 1024
	}
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	if human != 0 {
		fmt.Fprintf(a.out, "%-18s %10s %10s %10s %5s\n", "Description", "Size", "Used", "Available", "Used%")
	} else {
		fmt.Fprintf(a.out, "%-18s %15s %15s %15s %5s\n", "Description", "Size (kB)", "Used", "Available", "Used%")
	}
	line := func(descr string, size, used uint64, units uint64) {
		conv := func(v uint64) uint64 {
			if units != 0 {
				return convertUnits(v, units, 1024)
			}
			return v
		}
		pct := used
		if size != 0 {
			pct = convertUnits(used, 100, size)
		}
		if human != 0 {
			fmt.Fprintf(a.out, "%-18s %10s %10s %10s %4d%%\n", descr, formatHuman(conv(size), human), formatHuman(conv(used), human), formatHuman(conv(size-used), human), pct)
		} else {
			fmt.Fprintf(a.out, "%-18s %15d %15d %15d %4d%%\n", descr, conv(size), conv(used), conv(size-used), pct)
		}
	}
	count := 0
	// get reads columns of one row; it reports false when one is missing.
	get := func(entry snmp.OID, idx snmp.OID, cols ...uint32) ([]snmp.Value, bool, error) {
		var oids []snmp.OID
		for _, c := range cols {
			oids = append(oids, append(append(entry.Clone(), c), idx...))
		}
		resp, err := a.sess.Do(a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds(oids)})
		if err != nil {
			return nil, false, err
		}
		var vals []snmp.Value
		for _, vb := range resp.VarBinds {
			if vb.Value.Type == snmp.NoSuchInstance {
				return nil, false, nil
			}
			vals = append(vals, vb.Value)
		}
		return vals, len(vals) == len(cols), nil
	}
	if !f.set['u'] {
		col := append(oidHrStorage.Clone(), 1)
		rows, err := a.collect(col)
		if err != nil {
			return a.dfErr(err)
		}
		for _, r := range rows {
			vals, ok, err := get(oidHrStorage, r[len(col):], 3, 4, 5, 6)
			if err != nil {
				return a.dfErr(err)
			}
			if ok {
				line(string(vals[0].Bytes), uint64(uint32(vals[2].Num)), uint64(uint32(vals[3].Num)), uint64(uint32(vals[1].Num)))
			}
			count++
		}
	}
	if count == 0 {
		col := append(oidDskEntry.Clone(), 1)
		rows, err := a.collect(col)
		if err != nil {
			return a.dfErr(err)
		}
		for _, r := range rows {
			vals, ok, err := get(oidDskEntry, r[len(col):], 2, 6, 8)
			if err != nil {
				return a.dfErr(err)
			}
			if ok {
				line(string(vals[0].Bytes), uint64(uint32(vals[1].Num)), uint64(uint32(vals[2].Num)), 0)
			}
			count++
		}
	}
	if count == 0 {
		a.errorf("Failed to locate any partitions.\n")
		return 1
	}
	return 0
}
