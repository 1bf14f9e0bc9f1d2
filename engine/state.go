// Package engine holds the SNMP engine's identity and persistent state
// (RFC 3411 §3.1.1): snmpEngineID, generated once and kept; snmpEngineBoots,
// incremented at every start and never going backwards; snmpEngineTime.
//
// The state directory belongs to one engine: Open takes an exclusive lock
// on it (released by the kernel when the process ends, even by kill -9),
// so that two agents never share one engine ID. Sessions of an engine that
// runs as one short process per session (tsnmpd --stdio under sshd) share
// the directory instead (Options.Shared).
package engine

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// EnterpriseNumber is the IANA private enterprise number in generated
// engine IDs. tsnmp uses Net-SNMP's (8072) so that tools showing engine IDs
// decode them as they do for Net-SNMP agents.
const EnterpriseNumber = 8072

// MaxBoots is the largest snmpEngineBoots value (RFC 3414 §2.2.2).
const MaxBoots = 2147483647

// StateFile holds the engine ID and boot counter.
const StateFile = "engine.conf"

// LockFile is the lock on the state directory; it holds the PID of the
// agent that has the directory to itself.
const LockFile = "tsnmpd.lock"

const stateFile = StateFile

// State is the engine's identity and boot counter, persisted in a state
// directory.
type State struct {
	Dir      string
	EngineID []byte
	Boots    int32
	// Regenerated tells that the engine ID was made anew because the
	// stored state had lost it (Options.Regenerate).
	Regenerated bool
	start       time.Time

	mu   sync.Mutex // serialises writes to Dir
	lock *os.File   // holds the flock on LockFile
}

// Options tune OpenOptions.
type Options struct {
	// EngineID, when not nil, overrides the stored engine ID; when it
	// differs, the boot counter restarts at 1 (RFC 3414 §2.2.2).
	EngineID []byte
	// Regenerate lets a state file that has lost its engine ID or its
	// boot counter be replaced by a new engine ID (logged as an error):
	// the only safe way on without the old values, since boots must never
	// go back under one engine ID.
	Regenerate bool
	// Shared opens the state for one session of an engine whose sessions
	// are separate processes (tsnmpd --stdio): the lock is shared with the
	// other sessions (and refused while an agent holds the directory), and
	// a session is a new boot only when the host has booted since the
	// engine's last boot. Engine time then counts from that boot, on the
	// host's boot clock, for every session alike.
	Shared bool
	// Import, when not nil, is the engine ID and boot counter another
	// agent ran with (snmpd's oldEngineID and engineBoots), taken over
	// so that managers' localized keys and their view of
	// snmpEngineBoots stay valid. Without a configured EngineID, the
	// imported ID is used; under that ID the boot counter continues from
	// the larger of the stored and the imported counts, so it never goes
	// back whichever agent ran last.
	Import *Imported
	// Log receives the warnings about files removed or refused; nil is
	// slog.Default().
	Log *slog.Logger
}

// Imported is an engine identity taken over from another agent.
type Imported struct {
	EngineID []byte
	Boots    int32
	// From names where it came from, for messages.
	From string
}

// LockedError is returned when another process holds the state directory.
type LockedError struct {
	Dir string
	PID int // 0 when unknown
}

func (e *LockedError) Error() string {
	who := "another tsnmpd"
	if e.PID > 0 {
		who = fmt.Sprintf("another tsnmpd (PID %d)", e.PID)
	}
	return fmt.Sprintf("engine: state directory %s is in use by %s, which holds %s; stop it, or give this agent a state directory of its own (--state-dir): two agents must not share one engine ID",
		e.Dir, who, filepath.Join(e.Dir, LockFile))
}

// NewEngineID returns an RFC 3411 engine ID of format 5 (administratively
// assigned octets) with 8 random octets, the form Net-SNMP generates.
func NewEngineID() []byte {
	id := enterprisePrefix(5)
	var r [8]byte
	rand.Read(r[:])
	return append(id, r[:]...)
}

func enterprisePrefix(format byte) []byte {
	const n = EnterpriseNumber
	return []byte{0x80 | byte(n>>24), byte(n >> 16), byte(n >> 8), byte(n & 0xff), format}
}

// Open loads the state in dir, creating the directory and a new engine ID
// when needed, and records this start: the incremented boot counter is on
// disk before Open returns, so a crash at any moment never lets
// snmpEngineBoots go backwards. A non-nil engineID overrides the stored one;
// when it differs, the boot counter restarts at 1 (RFC 3414 §2.2.2).
// The directory stays locked until Close.
func Open(dir string, engineID []byte) (*State, error) {
	return OpenOptions(dir, Options{EngineID: engineID})
}

