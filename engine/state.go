// Package engine holds the SNMP engine's identity and persistent state
// (RFC 3411 §3.1.1): snmpEngineID, generated once and kept; snmpEngineBoots,
// incremented at every start and never going backwards; snmpEngineTime.
package engine

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// EnterpriseNumber is the IANA private enterprise number in generated
// engine IDs. tsnmp uses Net-SNMP's (8072) so that tools showing engine IDs
// decode them as they do for Net-SNMP agents.
const EnterpriseNumber = 8072

// MaxBoots is the largest snmpEngineBoots value (RFC 3414 §2.2.2).
const MaxBoots = 2147483647

// stateFile holds the engine ID and boot counter.
const stateFile = "engine.conf"

// State is the engine's identity and boot counter, persisted in a state
// directory.
type State struct {
	Dir      string
	EngineID []byte
	Boots    int32
	start    time.Time

	mu sync.Mutex // serialises writes to Dir
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
func Open(dir string, engineID []byte) (*State, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("engine: state directory: %w", err)
	}
	s := &State{Dir: dir, start: time.Now()}
	id, boots, err := s.load()
	if err != nil {
		return nil, err
	}
	switch {
	case engineID != nil && !bytes.Equal(engineID, id):
		id, boots = engineID, 0
	case id == nil:
		id, boots = NewEngineID(), 0
	}
	if boots < MaxBoots {
		boots++
	}
	s.EngineID, s.Boots = id, boots
	data := fmt.Sprintf("# tsnmp engine state; written at every start\nengineID %x\nengineBoots %d\n", id, boots)
	if err := s.WriteFile(stateFile, []byte(data), 0o600); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *State) load() ([]byte, int32, error) {
	data, err := os.ReadFile(filepath.Join(s.Dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("engine: %w", err)
	}
	var id []byte
	var boots int32
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 2 {
			return nil, 0, fmt.Errorf("engine: %s:%d: malformed line", stateFile, n+1)
		}
		switch f[0] {
		case "engineID":
			if id, err = hex.DecodeString(f[1]); err != nil || len(id) < 5 {
				return nil, 0, fmt.Errorf("engine: %s:%d: bad engineID", stateFile, n+1)
			}
		case "engineBoots":
			b, err := strconv.ParseInt(f[1], 10, 32)
			if err != nil || b < 0 {
				return nil, 0, fmt.Errorf("engine: %s:%d: bad engineBoots", stateFile, n+1)
			}
			boots = int32(b)
		}
	}
	return id, boots, nil
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
