package ucd

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// UCD-SNMP-MIB fileTable and version group.
var (
	FileEntry = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 15, 1}
	Version   = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 100}
)

// File is a `file PATH [MAXSIZE]` directive: fileTable watches the size of
// PATH, in kB, and sets fileErrorFlag above MaxKB (-1: no limit).
type File struct {
	Path  string
	MaxKB int64
}

// VersionInfo is what the version group (versionTag, versionDate,
// versionIdent, versionConfigureOptions) says of the agent.
type VersionInfo struct {
	Tag, Date, Ident, ConfigureOptions string
}

// fileRow is one fileTable row.
type fileRow struct {
	index snmp.OID
	f     File
	kB    int64
}

// readFiles stats each watched file. A file that cannot be read keeps the
// size last read, 0 if none, as in Net-SNMP. (Called by the cache, one
// reading at a time.)
func (m *MIB) readFiles(time.Time) []fileRow {
	if m.fileKB == nil {
		m.fileKB = make([]int64, len(m.cfg.Files))
	}
	rows := make([]fileRow, len(m.cfg.Files))
	for i, f := range m.cfg.Files {
		if st, err := os.Stat(f.Path); err == nil {
			m.fileKB[i] = st.Size() >> 10
		}
		rows[i] = fileRow{index: snmp.OID{uint32(i + 1)}, f: f, kB: m.fileKB[i]}
	}
	return rows
}

type fileRows []fileRow

func (f fileRows) Len() int             { return len(f) }
func (f fileRows) Index(i int) snmp.OID { return f[i].index }
func (f fileRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	r := &f[i]
	over := r.f.MaxKB >= 0 && r.kB > r.f.MaxKB
	switch col {
	case 1:
		return snmp.IntegerValue(int64(r.index[0])), true
	case 2:
		return snmp.StringValue(r.f.Path), true
	case 3:
		return snmp.IntegerValue(min(r.kB, 1<<31-1)), true
	case 4:
		return snmp.IntegerValue(min(r.f.MaxKB, 1<<31-1)), true
	case 100:
		return snmp.IntegerValue(boolInt(over)), true
	case 101:
		if !over {
			return snmp.StringValue(""), true
		}
		return snmp.StringValue(fmt.Sprintf("%s: size exceeds %dkb (= %dkb)", r.f.Path, r.f.MaxKB, r.kB)), true
	}
	return snmp.Value{}, false
}

// initVersion sets up the version group: tsnmpd's own version, build date
// and revision; versionCDate is the agent's current time as ctime(3)
// writes it. The actions (versionClearCache, versionUpdateConfig,
// versionRestartAgent, versionSavePersistentData, versionDoDebugging)
// read 0 and cannot be set: tsnmpd reloads on SIGHUP and keeps its state
// on every change.
func (m *MIB) initVersion() {
	v := m.cfg.Version
	str := func(sub uint32, s string) mib.Scalar {
		return mib.Scalar{Sub: sub, Get: func(*mib.Request) snmp.Value { return snmp.StringValue(s) }}
	}
	zero := func(sub uint32) mib.Scalar {
		return mib.Scalar{Sub: sub, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(0) }}
	}
	m.version = mib.Scalars{Prefix: Version, Objects: []mib.Scalar{
		{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(1) }},
		str(2, v.Tag), str(3, v.Date),
		{Sub: 4, Get: func(r *mib.Request) snmp.Value {
			return snmp.StringValue(ansiC(r.Now.Local()))
		}},
		str(5, v.Ident), str(6, v.ConfigureOptions),
		zero(10), zero(11), zero(12), zero(13), zero(20),
	}}
}

// ansiC formats t as t.Format(time.ANSIC) does, "Mon Jan _2 15:04:05
// 2006", without time's layout interpreter, a large function a walk
// would run for versionCDate alone (docs/mibs.md, the code a walk runs).
func ansiC(t time.Time) string {
	year, month, day := t.Date()
	if year < 0 {
		return t.Format(time.ANSIC)
	}
	hour, min, sec := t.Clock()
	const days, months = "SunMonTueWedThuFriSat", "JanFebMarAprMayJunJulAugSepOctNovDec"
	b := make([]byte, 0, 24)
	two := func(v int, sep byte) { b = append(b, byte('0'+v/10), byte('0'+v%10), sep) }
	wd := int(t.Weekday()) * 3
	b = append(b, days[wd:wd+3]...)
	b = append(b, ' ')
	b = append(b, months[(month-1)*3:month*3]...)
	b = append(b, ' ')
	if day < 10 {
		b = append(b, ' ', byte('0'+day), ' ')
	} else {
		two(day, ' ')
	}
	two(hour, ':')
	two(min, ':')
	two(sec, ' ')
	for p := 1000; p > year && p > 1; p /= 10 {
		b = append(b, '0')
	}
	return string(strconv.AppendInt(b, int64(year), 10))
}