// OpenOptions is Open with options.
func OpenOptions(dir string, o Options) (*State, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("engine: state directory: %w", err)
	}
	s := &State{Dir: dir, start: time.Now()}
	alone, err := s.takeLock(o.Shared)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if alone {
		removeTemporaries(dir, o.Log)
	}
	if o.Shared {
		// Sessions starting together agree on one boot.
		unlock, err := lockDir(dir)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	if err := s.boot(o); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// boot loads the state, decides this start's boots and writes it.
func (s *State) boot(o Options) error {
	path := filepath.Join(s.Dir, stateFile)
	st, err := s.load()
	if err != nil {
		return err
	}
	id, boots := st.id, st.boots
	var lost string
	switch {
	case !st.exists:
	case st.id == nil:
		lost = "holds no engineID"
	case !st.hasBoots:
		lost = "holds no engineBoots"
	}
	switch {
	case lost != "" && o.Regenerate && o.EngineID != nil:
		return fmt.Errorf("engine: %s %s; a configured engine ID cannot be regenerated: add the line \"engineBoots N\" with N above any value managers have seen from this engine", path, lost)
	case lost != "" && o.Regenerate:
		id, boots = nil, 0
		s.Regenerated = true
		o.Log.Error("engine state lost: starting a new engine ID as --regenerate-engine-id asks; keys localized to the old engine ID (managers', usm-users.conf) no longer match",
			"file", path, "problem", lost)
	case lost == "holds no engineID":
		return fmt.Errorf("engine: %s exists but %s: the engine's identity is lost, and with a new one every manager's localized keys and the keys in usm-users.conf would stop matching. Restore the file from a backup, or start once with --regenerate-engine-id to make a new engine ID", path, lost)
	case lost != "":
		return fmt.Errorf("engine: %s %s: restarting the counter under engine ID %x would let old messages be replayed (RFC 3414 §2.2.3). Add the line \"engineBoots N\" with N above any value managers have seen from this engine (snmpEngineBoots), or start once with --regenerate-engine-id to make a new engine ID", path, lost, st.id)
	}
	imported := o.Import != nil && o.Import.EngineID != nil && (o.EngineID == nil || bytes.Equal(o.EngineID, o.Import.EngineID))
	if imported && o.EngineID == nil {
		o.EngineID = o.Import.EngineID
		if id != nil && !bytes.Equal(id, o.EngineID) {
			o.Log.Warn("taking over the engine ID of the agent this one replaces; keys localized to the stored one no longer match",
				"file", path, "stored", hex.EncodeToString(id), "engineID", hex.EncodeToString(o.EngineID), "from", o.Import.From)
			id = nil
		}
	}
	switch {
	case o.EngineID != nil && !bytes.Equal(o.EngineID, id):
		if id != nil {
			o.Log.Warn("configured engine ID differs from the stored one; engineBoots restarts at 1", "file", path, "stored", hex.EncodeToString(id), "configured", hex.EncodeToString(o.EngineID))
		}
		id, boots = o.EngineID, 0
		st.bootID = ""
	case id == nil:
		id, boots = NewEngineID(), 0
		st.bootID = ""
		if !st.exists && s.holdsState() {
			o.Log.Warn("no engine state in a state directory that holds other state: starting a new engine ID; keys localized to an earlier one no longer match",
				"file", path, "engineID", hex.EncodeToString(id))
		}
	}
	if imported && bytes.Equal(id, o.Import.EngineID) && boots < o.Import.Boots {
		boots = o.Import.Boots
	}
	data := fmt.Sprintf("# tsnmp engine state; written at every start\nengineID %x\nengineBoots %%d\n", id)
	if o.Shared {
		bootID, now, err := hostBoot()
		if err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		if st.bootID == bootID && st.bootID != "" && st.engineStart <= now && boots > 0 {
			// The engine has run since the host booted: this session
			// is part of that run.
			s.EngineID, s.Boots = id, boots
			s.start = time.Now().Add(-(now - st.engineStart))
			return nil
		}
		data += fmt.Sprintf("# the engine's last boot, for sessions of tsnmpd --stdio: host boot ID, time on the host's boot clock (ns)\nhostBootID %s\nengineStart %d\n", bootID, now)
		s.start = time.Now()
	}
	if boots < MaxBoots {
		boots++
	}
	s.EngineID, s.Boots = id, boots
	return s.WriteFile(stateFile, fmt.Appendf(nil, data, boots), 0o600)
}

// holdsState tells whether the directory holds files besides the lock
// and temporary files.
func (s *State) holdsState() bool {
	ents, _ := os.ReadDir(s.Dir)
	for _, e := range ents {
		if e.Type().IsRegular() && e.Name() != LockFile && !strings.HasPrefix(e.Name(), ".") {
			return true
		}
	}
	return false
}

// stored is what engine.conf holds.
type stored struct {
	exists      bool
	id          []byte
	boots       int32
	hasBoots    bool
	bootID      string
	engineStart time.Duration
}

func (s *State) load() (stored, error) {
	var st stored
	path := filepath.Join(s.Dir, stateFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("engine: %w", err)
	}
	st.exists = true
	bad := func(n int, what string) error {
		return fmt.Errorf("engine: %s:%d: %s; the file is damaged: restore it from a backup, or start once with --regenerate-engine-id to make a new engine ID", path, n, what)
	}
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 2 {
			return st, bad(n+1, "malformed line")
		}
		switch f[0] {
		case "engineID":
			if st.id, err = hex.DecodeString(f[1]); err != nil || len(st.id) < 5 || len(st.id) > 32 {
				return st, bad(n+1, "bad engineID")
			}
		case "engineBoots":
			b, err := strconv.ParseInt(f[1], 10, 32)
			if err != nil || b < 0 {
				return st, bad(n+1, "bad engineBoots")
			}
			st.boots, st.hasBoots = int32(b), true
		case "hostBootID":
			st.bootID = f[1]
		case "engineStart":
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || v < 0 {
				st.bootID = "" // no usable start: the next session boots
				continue
			}
			st.engineStart = time.Duration(v)
		}
	}
	return st, nil
}

