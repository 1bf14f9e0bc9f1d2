package dtls

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"sync"
	"time"
)

// A resumption ticket is what the agent gives a manager after a full,
// certificate-authenticated DTLS handshake, for the manager to resume with
// an ECDHE-PSK handshake later (see docs/dtls-resumption.md). It is 16
// random octets naming state the agent keeps in memory: the PSK (an RFC
// 5705 exporter value of the full handshake, so only its two ends know
// it), the certificates the agent verified (so that a resumed session is
// named from the same certificate, under the rules in force when it
// resumes), the ticket's lifetime, and the ticket key that was newest when
// it was issued: the state is refused and dropped once that key has
// rotated out.

const (
	pskLen = 32
	// ticketLen is the length of the tickets the agent issues.
	ticketLen = 16
	// maxTicket bounds the tickets a manager keeps in its cache files.
	maxTicket = 8192
	// maxChain bounds the certificates a state keeps.
	maxChain = 4
	// defaultMaxTickets bounds the states an agent keeps; beyond it those
	// of rotated-out keys go first, then arbitrary ones (their managers
	// fall back to a full handshake).
	defaultMaxTickets = 4096
)

// ticketState is what a ticket names.
type ticketState struct {
	Issued, Expires time.Time
	PSK             []byte
	Chain           [][]byte
	key             [8]byte // the ticket key that was newest at issue
}

var (
	errTicketFormat  = errors.New("dtls: malformed resumption ticket")
	errTicketKey     = errors.New("dtls: resumption ticket unknown or its key rotated out")
	errTicketExpired = errors.New("dtls: resumption ticket expired")
)

// ticketStore keeps the states the agent's tickets name.
type ticketStore struct {
	mu   sync.Mutex
	keys [][8]byte // names of the current ticket keys, newest first
	m    map[[ticketLen]byte]*ticketState
	max  int
}

func keyName(k [32]byte) [8]byte {
	h := sha256.Sum256(append([]byte("tsnmp dtls ticket key name"), k[:]...))
	var n [8]byte
	copy(n[:], h[:8])
	return n
}

// setKeys installs the ticket keys, newest first (the TLS listeners' keys,
// so that one rotation governs both transports), and drops the states of
// keys no longer among them.
func (s *ticketStore) setKeys(keys [][32]byte) {
	names := make([][8]byte, len(keys))
	for i, k := range keys {
		names[i] = keyName(k)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = names
	for id, t := range s.m {
		if !s.current(t.key) {
			delete(s.m, id)
		}
	}
}

func (s *ticketStore) current(k [8]byte) bool {
	for _, n := range s.keys {
		if n == k {
			return true
		}
	}
	return false
}

// put stores a state and returns its ticket.
func (s *ticketStore) put(t *ticketState) ([]byte, error) {
	if len(t.PSK) != pskLen || len(t.Chain) == 0 || len(t.Chain) > maxChain {
		return nil, errTicketFormat
	}
	var id [ticketLen]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.keys) == 0 {
		return nil, errTicketKey
	}
	if s.m == nil {
		s.m = map[[ticketLen]byte]*ticketState{}
	}
	max := s.max
	if max <= 0 {
		max = defaultMaxTickets
	}
	if len(s.m) >= max {
		for k, v := range s.m {
			if v.key != s.keys[0] {
				delete(s.m, k)
				break
			}
		}
		if len(s.m) >= max {
			for k := range s.m {
				delete(s.m, k)
				break
			}
		}
	}
	st := *t
	st.key = s.keys[0]
	s.m[id] = &st
	return id[:], nil
}

// get returns the state a ticket (a PSK identity from the network) names,
// if it is known, its key current and its lifetime not over.
func (s *ticketStore) get(b []byte, now time.Time) (*ticketState, error) {
	if len(b) != ticketLen {
		return nil, errTicketFormat
	}
	var id [ticketLen]byte
	copy(id[:], b)
	s.mu.Lock()
	t, ok := s.m[id]
	if ok && !s.current(t.key) {
		delete(s.m, id)
		ok = false
	}
	s.mu.Unlock()
	if !ok {
		return nil, errTicketKey
	}
	if now.After(t.Expires) || now.Before(t.Issued.Add(-time.Minute)) {
		return nil, errTicketExpired
	}
	return t, nil
}

// len returns the number of states kept.
func (s *ticketStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
