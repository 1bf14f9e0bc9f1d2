package hostres

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// Package is one installed package of the dpkg database.
type Package struct {
	Name, Version, Arch string
	Essential           bool
	Status              string
}

// ParseDpkgStatus reads /var/lib/dpkg/status: stanzas of "Field: value"
// lines separated by blank lines. Continuation lines (starting with a
// space) and unknown fields are skipped; a stanza without Package is
// dropped.
func ParseDpkgStatus(b []byte) []Package {
	var out []Package
	var cur Package
	flush := func() {
		if cur.Name != "" {
			out = append(out, cur)
		}
		cur = Package{}
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			flush()
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		val := string(bytes.TrimSpace(v))
		switch string(k) {
		case "Package":
			cur.Name = val
		case "Version":
			cur.Version = val
		case "Architecture":
			cur.Arch = val
		case "Essential":
			cur.Essential = val == "yes"
		case "Status":
			cur.Status = val
		}
	}
	flush()
	return out
}

// swInstalled serves hrSWInstalledTable from the dpkg database, read
// again only when the status file changes.
type swInstalled struct {
	fs   procfs.FS
	path string

	mu      sync.Mutex
	checked time.Time
	mtime   time.Time
	size    int64
	rows    *swRows
	// local: the database is on a file system whose stat(2) answers from
	// memory, checked once (0 not yet, 1 yes, -1 no): its stat is then
	// made without telling the runtime (internal/rawsys), which every
	// walk's reading woke otherwise.
	local int8
}

// stat returns the status file's modification time and size.
func (s *swInstalled) stat() (time.Time, int64, error) {
	path := s.fs.Path(s.path)
	if s.local == 0 {
		s.local = -1
		var st unix.Statfs_t
		if unix.Statfs(path, &st) == nil && rawsys.LocalMagic(int64(st.Type)) {
			s.local = 1
		}
	}
	if s.local < 0 {
		st, err := os.Stat(path)
		if err != nil {
			return time.Time{}, 0, err
		}
		return st.ModTime(), st.Size(), nil
	}
	var st unix.Stat_t
	if err := rawsys.Stat(path, &st); err != nil {
		return time.Time{}, 0, err
	}
	return time.Unix(st.Mtim.Unix()), st.Size, nil
}

type swRow struct {
	index snmp.OID
	name  []byte // hrSWInstalledName, made once per reading of the database
	typ   int64
	date  []byte
}

// swRows are served through a pointer, which a request's memo holds
// without an allocation.
type swRows []swRow

func (s *swInstalled) get(r *mib.Request, ttl time.Duration) mib.Rows {
	return r.Memo(s, func() any { return s.current(r.Now, ttl) }).(*swRows)
}

func (s *swInstalled) current(now time.Time, ttl time.Duration) *swRows {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ttl <= 0 {
		ttl = time.Second
	}
	if !s.checked.IsZero() && now.Sub(s.checked) < ttl && !now.Before(s.checked) {
		return s.rows
	}
	s.checked = now
	mtime, size, err := s.stat()
	if err != nil {
		s.rows, s.mtime, s.size = &swRows{}, time.Time{}, 0
		return s.rows
	}
	if mtime.Equal(s.mtime) && size == s.size {
		return s.rows
	}
	b, err := os.ReadFile(s.fs.Path(s.path))
	if err != nil {
		return s.rows
	}
	s.mtime, s.size = mtime, size
	pkgs := ParseDpkgStatus(b)
	// dpkg-query lists packages by name, then architecture.
	slices.SortStableFunc(pkgs, func(a, b Package) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Arch, b.Arch))
	})
	info := filepath.Join(filepath.Dir(s.path), "info")
	rows := make(swRows, 0, len(pkgs))
	for i, p := range pkgs {
		if strings.Contains(p.Status, "not-installed") {
			continue // its index stays unused, as in Net-SNMP
		}
		row := swRow{index: snmp.OID{uint32(i + 1)}, name: []byte(p.Name + "_" + p.Version + "_" + p.Arch), typ: swApplication, date: backupDate}
		if p.Essential {
			row.typ = swOS
		}
		for _, f := range []string{p.Name + ".list", p.Name + ":" + p.Arch + ".list"} {
			if st, err := os.Stat(s.fs.Path(filepath.Join(info, f))); err == nil {
				row.date = DateAndTime(st.ModTime())
				break
			}
		}
		if len(row.name) > 64 {
			row.name = row.name[:64]
		}
		rows = append(rows, row)
	}
	s.rows = &rows
	return s.rows
}

func (s *swRows) Len() int {
	if s == nil {
		return 0
	}
	return len(*s)
}
func (s *swRows) Index(i int) snmp.OID { return (*s)[i].index }
func (s *swRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	w := &(*s)[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(w.index[0])), true
	case 2:
		return snmp.BytesValue(w.name), true
	case 3:
		return snmp.OIDValue(zeroDotZero), true
	case 4:
		return snmp.IntegerValue(w.typ), true
	case 5:
		return snmp.BytesValue(w.date), true
	}
	return snmp.Value{}, false
}
