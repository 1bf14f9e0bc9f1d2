package ssh

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"io"
	"slices"
	"sync"
	"time"
)

// Session resumption (docs/ssh-resumption.md). Two key exchange methods:
//
//   resume-server@tsnmp.dev: the server caches the resumption secret of
//   authenticated sessions, indexed by session identifier.
//   resume-ticket@tsnmp.dev: the server hands the client an encrypted,
//   authenticated ticket holding the secret; it keeps only ticket keys.
//
// Both share one wire exchange:
//
//   C: SSH_MSG_KEXSR_INIT  string blob, string nonce_c, string proof_c
//   S: SSH_MSG_KEXSR_OK    string nonce_s, string proof_s
//   or SSH_MSG_KEXSR_ERROR, after which both sides fall back to a full
//   key exchange negotiated from the same KEXINIT lists.

var errResumeFallback = errors.New("ssh: session resumption refused")

const (
	resumeSecretLen = 32
	resumeNonceLen  = 32
	ticketVersion   = 1
	stateMagic      = "tsnmp-ssh-resume-v1"
)

// deriveResumeSecret derives a session's resumption master secret from
// the key exchange output. It is independent of the traffic keys.
func deriveResumeSecret(k, h []byte) []byte {
	d := sha256.New()
	d.Write(k)
	d.Write(h)
	d.Write([]byte("tsnmp-resume master"))
	return d.Sum(nil)
}

