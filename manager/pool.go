package manager

import (
	"context"
	"fmt"
	"sync"

	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
)

// Pool shares sessions: one socket per target and configuration in the
// process. Sessions that failed (a closed TCP connection) are replaced on
// the next Get.
type Pool struct {
	mu       sync.Mutex
	sessions map[string]*Session
}

// DefaultPool is the process-wide pool.
var DefaultPool = &Pool{}

func poolKey(t Target, c *Config) string {
	return fmt.Sprintf("%s|%v|%q|%q|%d|%d|%q|%d|%q|%x|%x|%q|%v|%d|%d|%q|%v|%v|%x|%x|%x|%x", t.String(), c.Version, c.Community, c.User, c.Level,
		c.AuthProtocol, c.AuthPassword, c.PrivProtocol, c.PrivPassword, c.ContextEngineID, c.SecurityEngineID, c.ContextName,
		c.Timeout, c.Retries, c.Retransmit, c.LocalAddr, c.ShortIDs, c.UnconnectedUDP,
		c.AuthKey, c.PrivKey, c.AuthLocalKey, c.PrivLocalKey)
}

// Get returns the pool's session for target and cfg, dialling it if needed.
// The session stays owned by the pool: do not Close it.
func (p *Pool) Get(ctx context.Context, target string, cfg Config) (*Session, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	cfg.normalize()
	key := poolKey(t, &cfg)
	return p.session(key, func() (*Session, error) {
		return DialTarget(ctx, t, cfg)
	})
}

// session returns the live session under key, or dials and keeps a new
// one. Dialling holds the pool's lock, so concurrent callers for one
// target share a single dial.
func (p *Pool) session(key string, dial func() (*Session, error)) (*Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.sessions[key]; s != nil {
		if s.Err() == nil {
			return s, nil
		}
		delete(p.sessions, key)
	}
	s, err := dial()
	if err != nil {
		return nil, err
	}
	if p.sessions == nil {
		p.sessions = map[string]*Session{}
	}
	p.sessions[key] = s
	return s, nil
}

// Close closes every session of the pool and returns when the state
// they keep in files (SSH resumption) is written.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, s := range p.sessions {
		s.Close()
		delete(p.sessions, k)
	}
	// The SSH resumption state its connections stored is written in the
	// background; a process that exits next keeps it.
	sshtm.WaitStateWrites()
}
