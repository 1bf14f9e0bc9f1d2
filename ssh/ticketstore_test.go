package ssh

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type memTicketKeys struct {
	mu    sync.Mutex
	keys  []TicketKey
	saves int
	fail  bool
}

func (m *memTicketKeys) LoadTicketKeys() ([]TicketKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return nil, errors.New("unreadable")
	}
	return append([]TicketKey(nil), m.keys...), nil
}

func (m *memTicketKeys) SaveTicketKeys(k []TicketKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys = append([]TicketKey(nil), k...)
	m.saves++
	return nil
}

// TestTicketKeyStore: a ticket issued by one server is accepted by a new
// server (a restarted agent) that loads the same ticket keys, and not by
// one without them.
func TestTicketKeyStore(t *testing.T) {
	store := &memTicketKeys{}
	withStore := func(c *ServerConfig) { c.Resumption = &ResumptionConfig{Tickets: true, TicketKeys: store} }
	a := startServer(t, withStore)
	cfg := clientConfig(t)
	cfg.Resumption = true
	c := dial(t, a.addr, cfg)
	state := c.ResumptionState()
	if state == nil || store.saves != 1 || len(store.keys) != 1 {
		t.Fatalf("state %v, %d saves of %d keys", state != nil, store.saves, len(store.keys))
	}
	c.Close()

	b := startServer(t, withStore) // the restart
	cfg.ResumptionState = state
	c = dial(t, b.addr, cfg)
	if !c.Resumed() {
		t.Fatal("ticket not accepted after a restart with the stored keys")
	}
	if store.saves != 1 {
		t.Fatalf("the loaded key was replaced (%d saves)", store.saves)
	}
	next := c.ResumptionState()
	c.Close()

	d := startServer(t, func(c *ServerConfig) { c.Resumption = &ResumptionConfig{Tickets: true} })
	cfg.ResumptionState = next
	if c = dial(t, d.addr, cfg); c.Resumed() {
		t.Fatal("ticket accepted without its key")
	}
	c.Close()

	// Stored keys older than two rotations are not loaded.
	old := &memTicketKeys{keys: []TicketKey{{Created: time.Now().Add(-3 * time.Hour)}}}
	r := newResumption(ResumptionConfig{Tickets: true, TicketKeys: old}, nil)
	if len(r.keys) != 0 {
		t.Fatal("expired ticket key loaded")
	}
	if r := newResumption(ResumptionConfig{Tickets: true, TicketKeys: &memTicketKeys{fail: true}}, nil); len(r.keys) != 0 {
		t.Fatal("keys from a failing store")
	}
}