// hostBoot returns the host's boot ID and the time on its boot clock
// (CLOCK_BOOTTIME: monotonic, counting suspend).
func hostBoot() (string, time.Duration, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", 0, fmt.Errorf("host boot ID: %w", err)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return "", 0, fmt.Errorf("boot clock: %w", err)
	}
	return strings.TrimSpace(string(b)), time.Duration(ts.Nano()), nil
}

// takeLock locks the state directory: exclusively, or shared with the
// other sessions of a shared engine. alone tells that no other process
// uses the directory.
func (s *State) takeLock(shared bool) (alone bool, err error) {
	path := filepath.Join(s.Dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("engine: lock file: %w", err)
	}
	flock := func(how int) error {
		for {
			err := unix.Flock(int(f.Fd()), how)
			if err != unix.EINTR {
				return err
			}
		}
	}
	locked := func() error {
		f.Close()
		return &LockedError{Dir: s.Dir, PID: lockHolder(path)}
	}
	if err := flock(unix.LOCK_EX | unix.LOCK_NB); err == nil {
		alone = true
		if shared {
			if err := flock(unix.LOCK_SH | unix.LOCK_NB); err != nil {
				return false, locked()
			}
		} else {
			f.Truncate(0)
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
	} else if !errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return false, fmt.Errorf("engine: lock %s: %w", path, err)
	} else if !shared || flock(unix.LOCK_SH|unix.LOCK_NB) != nil {
		return false, locked()
	}
	s.lock = f
	return alone, nil
}

// lockHolder returns the PID of the process holding an exclusive lock on
// path, from /proc/locks, else from the PID the holder wrote in it.
func lockHolder(path string) int {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err == nil {
		if data, err := os.ReadFile("/proc/locks"); err == nil {
			dev := uint64(st.Dev)
			want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), st.Ino)
			for _, line := range strings.Split(string(data), "\n") {
				f := strings.Fields(line)
				// 1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF
				if len(f) >= 6 && f[1] == "FLOCK" && f[3] == "WRITE" && f[5] == want {
					if pid, err := strconv.Atoi(f[4]); err == nil {
						return pid
					}
				}
			}
		}
	}
	data, _ := os.ReadFile(path)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// lockDir holds an exclusive lock on the directory itself until unlock.
func lockDir(dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	for {
		err = unix.Flock(int(d.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("engine: lock %s: %w", dir, err)
	}
	return func() { d.Close() }, nil
}

// removeTemporaries removes the temporary files of writes a crash
// interrupted (".NAME.tmp123", ".NAME.123"), which no one else can be
// writing while this process has the directory to itself.
func removeTemporaries(dir string, log *slog.Logger) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !isTemporary(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil {
			log.Warn("cannot remove a temporary file left by an interrupted write", "file", p, "err", err)
			continue
		}
		log.Warn("removed a temporary file left by an interrupted write (the state file it was replacing is intact)", "file", p)
	}
}

// isTemporary tells whether name is a temporary file of WriteFileAtomic
// (".NAME.tmpDIGITS") or of the SSH key writers (".NAME.DIGITS").
func isTemporary(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 1 {
		return false
	}
	suffix := strings.TrimPrefix(name[i+1:], "tmp")
	if suffix == "" {
		return false
	}
	for _, c := range suffix {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Close releases the state directory's lock.
func (s *State) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// Time returns snmpEngineTime: seconds since this start.
func (s *State) Time() int32 {
	t := time.Since(s.start) / time.Second
	if t > MaxBoots {
		t = MaxBoots
	}
	return int32(t)
}

// Uptime returns the time since this start in hundredths of a second.
func (s *State) Uptime() uint32 { return uint32(time.Since(s.start) / (10 * time.Millisecond)) }

// Start returns the time of this start.
func (s *State) Start() time.Time { return s.start }

// WriteFile replaces name in the state directory atomically: it writes a
// temporary file, syncs it, renames it over name and syncs the directory,
// so readers and crashes see the old or the new content, never a mix.
func (s *State) WriteFile(name string, data []byte, perm os.FileMode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return WriteFileAtomic(filepath.Join(s.Dir, name), data, perm)
}

// ReadFile reads name from the state directory.
func (s *State) ReadFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.Dir, name))
}

// WriteFileAtomic writes path through a synced temporary file and a rename.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("engine: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("engine: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("engine: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("engine: rename %s: %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
