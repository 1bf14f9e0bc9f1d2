package ssh

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
type StateCache struct {
	Dir string
}

// Path is the file holding the state of scope.
func (c *StateCache) Path(scope string) string {
	h := sha256.Sum256([]byte(scope))
	return filepath.Join(c.Dir, "ssh-resume-"+hex.EncodeToString(h[:12]))
}

// Take returns and removes the state of scope, or nil.
func (c *StateCache) Take(scope string) []byte {
	p := c.Path(scope)
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

// Put stores state for scope, replacing what was there.
func (c *StateCache) Put(scope string, state []byte) error {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return err
	}
	p := c.Path(scope)
	tmp, err := os.CreateTemp(c.Dir, ".ssh-resume-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(state); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("ssh: storing resumption state: %w", err)
	}
	return nil
}
