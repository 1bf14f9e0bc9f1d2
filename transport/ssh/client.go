package ssh

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	tssh "github.com/tsnmp/tsnmp/ssh"
)

// ClientConfig configures a manager's SSH connection to one agent.
type ClientConfig struct {
	// SSH is the SSH client configuration: user, keys, password, host key
	// policy, algorithms. Its Resumption fields are set by Dial.
	SSH tssh.ClientConfig
	// Cache keeps resumption state between processes; nil keeps none.
	Cache *StateCache
	// Scope names the cache entry (default: network, address and user).
	Scope string
	// NoResume turns session resumption off.
	NoResume bool
	// Stats counts opens and failures; nil counts nothing.
	Stats *Stats
}

// Client is an SSH connection to an agent, on which SNMP sessions (snmp
// channels) are opened.
type Client struct {
	*tssh.Client
	stats  *Stats
	closed atomic.Bool
}

// Dial connects and authenticates to addr. Unless NoResume, it offers
// session resumption, resumes with the state in Cache if there is some
// (falling back to a full key exchange if the agent refuses it), and
// stores the state the agent hands out for the next process.
func Dial(ctx context.Context, network, addr string, cfg *ClientConfig) (*Client, error) {
	c := cfg.SSH
	scope := cfg.Scope
	if scope == "" {
		scope = network + "|" + addr + "|" + c.User
	}
	if !cfg.NoResume {
		c.Resumption = true
		if cfg.Cache != nil && c.ResumptionState == nil {
			c.ResumptionState = cfg.Cache.Take(scope)
		}
	} else {
		c.Resumption, c.ResumptionState = false, nil
	}
	cfg.Stats.Inc(SessionOpens)
	cl, err := tssh.Dial(ctx, network, addr, &c)
	if err != nil {
		var ae *tssh.AuthError
		if errors.As(err, &ae) {
			cfg.Stats.Inc(SessionUserAuthFailures)
		} else {
			cfg.Stats.Inc(SessionOpenErrors)
		}
		return nil, err
	}
	if !cfg.NoResume && cfg.Cache != nil {
		if st := cl.ResumptionState(); st != nil {
			_ = cfg.Cache.Put(scope, st)
		}
	}
	return &Client{Client: cl, stats: cfg.Stats}, nil
}

// OpenSession opens an snmp channel: one SNMP transport session.
func (c *Client) OpenSession() (tssh.Channel, error) {
	ch, err := c.Subsystem(Subsystem)
	if err != nil {
		var oe *tssh.OpenChannelError
		if errors.As(err, &oe) || errors.Is(err, tssh.ErrClosed) {
			c.stats.Inc(SessionNoChannels)
		} else {
			c.stats.Inc(SessionNoSubsystems)
		}
		return nil, err
	}
	return ch.(tssh.Channel), nil
}

// Close closes the connection and counts the close once.
func (c *Client) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.stats.Inc(SessionCloses)
	}
	return c.Client.Close()
}

// StateCache keeps SSH resumption state in files, one per scope, mode
// 0600 in a directory of mode 0700, so that separate manager processes
// resume each other's sessions. State is single-use: Take removes it.
//
// The process also keeps what it stored in memory, and Take looks there
// first. With Background set (a long-lived manager: manager.Pool), Put
// and Take return at once and the file is written or removed by a
// goroutine, so that no file write delays a connection; a process that
// exits soon after (the CLI) leaves it unset, and Put writes the file
// before it returns.
type StateCache struct {
	Dir        string
	Background bool
}

// stateMem is the state this process stored and has not taken, by file
// path. fileMu orders the file writes and removals, so that a background
// write never brings back state that was taken or replaced meanwhile.
var (
	stateMem = struct {
		sync.Mutex
		m map[string][]byte
	}{m: map[string][]byte{}}
	fileMu sync.Mutex
	// background counts the file writes and removals under way.
	background pendingWrites
)

// pendingWrites counts goroutines and lets others wait until none runs.
// (A sync.WaitGroup may not be waited on while it is being raised from
// zero, which a long-lived manager does at any time.)
type pendingWrites struct {
	mu   sync.Mutex
	n    int
	idle sync.Cond
}

// Go runs f in a goroutine counted until it returns.
func (w *pendingWrites) Go(f func()) {
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
	go func() {
		defer w.done()
		f()
	}()
}

func (w *pendingWrites) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n--; w.n == 0 && w.idle.L != nil {
		w.idle.Broadcast()
	}
}

// Wait returns when no counted goroutine runs.
func (w *pendingWrites) Wait() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.idle.L == nil {
		w.idle.L = &w.mu
	}
	for w.n > 0 {
		w.idle.Wait()
	}
}

// WaitStateWrites returns when the StateCache files written or removed
// in the background (StateCache.Background) are on disk.
func WaitStateWrites() { background.Wait() }

// Path is the file holding the state of scope.
func (c *StateCache) Path(scope string) string {
	h := sha256.Sum256([]byte(scope))
	return filepath.Join(c.Dir, "ssh-resume-"+hex.EncodeToString(h[:12]))
}

// Take returns and removes the state of scope, or nil.
func (c *StateCache) Take(scope string) []byte {
	p := c.Path(scope)
	stateMem.Lock()
	st, ok := stateMem.m[p]
	delete(stateMem.m, p)
	stateMem.Unlock()
	if ok {
		// The file holds the same state (or will): remove it so that
		// no other process uses it again.
		if c.Background {
			background.Go(func() { c.remove(p) })
		} else {
			c.remove(p)
		}
		return st
	}
	fileMu.Lock()
	defer fileMu.Unlock()
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	// Remove first: if two processes race, at most one gets the state.
	if os.Remove(p) != nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<16))
	if err != nil {
		return nil
	}
	return b
}

func (c *StateCache) remove(p string) {
	fileMu.Lock()
	defer fileMu.Unlock()
	_ = os.Remove(p)
}

// Put stores state for scope, replacing what was there. With Background
// it returns at once and the file is written later, unless the state was
// taken or replaced by then.
func (c *StateCache) Put(scope string, state []byte) error {
	p := c.Path(scope)
	state = bytes.Clone(state)
	stateMem.Lock()
	stateMem.m[p] = state
	stateMem.Unlock()
	if !c.Background {
		fileMu.Lock()
		defer fileMu.Unlock()
		return c.write(p, state)
	}
	background.Go(func() {
		fileMu.Lock()
		defer fileMu.Unlock()
		stateMem.Lock()
		cur, ok := stateMem.m[p]
		stateMem.Unlock()
		if ok && bytes.Equal(cur, state) {
			_ = c.write(p, state)
		}
	})
	return nil
}

// write replaces the file p with state: a temporary file (which
// os.CreateTemp makes with mode 0600) renamed over it.
func (c *StateCache) write(p string, state []byte) error {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(c.Dir, ".ssh-resume-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(state)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("ssh: storing resumption state: %w", err)
	}
	return nil
}
