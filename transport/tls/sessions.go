package tls

import (
	"crypto/rand"
	"crypto/sha256"
	gotls "crypto/tls"
	"sync"
)

// A sessionStore keeps the agent's resumption state and hands clients a
// short ticket that names it: 16 random octets. crypto/tls's own tickets
// carry the whole session state, the client's certificate chain
// included, sealed with the ticket key; a one-shot manager then sends
// those certificates twice more on every resumed session (its ticket, and
// the new ticket the agent sends back), which made a resumed get larger
// than a full one. Here the state stays at the agent.
//
// Security: the ticket is a high-entropy identifier (128 bits), not
// derived from the state; knowing one does not let anyone resume, since
// resumption also proves possession of the PSK that only the two ends of
// the original handshake hold. A state is bound to the ticket key that
// was newest when it was stored and is refused once that key has rotated
// out (TicketKeys), so resumption ends after one to two rotation periods,
// as with sealed tickets; states whose key is gone are dropped. The states
// live in memory only: a restarted agent resumes nothing (its ticket keys
// are not persisted either). A resumed session is verified and mapped
// again from the certificates its state holds (VerifyConnection), under
// the rules in force.
//
// Memory: the part of a state that holds the client's certificates is
// kept once for all the states that carry the same octets (interned by
// their SHA-256, counted), as a manager holds one certificate for all its
// sessions; a state then costs about 150 octets and its ticket's entry,
// instead of its chain.
type sessionStore struct {
	mu      sync.Mutex
	entries map[[ticketLen]byte]storedSession
	certs   map[[32]byte]*sharedCerts
	max     int
}

// sharedCerts is the certificate part of states, with the number of
// entries that use it.
type sharedCerts struct {
	b    []byte
	sum  [32]byte
	refs int
}

const ticketLen = 16

// defaultMaxSessions bounds the states a listener keeps; beyond it an
// arbitrary one of the oldest key generation is dropped (its client falls
// back to a full handshake).
const defaultMaxSessions = 4096

type storedSession struct {
	key [8]byte // names the ticket key that was newest at issue
	// The state (gotls.SessionState.Bytes()) is state[:at], then
	// certs.b, then state[at:]; certs is nil when the state was kept
	// whole.
	state []byte
	at    int
	certs *sharedCerts
	// master is a TLS 1.2 session's master secret (also inside state),
	// which crypto/tls does not report for a resumed session: the
	// agent's record layer takes its keys from it (handshake.go).
	master []byte
}

func newSessionStore(max int) *sessionStore {
	if max <= 0 {
		max = defaultMaxSessions
	}
	return &sessionStore{entries: map[[ticketLen]byte]storedSession{}, certs: map[[32]byte]*sharedCerts{}, max: max}
}

func keyName(k [32]byte) [8]byte {
	h := sha256.Sum256(append([]byte("tsnmp tls session key name"), k[:]...))
	var n [8]byte
	copy(n[:], h[:8])
	return n
}

func keyNames(keys [][32]byte) map[[8]byte]bool {
	m := make(map[[8]byte]bool, len(keys))
	for _, k := range keys {
		m[keyName(k)] = true
	}
	return m
}

// wrap stores a session state and returns its ticket (crypto/tls's
// Config.WrapSession).
func (s *sessionStore) wrap(ss *gotls.SessionState, tickets *TicketKeys, master []byte) ([]byte, error) {
	b, err := ss.Bytes()
	if err != nil {
		return nil, err
	}
	keys := tickets.Keys()
	var id [ticketLen]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	e := storedSession{key: keyName(keys[0]), state: b, master: master}
	from, to, ok := certificatePart(b)
	var sum [32]byte
	if ok {
		sum = sha256.Sum256(b[from:to])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.entries) >= s.max {
		s.evict(keyNames(keys))
	}
	if ok {
		sc := s.certs[sum]
		if sc == nil {
			sc = &sharedCerts{b: append([]byte(nil), b[from:to]...), sum: sum}
			s.certs[sum] = sc
		}
		sc.refs++
		e.certs, e.at = sc, from
		e.state = append(append(make([]byte, 0, len(b)-(to-from)), b[:from]...), b[to:]...)
	}
	s.entries[id] = e
	return id[:], nil
}

