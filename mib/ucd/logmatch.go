package ucd

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lestrrat-go/strftime"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// UCD-SNMP-MIB's logMatch group.
var (
	LogMatchMaxEntries = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 16, 1}
	LogMatchEntry      = snmp.OID{1, 3, 6, 1, 4, 1, 2021, 16, 2, 1}
)

// maxLogMatches is logMatchMaxEntries: Net-SNMP's limit, which tsnmp keeps
// so that a configuration moves between the two agents unchanged.
const maxLogMatches = 250

// logChunk bounds what one reading of a log file takes in: a file that
// grew by more is read on in the next readings, so that no request waits
// for gigabytes to be matched.
const logChunk = 16 << 20

// LogMatch is a `logmatch NAME FILE CYCLE REGEX` directive: logMatchTable
// counts the lines added to FILE that REGEX matches, reading what was
// added every CYCLE seconds and whenever the row is read.
type LogMatch struct {
	Name string
	// File names the log; strftime(3) conversions in it (%Y%m%d) name
	// the file of the current local time, as in Net-SNMP: a new name
	// starts the file's counting afresh.
	File string
	// Cycle is the period of the readings in seconds; 0 or less: read
	// only when the row is read (less than 0 also sets logMatchErrorFlag,
	// as in Net-SNMP).
	Cycle int
	// Regexp is matched against each line, without its newline (Go's
	// RE2 syntax, which takes POSIX extended expressions except
	// backreferences).
	Regexp string
}

// logMatch is one logMatchTable row and its reading state.
type logMatch struct {
	cfg   LogMatch
	re    *regexp.Regexp
	reErr string // logMatchRegExCompilation: "Success" (regerror(3)'s word, as in Net-SNMP) or why not
	state string // the file keeping pos and counters; "" none
	// netSNMP is Net-SNMP's file for the line, read at the first reading
	// when state does not exist yet; imported names it once read.
	netSNMP, imported string

	mu        sync.Mutex
	restored  bool        // the state file was read (at the first reading)
	stopped   bool        // StopLogs: no more readings, the state file is left alone
	file      string      // the current file's name
	pos       int64       // where the next reading starts
	global    uint64      // matches since the first reading (kept across restarts)
	current   uint64      // matches in the current file (kept across restarts)
	sinceRead uint64      // matches since logMatchCounter or logMatchCount was read
	id        os.FileInfo // the file last read, to tell a new one under its name
	behind    bool        // the last reading stopped at logChunk
	lastErr   string      // the last error logged, so that a lasting one is logged once
	buf       []byte
}

func newLogMatch(cfg LogMatch, stateDir, netSNMPDir string) *logMatch {
	l := &logMatch{cfg: cfg, reErr: "Success"}
	if re, err := regexp.Compile(cfg.Regexp); err != nil {
		l.reErr = err.Error()
	} else {
		l.re = re
	}
	if stateDir != "" {
		l.state = filepath.Join(stateDir, "logmatch_"+url.PathEscape(cfg.Name)+".pos")
		if netSNMPDir != "" && !strings.Contains(cfg.Name, "/") {
			l.netSNMP = filepath.Join(netSNMPDir, "snmpd_logmatch_"+cfg.Name+".pos")
		}
	}
	l.file = l.fileName(time.Now())
	return l
}

// fileName expands the strftime conversions of the configured name; a
// name without % is used as it is.
func (l *logMatch) fileName(now time.Time) string {
	if !strings.Contains(l.cfg.File, "%") {
		return l.cfg.File
	}
	s, err := strftime.Format(l.cfg.File, now)
	if err != nil {
		return l.cfg.File
	}
	return s
}

// errFlag is logMatchErrorFlag: the line cannot work as configured.
func (l *logMatch) errFlag() bool { return l.re == nil || l.cfg.Cycle < 0 }

