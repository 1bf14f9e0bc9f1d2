package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// tsnmp delta is snmpdelta: it polls counters every period (aligned, as
// snmpdelta aligns it, on the hour) and prints how much each grew.
//
//	-Cp SECONDS  period (default 1)     -Cs  timestamps
//	-Ct          rates per second from the agent's sysUpTime
//	-CT          table form              -Cm  the maximum so far
//	-Ck          seconds in timestamps   -Cv N variables per request
//	-Cf          do not fix errors and retry
//
// It runs until interrupted.

type deltaVar struct {
	oid   snmp.OID
	descr string
	typ   snmp.Type
	value uint32
	c64   uint64
	time  int64
	max   float32
}

// deltaDescriptor is snmpdelta's short name of an OID: the printed name
// from the last component holding a letter.
func deltaDescriptor(s string) string {
	i := strings.LastIndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
	if i < 0 {
		return s
	}
	if j := strings.LastIndexByte(s[:i], '.'); j >= 0 {
		return s[j+1:]
	}
	return s
}

// nextPeriod is when the first poll happens: at the next multiple of
// period counted back from the next full hour, as snmpdelta waits.
func nextPeriod(now time.Time, period int) time.Time {
	next := now.Truncate(time.Hour).Add(time.Hour)
	wait := int(next.Unix()-now.Unix()) % period
	if wait == 0 {
		wait = period
	}
	return time.Unix(now.Unix()+int64(wait), 0)
}

func (a *app) delta(ops []string) int {
	f, ok := a.parseAppOpts("fstTmkpPvFLlSc", "", "")
	if !ok {
		return 1
	}
	for _, c := range "lFSL" {
		if f.set[byte(c)] {
			a.errorf("snmpdelta: -C%c (files) is not supported\n", c)
			return 1
		}
	}
	num := func(c byte, def int) (int, bool) {
		v, ok := a.o.tableC[c]
		if !ok {
			return def, true
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			a.errorf("snmpdelta: bad -C%c value %q\n", c, v)
			return 0, false
		}
		return n, true
	}
	period, ok1 := num('p', 1)
	perPacket, ok2 := num('v', 60)
	if !ok1 || !ok2 {
		return 1
	}
	if f.set['P'] {
		a.errorf("snmpdelta: -CP (peaks) is not supported\n")
		return 1
	}
	deltat, timestamp, table, printMax, keepSeconds := f.set['t'], f.set['s'], f.set['T'], f.set['m'], f.set['k']
	if len(ops) == 0 {
		a.usage()
		return 1
	}
	var vars []*deltaVar
	for _, s := range ops {
		o, ok := a.parseOID(s)
		if !ok {
			return 1
		}
		vars = append(vars, &deltaVar{oid: o, descr: deltaDescriptor(a.o.out.OID(o))})
	}
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	if table && timestamp {
		a.out.WriteString(a.peer)
	}
	if table {
		for _, v := range vars {
			a.out.WriteString("\t" + v.descr)
		}
	}
	a.out.Flush()
	target := nextPeriod(time.Now(), period)
	wait := func() bool {
		t := time.NewTimer(time.Until(target))
		defer t.Stop()
		select {
		case <-a.ctx.Done():
			return false
		case <-t.C:
		}
		target = target.Add(time.Duration(period) * time.Second)
		return true
	}
	if !wait() {
		return 0
	}
	sysUpTime := snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}
	for begin := 0; ; {
		end := min(len(vars), begin+perPacket-boolInt(deltat))
		var oids []snmp.OID
		if deltat {
			oids = append(oids, sysUpTime)
		}
		for _, v := range vars[begin:end] {
			oids = append(oids, v.oid)
		}
		resp, err := a.sess.Do(a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds(oids)})
		var se *manager.StatusError
		switch {
		case errors.As(err, &se):
			if se.Index != 0 {
				a.errorf("Failed object: ")
				if name, ok := se.FailedObject(); ok {
					a.errorf("%s", a.o.out.OID(name))
				}
				a.errorf("\n")
			} else {
				a.errorf("Error in packet: %s\n", errorString(se.Status))
				return 1
			}
		case errors.Is(err, manager.ErrTimeout):
			a.errorf("Timeout: No Response from %s\n", a.peerName())
			return 1
		case errors.Is(err, a.ctx.Err()) && a.ctx.Err() != nil:
			return 0
		case err != nil:
			a.requestError(err, false)
			return 1
		default:
			var stamp string
			if timestamp {
				now := time.Now()
				if period%60 != 0 || keepSeconds {
					stamp = fmt.Sprintf(" [%02d:%02d:%02d %d/%d]", now.Hour(), now.Minute(), now.Second(), int(now.Month()), now.Day())
				} else {
					stamp = fmt.Sprintf(" [%02d:%02d %d/%d]", now.Hour(), now.Minute(), int(now.Month()), now.Day())
				}
			}
			vbs := resp.VarBinds
			thisTime := int64(1)
			if deltat {
				if len(vbs) == 0 {
					a.errorf("Missing variable in reply\n")
					continue
				}
				thisTime = int64(vbs[0].Value.Num)
				vbs = vbs[1:]
			}
			for i, v := range vars[begin:end] {
				if i >= len(vbs) || vbs[i].Value.Type.IsException() {
					a.errorf("Missing variable in reply\n")
					break
				}
				vb := vbs[i]
				v.typ = vb.Value.Type
				var value uint32
				var c64 uint64
				if v.typ == snmp.Counter64 {
					c64 = vb.Value.Num - v.c64
					v.c64 = vb.Value.Num
				} else {
					value = uint32(vb.Value.Num) - v.value
					v.value = uint32(vb.Value.Num)
				}
				dt := thisTime - v.time
				if dt <= 0 {
					dt = 100
				}
				last := v.time
				v.time = thisTime
				if last == 0 {
					continue
				}
				var out string
				if table {
					if i == 0 {
						out = strings.TrimPrefix(stamp, " ")
					}
				} else {
					out = stamp + " " + v.descr
				}
				var pv float32
				if deltat || table {
					if v.typ == snmp.Counter64 {
						a.errorf("time delta and table form not supported for counter64s\n")
						return 1
					}
					pv = float32(value) * 100 / float32(dt)
					if table {
						out += fmt.Sprintf("\t%.2f", pv)
					} else {
						out += fmt.Sprintf(" /sec: %.2f", pv)
					}
				} else {
					pv = float32(value)
					out += fmt.Sprintf(" /%d sec: ", period)
					if v.typ == snmp.Counter64 {
						out += strconv.FormatUint(c64, 10)
					} else {
						out += strconv.FormatUint(uint64(value), 10)
					}
				}
				if printMax {
					v.max = max(v.max, pv)
					if deltat {
						out += fmt.Sprintf("\t(Max: %.2f)", v.max)
					} else {
						out += fmt.Sprintf("\t(Max: %.0f)", v.max)
					}
				}
				if table {
					a.out.WriteString(out)
				} else {
					a.out.WriteString(strings.TrimPrefix(out, " ") + "\n")
				}
			}
			if table && end == len(vars) {
				a.out.WriteString("\n")
			}
			a.out.Flush()
		}
		begin = end
		if begin >= len(vars) {
			begin = 0
			if !wait() {
				return 0
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
