package tls

import (
	"crypto/sha256"
	gotls "crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
)

// FileSessionCache is a tls.ClientSessionCache kept in files, one per
// session key, so that separate manager processes resume each other's
// sessions. The files hold session secrets: the directory is created 0700
// and each file written 0600, atomically. A file that cannot be read or
// parsed is treated as absent, so a stale or damaged ticket only costs a
// full handshake.
type FileSessionCache struct {
	Dir string
	// Scope is mixed into the file names (the manager's own identity and
	// how it authenticates the agent), so that a session is resumed only
	// by the same configuration that established it.
	Scope string

	// keep is set when a session resumed with the stored ticket: the new
	// ticket a TLS 1.3 agent sends after every resumption is then not
	// written, as the stored one still works; writing a file on every
	// one-shot get would cost more than the resumption saves.
	keep atomic.Bool
}

// Resumed tells the cache that a session resumed from it (Dial calls it);
// the ticket that follows is not stored.
func (c *FileSessionCache) Resumed() { c.keep.Store(true) }

func (c *FileSessionCache) path(key string) string {
	h := sha256.Sum256([]byte(c.Scope + "\x00" + key))
	return filepath.Join(c.Dir, "tls-session-"+hex.EncodeToString(h[:12]))
}

// Get implements tls.ClientSessionCache.
func (c *FileSessionCache) Get(key string) (*gotls.ClientSessionState, bool) {
	c.keep.Store(false) // a new handshake starts
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, false
	}
	ticket, state, err := decodeSession(data)
	if err != nil {
		return nil, false
	}
	ss, err := gotls.ParseSessionState(state)
	if err != nil {
		return nil, false
	}
	cs, err := gotls.NewResumptionState(ticket, ss)
	if err != nil {
		return nil, false
	}
	return cs, true
}

// Put implements tls.ClientSessionCache; a nil cs removes the entry.
func (c *FileSessionCache) Put(key string, cs *gotls.ClientSessionState) {
	p := c.path(key)
	if cs == nil {
		os.Remove(p)
		return
	}
	if c.keep.Swap(false) {
		return
	}
	ticket, ss, err := cs.ResumptionState()
	if err != nil || ss == nil {
		return
	}
	state, err := ss.Bytes()
	if err != nil {
		return
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return
	}
	writeFile(p, encodeSession(ticket, state))
}

// The file: "TSNMPTS1", then the ticket and the session state, each
// preceded by its length as 4 octets.
const sessionMagic = "TSNMPTS1"

func encodeSession(ticket, state []byte) []byte {
	b := []byte(sessionMagic)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ticket)))
	b = append(b, ticket...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(state)))
	return append(b, state...)
}

var errBadSessionFile = errors.New("tls: bad session cache file")

func decodeSession(b []byte) (ticket, state []byte, err error) {
	if len(b) < len(sessionMagic) || string(b[:len(sessionMagic)]) != sessionMagic {
		return nil, nil, errBadSessionFile
	}
	b = b[len(sessionMagic):]
	read := func() ([]byte, bool) {
		if len(b) < 4 {
			return nil, false
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, false
		}
		v := b[:n]
		b = b[n:]
		return v, true
	}
	var ok1, ok2 bool
	ticket, ok1 = read()
	state, ok2 = read()
	if !ok1 || !ok2 || len(b) != 0 || len(ticket) == 0 {
		return nil, nil, errBadSessionFile
	}
	return ticket, state, nil
}

// writeFile replaces p atomically, mode 0600. It does not sync: a ticket
// lost in a crash only costs a full handshake.
func writeFile(p string, data []byte) {
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return
	}
	defer os.Remove(f.Name())
	if f.Chmod(0o600) != nil {
		f.Close()
		return
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr != nil || cerr != nil {
		return
	}
	_ = os.Rename(f.Name(), p)
}