// update reads what was added to the log since the last reading and
// counts the matching lines. It returns an error only for what an operator
// should hear of: a damaged state file, or one that cannot be written.
func (l *logMatch) update(now time.Time) error {
	if l.re == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return nil
	}
	var errs []error
	if !l.restored {
		l.restored = true
		errs = append(errs, l.restore())
	}
	changed := false
	if name := l.fileName(now); name != l.file {
		l.file, l.pos, l.current, changed = name, 0, 0, true
	}
	// Only a regular file is read; O_NONBLOCK keeps the open of a FIFO
	// from waiting for a writer (a regular file ignores it).
	f, err := os.OpenFile(l.file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		fi, err := f.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		if err == nil && (l.pos > fi.Size() || l.id != nil && !os.SameFile(l.id, fi)) {
			// Shorter than where the last reading ended, or another
			// file under the name: the log was rotated or truncated.
			// Its counting starts afresh.
			l.pos, l.current, changed = 0, 0, true
		}
		if err == nil {
			l.id = fi
			n, matches := l.scan(f)
			l.behind = n >= logChunk
			if n > 0 {
				l.pos += n
				l.global += matches
				l.current += matches
				l.sinceRead += matches
				changed = true
			}
		}
		f.Close()
	}
	if changed && l.state != "" {
		data := logState{pos: l.pos, current: l.current, global: l.global, file: l.file}.String()
		if err := replaceFile(l.state, []byte(data)); err != nil {
			errs = append(errs, fmt.Errorf("logmatch %s: keeping its position: %w", l.cfg.Name, err))
		}
	}
	return errors.Join(errs...)
}

// replaceFile writes path through a temporary file and a rename: a
// reader, or the next start after the agent was killed, finds the old
// content or the new, never a part. It does not wait for the disk (a log
// read at every request would wait at every request); after a power
// failure a position may be older, and lines counted again.
func replaceFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // nothing left after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// scan reads f from l.pos up to the last complete line (a line still being
// written is counted once its newline is there), at most logChunk, and
// returns the octets consumed and the lines that matched.
func (l *logMatch) scan(f *os.File) (n int64, matches uint64) {
	if l.buf == nil {
		l.buf = make([]byte, 64<<10)
	}
	var carry int // octets of an unfinished line at the start of buf
	for n < logChunk {
		r, err := f.ReadAt(l.buf[carry:], l.pos+n+int64(carry))
		data := l.buf[:carry+r]
		end := bytes.LastIndexByte(data, '\n')
		if end < 0 && len(data) == len(l.buf) {
			if len(l.buf) < logChunk {
				// A line longer than the buffer: read on.
				l.buf = append(l.buf, make([]byte, len(l.buf))...)
				carry = len(data)
				continue
			}
			// Longer than a reading takes in: matched as it is.
			if l.re.Match(data) {
				matches++
			}
			n += int64(len(data))
			carry = 0
			continue
		}
		for rest := data[:end+1]; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			if l.re.Match(rest[:i]) {
				matches++
			}
			rest = rest[i+1:]
		}
		n += int64(end + 1)
		carry = copy(l.buf, data[end+1:])
		if err != nil || r == 0 {
			break
		}
	}
	if len(l.buf) > 64<<10 {
		l.buf = nil // a long line's buffer goes back
	}
	return n, matches
}

// restore takes the position and counters the last run kept, as Net-SNMP
// takes them from its snmpd_logmatch_NAME.pos: the global count always,
// the position and the current file's count when the file has the same
// name and is not shorter than the position.
func (l *logMatch) restore() error {
	if l.state == "" {
		return nil
	}
	path := l.state
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && l.netSNMP != "" {
		// Never run here: snmpd's own file, where snmpd kept it.
		path = l.netSNMP
		if b, err = os.ReadFile(path); err == nil {
			l.imported = path
		}
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("logmatch %s: %w; counting starts at the file's beginning", l.cfg.Name, err)
	}
	st, ok := parseLogState(b)
	if !ok {
		l.imported = ""
		return fmt.Errorf("logmatch %s: %s is damaged (%q); counting starts at the file's beginning", l.cfg.Name, path, b)
	}
	l.global = st.global
	if st.file == l.file {
		if fi, err := os.Stat(l.file); err == nil && st.pos <= fi.Size() {
			l.pos, l.current = st.pos, st.current
		}
	}
	return nil
}

// logState is what a state file keeps: "POS CURRENT GLOBAL FILE\n", the
// line Net-SNMP writes to its snmpd_logmatch_NAME.pos.
type logState struct {
	pos             int64
	current, global uint64
	file            string
}

func (s logState) String() string {
	return fmt.Sprintf("%d %d %d %s\n", s.pos, s.current, s.global, s.file)
}

