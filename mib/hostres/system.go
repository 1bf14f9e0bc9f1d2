package hostres

import (
	"bytes"
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// sysInfo is one reading of the hrSystem group's sources.
type sysInfo struct {
	uptime uint64 // centiseconds since boot
	users  int64
	procs  int64
}

func (m *MIB) initSystem() {
	cmdline := []byte{}
	if b, err := m.cfg.FS.ReadFile("/proc/cmdline"); err == nil {
		b = bytes.TrimRight(b, "\n\x00")
		cmdline = b[:min(len(b), 128)] // DisplayString (SIZE (0..128))
	}
	info := &procfs.Cache[sysInfo]{TTL: m.cfg.CacheTTL, Load: m.readSys}
	m.system = mib.Scalars{Prefix: HrSystem, Objects: []mib.Scalar{
		{Sub: 1, Get: func(r *mib.Request) snmp.Value {
			return snmp.TimeTicksValue(uint32(info.Get(r).uptime))
		}},
		{Sub: 2, Get: func(r *mib.Request) snmp.Value { return snmp.BytesValue(DateAndTime(r.Now)) }},
		// The boot disk: as Net-SNMP, the first hrDeviceDiskStorage index.
		{Sub: 3, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(devDisk << 16) }},
		{Sub: 4, Get: func(*mib.Request) snmp.Value { return snmp.BytesValue(cmdline) }},
		{Sub: 5, Get: func(r *mib.Request) snmp.Value { return snmp.Gauge32Value(uint32(info.Get(r).users)) }},
		{Sub: 6, Get: func(r *mib.Request) snmp.Value { return snmp.Gauge32Value(uint32(info.Get(r).procs)) }},
		// Linux has no fixed maximum that RFC 2790 means: 0.
		{Sub: 7, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(0) }},
	}}
}

// readSys reads the hrSystem group's sources. hrSystemProcesses counts
// /proc's process directories from the scan the process listing
// (hrSWRunTable) takes too: a walk reads /proc once for both.
func (m *MIB) readSys(now time.Time) sysInfo {
	var s sysInfo
	if b, err := m.uptimeFile.Read(&m.uptimeBuf); err == nil {
		var ok bool
		if s.uptime, ok = parseUptime(b); !ok {
			procfs.CountBad("/proc/uptime", 1)
		}
	}
	if n, ok := m.procs.Count(now); ok {
		s.procs = int64(n)
	}
	if b, err := m.cfg.FS.ReadFile("/run/utmp"); err == nil {
		s.users = CountUsers(b, func(pid int32) bool {
			return rawsys.Kill(int(pid), 0) != unix.ESRCH
		})
	}
	return s
}

// utmp record layout (glibc, all 64-bit and 32-bit Linux ABIs).
const (
	utmpSize    = 384
	userProcess = 7
)

// CountUsers counts the USER_PROCESS records of a utmp file whose
// process still runs (alive reports that), as who(1) and Net-SNMP do.
// A truncated last record is ignored.
func CountUsers(b []byte, alive func(pid int32) bool) int64 {
	var n int64
	for ; len(b) >= utmpSize; b = b[utmpSize:] {
		if binary.NativeEndian.Uint16(b) != userProcess {
			continue
		}
		if alive(int32(binary.NativeEndian.Uint32(b[4:]))) {
			n++
		}
	}
	return n
}

// DateAndTime encodes t in its zone as an SNMPv2-TC DateAndTime of 11
// octets (deciseconds as 0, as Net-SNMP).
func DateAndTime(t time.Time) []byte {
	_, off := t.Zone()
	dir := byte('+')
	if off < 0 {
		dir, off = '-', -off
	}
	return []byte{
		byte(t.Year() >> 8), byte(t.Year()), byte(t.Month()), byte(t.Day()),
		byte(t.Hour()), byte(t.Minute()), byte(t.Second()), 0,
		dir, byte(off / 3600), byte(off % 3600 / 60),
	}
}

// parseUptime reads the first field of /proc/uptime, seconds since boot
// with two decimals ("350735.47"), as centiseconds, exactly: no float
// (whose product by 100 could fall a centisecond short) and no copy of
// the file. Digits after the second decimal are dropped.
func parseUptime(b []byte) (cs uint64, ok bool) {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	end := 0
	for end < len(b) && !isSpace(b[end]) {
		end++
	}
	sec, frac, dot := bytes.Cut(b[:end], []byte("."))
	if len(sec) == 0 || len(sec) > 15 || dot && len(frac) == 0 {
		return 0, false
	}
	for _, c := range sec {
		if c < '0' || c > '9' {
			return 0, false
		}
		cs = cs*10 + uint64(c-'0')
	}
	for i, c := range frac {
		if c < '0' || c > '9' {
			return 0, false
		}
		if i < 2 {
			cs = cs*10 + uint64(c-'0')
		}
	}
	for i := len(frac); i < 2; i++ {
		cs *= 10
	}
	return cs, true
}