// certificatePart returns where the peer's certificates are in a
// serialized session state (crypto/tls's format: version, type, cipher
// suite, creation time, secret<1..255>, extra<0..2^24-1>, two flags,
// then the certificates<0..2^24-1>), if it can tell. Splitting a state
// there and joining it again gives back the same octets whatever the
// format, so a wrong answer would cost memory, not correctness.
func certificatePart(b []byte) (from, to int, ok bool) {
	o := 2 + 1 + 2 + 8
	if len(b) < o+1 {
		return 0, 0, false
	}
	o += 1 + int(b[o])
	if len(b) < o+3 {
		return 0, 0, false
	}
	o += 3 + (int(b[o])<<16 | int(b[o+1])<<8 | int(b[o+2]))
	o += 2
	if len(b) < o+3 {
		return 0, 0, false
	}
	n := int(b[o])<<16 | int(b[o+1])<<8 | int(b[o+2])
	if len(b) < o+3+n {
		return 0, 0, false
	}
	return o, o + 3 + n, true
}

// bytes returns the entry's whole state.
func (e *storedSession) bytes() []byte {
	if e.certs == nil {
		return e.state
	}
	b := make([]byte, 0, len(e.state)+len(e.certs.b))
	return append(append(append(b, e.state[:e.at]...), e.certs.b...), e.state[e.at:]...)
}

// drop forgets an entry.
func (s *sessionStore) drop(id [ticketLen]byte) {
	e, ok := s.entries[id]
	if !ok {
		return
	}
	delete(s.entries, id)
	if e.certs != nil {
		if e.certs.refs--; e.certs.refs == 0 {
			delete(s.certs, e.certs.sum)
		}
	}
}

// evict drops the states whose key has rotated out, and if none has, an
// arbitrary one of those issued under an older key, else any one.
func (s *sessionStore) evict(current map[[8]byte]bool) {
	n := len(s.entries)
	for id, e := range s.entries {
		if !current[e.key] {
			s.drop(id)
		}
	}
	if len(s.entries) < n {
		return
	}
	for id := range s.entries {
		s.drop(id)
		return
	}
}

// unwrap returns the state a ticket names, or nil (a full handshake)
// when it is unknown or its key has rotated out (Config.UnwrapSession).
func (s *sessionStore) unwrap(ticket []byte, tickets *TicketKeys, hs *hsConn) (*gotls.SessionState, error) {
	if len(ticket) != ticketLen {
		return nil, nil
	}
	var id [ticketLen]byte
	copy(id[:], ticket)
	current := keyNames(tickets.Keys())
	s.mu.Lock()
	e, ok := s.entries[id]
	if ok && !current[e.key] {
		s.drop(id)
		ok = false
	}
	var state []byte
	if ok {
		state = e.bytes()
	}
	s.mu.Unlock()
	if !ok {
		return nil, nil
	}
	ss, err := gotls.ParseSessionState(state)
	if err != nil {
		return nil, nil
	}
	if hs != nil && e.master != nil {
		hs.resumedMaster = append([]byte(nil), e.master...)
	}
	return ss, nil
}

// len returns the number of states kept.
func (s *sessionStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// install makes cfg issue and accept the store's tickets; hs (nil in
// https) learns a resumed TLS 1.2 session's master secret.
func (s *sessionStore) install(cfg *gotls.Config, tickets *TicketKeys, hs *hsConn) {
	cfg.WrapSession = func(cs gotls.ConnectionState, ss *gotls.SessionState) ([]byte, error) {
		var master []byte
		if hs != nil && cs.Version < gotls.VersionTLS13 {
			if master = hs.master; master == nil {
				master = hs.resumedMaster
			}
			master = append([]byte(nil), master...)
		}
		return s.wrap(ss, tickets, master)
	}
	cfg.UnwrapSession = func(ticket []byte, _ gotls.ConnectionState) (*gotls.SessionState, error) {
		return s.unwrap(ticket, tickets, hs)
	}
}