// parseLogState reads a state file; ok is false for a damaged one.
func parseLogState(b []byte) (s logState, ok bool) {
	f := strings.SplitN(strings.TrimSuffix(string(b), "\n"), " ", 4)
	if len(f) < 4 || f[3] == "" {
		return s, false
	}
	var err [3]error
	s.pos, err[0] = strconv.ParseInt(f[0], 10, 64)
	s.current, err[1] = strconv.ParseUint(f[1], 10, 64)
	s.global, err[2] = strconv.ParseUint(f[2], 10, 64)
	if err[0] != nil || err[1] != nil || err[2] != nil || s.pos < 0 {
		return logState{}, false
	}
	s.file = f[3]
	return s, true
}

// takeSinceRead returns logMatchCounter, which restarts at each read.
func (l *logMatch) takeSinceRead() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.sinceRead
	l.sinceRead = 0
	return n
}

// logRow is one row as a request sees it.
type logRow struct {
	index           snmp.OID
	l               *logMatch
	file            string
	global, current uint64
}

// logRows reads every log, once per request (the table's rows are taken
// once per request; Net-SNMP reads a row's file at each of its objects).
func (m *MIB) logRows(r *mib.Request) logRows {
	now := time.Now()
	if r != nil && !r.Now.IsZero() {
		now = r.Now
	}
	rows := make(logRows, len(m.logs))
	for i, l := range m.logs {
		m.updateLog(l, now)
		l.mu.Lock()
		rows[i] = logRow{index: snmp.OID{uint32(i + 1)}, l: l, file: l.file, global: l.global, current: l.current}
		l.mu.Unlock()
	}
	return rows
}

// updateLog reads a log, logging what went wrong with its state file
// (once until it changes). It reports whether the log holds more than the
// reading took in.
func (m *MIB) updateLog(l *logMatch, now time.Time) (behind bool) {
	err := l.update(now)
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != l.lastErr && msg != "" {
		m.log().Warn(msg)
	}
	l.lastErr = msg
	if l.imported != "" {
		m.log().Info("logmatch: position and counts taken over from snmpd", "name", l.cfg.Name, "file", l.imported)
		l.imported = ""
	}
	return l.behind
}

// StopLogs ends the logs' readings, periodic and at requests, for good:
// the rows keep their last counts, and the state files are left to an
// instance built after (a reload). Close calls it.
func (m *MIB) StopLogs() {
	m.stopOnce.Do(func() {
		close(m.stopLogs)
		m.logStop.Wait()
		for _, l := range m.logs {
			l.mu.Lock()
			l.stopped = true
			l.mu.Unlock()
		}
	})
}

// startLogs starts the periodic readings.
func (m *MIB) startLogs() {
	for _, l := range m.logs {
		if l.re == nil || l.cfg.Cycle <= 0 {
			continue
		}
		period := time.Duration(l.cfg.Cycle) * time.Second
		m.logStop.Add(1)
		go func() {
			defer m.logStop.Done()
			t := time.NewTicker(period)
			defer t.Stop()
			for {
				select {
				case <-m.stopLogs:
					return
				case now := <-t.C:
					// A log that grew by more than a reading takes
					// in is read on here, off the requests' path.
					for i := 0; i < 64 && m.updateLog(l, now); i++ {
					}
				}
			}
		}()
	}
}

type logRows []logRow

func (t logRows) Len() int             { return len(t) }
func (t logRows) Index(i int) snmp.OID { return t[i].index }
func (t logRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	r := &t[i]
	c := &r.l.cfg
	switch col {
	case 1:
		return snmp.IntegerValue(int64(r.index[0])), true
	case 2:
		return snmp.StringValue(c.Name), true
	case 3:
		return snmp.StringValue(r.file), true
	case 4:
		return snmp.StringValue(c.Regexp), true
	case 5:
		return snmp.Counter32Value(uint32(r.global)), true
	case 6:
		return snmp.IntegerValue(int64(min(r.global, 1<<31-1))), true
	case 7:
		return snmp.Counter32Value(uint32(r.current)), true
	case 8:
		return snmp.IntegerValue(int64(min(r.current, 1<<31-1))), true
	case 9:
		return snmp.Counter32Value(uint32(r.l.takeSinceRead())), true
	case 10:
		return snmp.IntegerValue(int64(min(r.l.takeSinceRead(), 1<<31-1))), true
	case 11:
		return snmp.IntegerValue(int64(c.Cycle)), true
	case 100:
		return snmp.IntegerValue(boolInt(r.l.errFlag())), true
	case 101:
		return snmp.StringValue(r.l.reErr), true
	}
	return snmp.Value{}, false
}