func resumeMAC(secret []byte, label string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// clientResumeState is what a client keeps to resume a session.
type clientResumeState struct {
	Mode    string
	Blob    []byte // session identifier or ticket
	Secret  []byte
	Expiry  time.Time
	HostKey []byte
	User    string
}

func (s *clientResumeState) method() string { return s.Mode }

func (s *clientResumeState) marshal() []byte {
	w := &builder{}
	w.text(stateMagic).text(s.Mode).string(s.Blob).string(s.Secret).uint64(uint64(s.Expiry.Unix())).string(s.HostKey).text(s.User)
	return w.b
}

func parseClientResumeState(b []byte) (*clientResumeState, error) {
	r := reader{b: b}
	if r.text() != stateMagic {
		return nil, errors.New("ssh: not a resumption state blob")
	}
	s := &clientResumeState{Mode: r.text(), Blob: slices.Clone(r.string()), Secret: slices.Clone(r.string())}
	s.Expiry = time.Unix(int64(r.uint64()), 0)
	s.HostKey = slices.Clone(r.string())
	s.User = r.text()
	if err := r.done(); err != nil {
		return nil, err
	}
	if !isResumeKex(s.Mode) || len(s.Secret) != resumeSecretLen || len(s.Blob) == 0 {
		return nil, errors.New("ssh: invalid resumption state")
	}
	return s, nil
}

// ResumptionConfig enables session resumption on a server.
type ResumptionConfig struct {
	// ServerCache enables resume-server@tsnmp.dev.
	ServerCache bool
	// Tickets enables resume-ticket@tsnmp.dev.
	Tickets bool
	// Lifetime bounds how long a session can be resumed (default 1 hour).
	Lifetime time.Duration
	// TicketKeyRotation is how often the ticket key changes (default
	// Lifetime). A ticket stays valid across one rotation at most.
	TicketKeyRotation time.Duration
	// MaxEntries bounds the session cache and the used-ticket list
	// (default 10000).
	MaxEntries int
	// TicketKeys, if set, keeps the ticket keys outside the process, so
	// that tickets stay valid across a restart: keys are loaded when the
	// server is created and saved whenever a new key is made. Without it
	// ticket keys live in memory only. The list of used tickets is not
	// kept: after a restart a ticket used before it can be presented once
	// more, still only with its resumption secret.
	TicketKeys TicketKeyStore

	now func() time.Time // for tests
}

type cachedSession struct {
	secret []byte
	user   string
	expiry time.Time
}

type ticketKey struct {
	id      [8]byte
	raw     [32]byte
	aead    cipher.AEAD
	created time.Time
}

// TicketKey is a ticket key as a TicketKeyStore keeps it. Key is secret.
type TicketKey struct {
	ID      [8]byte
	Key     [32]byte
	Created time.Time
}

// TicketKeyStore keeps a server's ticket keys (ResumptionConfig.TicketKeys).
type TicketKeyStore interface {
	// LoadTicketKeys returns the stored keys, newest first; none (and no
	// error) when nothing is stored yet.
	LoadTicketKeys() ([]TicketKey, error)
	// SaveTicketKeys replaces the stored keys.
	SaveTicketKeys([]TicketKey) error
}

func newTicketKey(id [8]byte, raw [32]byte, created time.Time) *ticketKey {
	block, _ := aes.NewCipher(raw[:])
	aead, _ := cipher.NewGCM(block)
	return &ticketKey{id: id, raw: raw, aead: aead, created: created}
}

// resumption is a server's resumption engine, shared by its connections.
type resumption struct {
	cfg  ResumptionConfig
	rand io.Reader

	mu    sync.Mutex
	cache map[string]*cachedSession
	keys  []*ticketKey // newest first, at most two
	used  map[[16]byte]time.Time
}

func newResumption(cfg ResumptionConfig, rand io.Reader) *resumption {
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = time.Hour
	}
	if cfg.TicketKeyRotation <= 0 {
		cfg.TicketKeyRotation = cfg.Lifetime
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 10000
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	r := &resumption{cfg: cfg, rand: rand, cache: map[string]*cachedSession{}, used: map[[16]byte]time.Time{}}
	if cfg.TicketKeys != nil {
		// Keys that cannot be loaded are replaced by new ones at the
		// first ticket; clients then fall back to full exchanges.
		if keys, err := cfg.TicketKeys.LoadTicketKeys(); err == nil {
			now := cfg.now()
			for _, k := range keys {
				if age := now.Sub(k.Created); age >= 0 && age < 2*cfg.TicketKeyRotation && len(r.keys) < 2 {
					r.keys = append(r.keys, newTicketKey(k.ID, k.Key, k.Created))
				}
			}
		}
	}
	return r
}

func (r *resumption) methods() []string {
	var m []string
	if r.cfg.Tickets {
		m = append(m, KexResumeTicket)
	}
	if r.cfg.ServerCache {
		m = append(m, KexResumeServer)
	}
	return m
}

// pruneLocked drops expired cache entries and used-ticket records.
func (r *resumption) pruneLocked(now time.Time) {
	for k, v := range r.cache {
		if !now.Before(v.expiry) {
			wipeBytes(v.secret)
			delete(r.cache, k)
		}
	}
	for k, exp := range r.used {
		if !now.Before(exp) {
			delete(r.used, k)
		}
	}
}

// remember caches an authenticated session for resume-server@tsnmp.dev.
func (r *resumption) remember(sessionID, secret []byte, user string, deadline time.Time) time.Time {
	now := r.cfg.now()
	exp := r.expiry(now, deadline)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneLocked(now)
	if len(r.cache) >= r.cfg.MaxEntries || !now.Before(exp) {
		return time.Time{}
	}
	r.cache[string(sessionID)] = &cachedSession{secret: slices.Clone(secret), user: user, expiry: exp}
	return exp
}

// currentKeyLocked returns the ticket key, rotating it when due.
func (r *resumption) currentKeyLocked(now time.Time) (*ticketKey, error) {
	if len(r.keys) > 0 && now.Sub(r.keys[0].created) < r.cfg.TicketKeyRotation {
		return r.keys[0], nil
	}
	var raw [32]byte
	var id [8]byte
	defer clear(raw[:])
	if _, err := io.ReadFull(r.rand, id[:]); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(r.rand, raw[:]); err != nil {
		return nil, err
	}
	k := newTicketKey(id, raw, now)
	r.keys = append([]*ticketKey{k}, r.keys...)
	if len(r.keys) > 2 {
		clear(r.keys[2].raw[:])
		r.keys = r.keys[:2]
	}
	if r.cfg.TicketKeys != nil {
		stored := make([]TicketKey, len(r.keys))
		for i, k := range r.keys {
			stored[i] = TicketKey{ID: k.id, Key: k.raw, Created: k.created}
		}
		// A key that cannot be stored still serves this process.
		_ = r.cfg.TicketKeys.SaveTicketKeys(stored)
		for i := range stored {
			clear(stored[i].Key[:])
		}
	}
	return k, nil
}

// expiry returns the expiry for new state: Lifetime from now, but never
// past deadline, the expiry inherited from the session this one resumed.
// A chain of resumptions therefore ends Lifetime after the last full key
// exchange.
func (r *resumption) expiry(now, deadline time.Time) time.Time {
	exp := now.Add(r.cfg.Lifetime)
	if !deadline.IsZero() && deadline.Before(exp) {
		exp = deadline
	}
	return exp
}

// issueTicket seals a ticket for an authenticated session.
func (r *resumption) issueTicket(secret []byte, user string, deadline time.Time) ([]byte, time.Time, error) {
	now := r.cfg.now()
	exp := r.expiry(now, deadline)
	if !now.Before(exp) {
		return nil, exp, nil
	}
	r.mu.Lock()
	k, err := r.currentKeyLocked(now)
	r.mu.Unlock()
	if err != nil {
		return nil, time.Time{}, err
	}
	var id [16]byte
	nonce := make([]byte, 12)
	if _, err := io.ReadFull(r.rand, id[:]); err != nil {
		return nil, time.Time{}, err
	}
	if _, err := io.ReadFull(r.rand, nonce); err != nil {
		return nil, time.Time{}, err
	}
	plain := (&builder{}).raw(id[:]).uint64(uint64(now.Unix())).uint64(uint64(exp.Unix())).string(secret).text(user).b
	defer wipeBytes(plain)
	hdr := append([]byte{ticketVersion}, k.id[:]...)
	out := append(slices.Clone(hdr), nonce...)
	return k.aead.Seal(out, nonce, plain, hdr), exp, nil
}

// openTicket decrypts and checks a ticket without consuming it.
func (r *resumption) openTicket(t []byte, now time.Time) (id [16]byte, secret []byte, user string, exp time.Time, ok bool) {
	if len(t) < 1+8+12+16 || t[0] != ticketVersion {
		return
	}
	hdr, nonce, ct := t[:9], t[9:21], t[21:]
	r.mu.Lock()
	var key *ticketKey
	for _, k := range r.keys {
		if string(k.id[:]) == string(hdr[1:]) && now.Sub(k.created) < 2*r.cfg.TicketKeyRotation {
			key = k
		}
	}
	r.mu.Unlock()
	if key == nil {
		return
	}
	plain, err := key.aead.Open(nil, nonce, ct, hdr)
	if err != nil {
		return
	}
	defer wipeBytes(plain)
	rd := reader{b: plain}
	copy(id[:], rd.bytes(16))
	_ = rd.uint64()
	exp = time.Unix(int64(rd.uint64()), 0)
	secret = slices.Clone(rd.string())
	user = rd.text()
	if rd.done() != nil || len(secret) != resumeSecretLen || !now.Before(exp) {
		return id, nil, "", exp, false
	}
	return id, secret, user, exp, true
}

// lookup finds the session named by blob, checks the client's proof and
// consumes the entry so it cannot be used again.
func (r *resumption) lookup(mode string, blob []byte, proofOK func(secret []byte) bool) (secret []byte, user string, exp time.Time, ok bool) {
	now := r.cfg.now()
	switch mode {
	case KexResumeServer:
		if !r.cfg.ServerCache {
			return nil, "", time.Time{}, false
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		e := r.cache[string(blob)]
		if e == nil || !now.Before(e.expiry) || !proofOK(e.secret) {
			return nil, "", time.Time{}, false
		}
		delete(r.cache, string(blob))
		return e.secret, e.user, e.expiry, true
	case KexResumeTicket:
		if !r.cfg.Tickets {
			return nil, "", time.Time{}, false
		}
		id, secret, user, exp, ok := r.openTicket(blob, now)
		if !ok || !proofOK(secret) {
			return nil, "", time.Time{}, false
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, seen := r.used[id]; seen {
			return nil, "", time.Time{}, false
		}
		r.pruneLocked(now)
		if len(r.used) >= r.cfg.MaxEntries {
			return nil, "", time.Time{}, false
		}
		r.used[id] = exp
		return secret, user, exp, true
	}
	return nil, "", time.Time{}, false
}

// resumeKex runs resume-server@tsnmp.dev or resume-ticket@tsnmp.dev.
type resumeKex struct{ mode string }

func (e *resumeKex) run(k *kexRun) (*kexResult, error) {
	if k.t.isClient {
		return e.client(k)
	}
	return e.server(k)
}

func (e *resumeKex) initHash(k *kexRun, blob, nonceC []byte) []byte {
	return k.exchangeHash(appendString(nil, []byte(e.mode)), appendString(nil, blob), appendString(nil, nonceC))
}

func resumeK(secret, nonceC, nonceS []byte) []byte {
	raw := resumeMAC(secret, "tsnmp-resume K", nonceC, nonceS)
	defer wipeBytes(raw)
	return appendString(nil, mpintFromBytes(raw))
}

func (e *resumeKex) finalHash(k *kexRun, blob, nonceC, nonceS, K []byte) []byte {
	return k.exchangeHash(appendString(nil, []byte(e.mode)), appendString(nil, blob), appendString(nil, nonceC), appendString(nil, nonceS), K)
}

func (e *resumeKex) client(k *kexRun) (*kexResult, error) {
	t := k.t
	st := t.resumeClient
	var blob, secret []byte
	if st != nil && st.Mode == e.mode {
		blob, secret = st.Blob, st.Secret
	}
	// Whatever happens next, the state has been offered once.
	t.resumeClient = nil
	nonceC := make([]byte, resumeNonceLen)
	if _, err := io.ReadFull(t.cfg.rand(), nonceC); err != nil {
		return nil, err
	}
	var proof []byte
	if secret != nil {
		proof = resumeMAC(secret, "tsnmp-resume client", e.initHash(k, blob, nonceC))
	}
	if err := k.write(newBuilder(msgKexSRInit).string(blob).string(nonceC).string(proof).b); err != nil {
		return nil, err
	}
	p, err := t.readKexPacket()
	if err != nil {
		return nil, err
	}
	switch p[0] {
	case msgKexSRError:
		return nil, errResumeFallback
	case msgKexSROK:
	default:
		return nil, errors.New("ssh: unexpected message during resumption")
	}
	if secret == nil {
		return nil, errors.New("ssh: server accepted resumption without state")
	}
	r := reader{b: p[1:]}
	nonceS, proofS := r.string(), r.string()
	if err := r.done(); err != nil {
		return nil, err
	}
	if len(nonceS) != resumeNonceLen {
		return nil, errors.New("ssh: bad resumption nonce")
	}
	K := resumeK(secret, nonceC, nonceS)
	H := e.finalHash(k, blob, nonceC, nonceS, K)
	if !hmac.Equal(proofS, resumeMAC(secret, "tsnmp-resume server", H)) {
		wipeBytes(K)
		return nil, errors.New("ssh: server failed resumption proof")
	}
	t.hostKey = st.HostKey
	t.resumedUser = st.User
	return &kexResult{H: H, K: K, hostKey: st.HostKey, resumed: true, newResumeSecret: deriveResumeSecret(K, H)}, nil
}

func (e *resumeKex) server(k *kexRun) (*kexResult, error) {
	t := k.t
	r, err := k.read(msgKexSRInit)
	if err != nil {
		return nil, err
	}
	blob, nonceC, proof := r.string(), r.string(), r.string()
	if err := r.done(); err != nil {
		return nil, err
	}
	var secret []byte
	var user string
	var deadline time.Time
	ok := false
	if t.resumeServer != nil && len(nonceC) == resumeNonceLen && len(proof) == sha256.Size {
		want := e.initHash(k, blob, nonceC)
		secret, user, deadline, ok = t.resumeServer.lookup(e.mode, blob, func(s []byte) bool {
			return hmac.Equal(proof, resumeMAC(s, "tsnmp-resume client", want))
		})
	}
	if !ok {
		if err := k.write([]byte{msgKexSRError}); err != nil {
			return nil, err
		}
		return nil, errResumeFallback
	}
	defer wipeBytes(secret)
	nonceS := make([]byte, resumeNonceLen)
	if _, err := io.ReadFull(t.cfg.rand(), nonceS); err != nil {
		return nil, err
	}
	K := resumeK(secret, nonceC, nonceS)
	H := e.finalHash(k, blob, nonceC, nonceS, K)
	proofS := resumeMAC(secret, "tsnmp-resume server", H)
	if err := k.write(newBuilder(msgKexSROK).string(nonceS).string(proofS).b); err != nil {
		return nil, err
	}
	t.resumedUser = user
	t.resumeDeadline = deadline
	return &kexResult{H: H, K: K, resumed: true, newResumeSecret: deriveResumeSecret(K, H)}, nil
}

// marshalResumeState builds SSH_MSG_TSNMP_RESUME_STATE: the method the
// client may resume with, the expiry (seconds since the Unix epoch) and the
// ticket (empty for resume-server@tsnmp.dev, which uses the session
// identifier).
func marshalResumeState(method string, exp time.Time, ticket []byte) []byte {
	return newBuilder(msgResumeState).text(method).uint64(uint64(exp.Unix())).string(ticket).b
}
