package main

import (
	"errors"
	"fmt"
	"os"
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
//	-CP N        report every N periods: the average and the peak
//	-CF FILE     objects to poll, one a line, before those of the
//	             command line
//	-CS          a "Sum" line: the sum of the others (-CL NAME names it)
//	-Cl          append each object's lines to the file AGENT-NAME
//	             instead of printing them
//
// It runs until interrupted.

type deltaVar struct {
	oid   snmp.OID // nil for -CS's sum
	descr string
	typ   snmp.Type
	value uint32
	c64   uint64
	time  int64
	max   float32
	// -CP: polls counted towards the next report (-1 until the first
	// report period starts), their sum and the peak.
	peakCount        int
	peak, peakAvgSum float32
}

// readDeltaFile reads snmpdelta's -CF file: an object name a line,
// without blank lines and lines starting with '#'. A file that cannot be
// opened gives nothing, as with snmpdelta.
func readDeltaFile(name string) ([]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, nil
	}
	var out []string
	for i, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		if len(l) > 258 {
			return nil, msgf("Line too long on line %d of %s", i+1, name) // snmpdelta's words
		}
		if l[0] == '#' || strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, l[:len(l)-1]) // the last character goes, newline or not
	}
	return out, nil
}

// peakStart reports whether a -CP report period starts now: when the
// seconds to the next full hour are a multiple of it.
func peakStart(now time.Time, seconds int) bool {
	next := now.Truncate(time.Hour).Add(time.Hour)
	return int(next.Unix()-now.Unix())%seconds == 0
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
	fileout, dosum := f.set['l'], f.set['S']
	sumName := "Sum"
	if f.set['L'] {
		sumName = a.o.tableC['L']
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
	peaks := 0
	if f.set['P'] {
		peaks, _ = strconv.Atoi(a.o.tableC['P']) // atoi, as snmpdelta
	}
	if f.set['F'] {
		names, err := readDeltaFile(a.o.tableC['F'])
		if err != nil {
			a.errorf("%v\n", err)
			return 1
		}
		ops = append(names, ops...)
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
		vars = append(vars, &deltaVar{oid: o, descr: deltaDescriptor(a.o.out.OID(o)), peakCount: -1})
	}
	if dosum {
		vars = append(vars, &deltaVar{descr: sumName, peakCount: -1})
	}
	var sum uint32 // -CS: this round's deltas so far
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	if table && timestamp {
		a.out.WriteString(a.peer)
	}
	if table {
		for _, v := range vars {
			if v.oid != nil {
				a.out.WriteString("\t" + v.descr)
			}
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
			if v.oid != nil {
				oids = append(oids, v.oid)
			}
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
				if period%60 != 0 && (peaks == 0 || period*peaks%60 != 0) || keepSeconds {
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
				var value uint32
				var c64 uint64
				if v.oid != nil {
					if len(vbs) == 0 || vbs[0].Value.Type.IsException() {
						a.errorf("Missing variable in reply\n")
						break
					}
					vb := vbs[0]
					vbs = vbs[1:]
					v.typ = vb.Value.Type
					if v.typ == snmp.Counter64 {
						c64 = vb.Value.Num - v.c64
						v.c64 = vb.Value.Num
					} else {
						value = uint32(vb.Value.Num) - v.value
						v.value = uint32(vb.Value.Num)
					}
				} else {
					value, sum = sum, 0
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
				if v.oid != nil && v.typ != snmp.Counter64 {
					sum += value
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
				var valueStr string
				if deltat || table {
					if v.typ == snmp.Counter64 {
						a.errorf("time delta and table form not supported for counter64s\n")
						return 1
					}
					pv = float32(value) * 100 / float32(dt)
					if table {
						valueStr = fmt.Sprintf("\t%.2f", pv)
					} else {
						valueStr = fmt.Sprintf(" /sec: %.2f", pv)
					}
				} else {
					pv = float32(value)
					valueStr = fmt.Sprintf(" /%d sec: ", period)
					if v.typ == snmp.Counter64 {
						valueStr += strconv.FormatUint(c64, 10)
					} else {
						valueStr += strconv.FormatUint(uint64(value), 10)
					}
				}
				print := true
				if peaks == 0 {
					out += valueStr
				} else {
					// Only every peaks polls, from a report period's
					// start: the average and the peak.
					print = false
					if v.peakCount == -1 {
						if peakStart(time.Now(), period*peaks) {
							v.peakCount = 0
						}
					} else {
						v.peakAvgSum += pv
						v.peak = max(v.peak, pv)
						if v.peakCount++; v.peakCount == peaks {
							avg := v.peakAvgSum / float32(v.peakCount)
							if deltat {
								out += fmt.Sprintf(" /sec: %.2f\t(%d sec Peak: %.2f)", avg, period, v.peak)
							} else {
								out += fmt.Sprintf(" /%d sec: %.0f\t(%d sec Peak: %.0f)", period, avg, period, v.peak)
							}
							v.peakAvgSum, v.peak, v.peakCount = 0, 0, 0
							print = true
						}
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
				switch {
				case !print:
				case fileout:
					// Appended to AGENT-NAME, as snmpdelta's -Cl.
					name := a.name + "-" + v.descr
					if err := appendLine(name, out[min(1, len(out)):]); err != nil {
						a.errorf("Couldn't open %s\n", name)
					}
				case table:
					a.out.WriteString(out)
				default:
					a.out.WriteString(out[min(1, len(out)):] + "\n")
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

// appendLine appends line and a newline to the file name.
func appendLine(name, line string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
