package dtls

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync"
	"time"
)

// A resumption ticket is what the agent gives a manager after a full,
// certificate-authenticated DTLS handshake, for the manager to resume with
// an ECDHE-PSK handshake later (see docs/dtls-resumption.md). It is
// opaque to the manager:
//
//	keyID (4) | nonce (12) | AES-256-GCM(key, nonce, plaintext, AD = "tsnmp-dtls-ticket-v1" | keyID)
//
// and its plaintext is
//
//	version 1 (1) | issued (8, Unix s) | expires (8) | psk (32) | n (1) | n × (len (2) | certificate DER)
//
// The PSK is an RFC 5705 exporter value of the full handshake, so only
// the two ends of that handshake know it; the certificates are the chain
// the agent verified, so that a resumed session is named from the same
// certificate, under the rules in force when it resumes.

const (
	ticketVersion = 1
	pskLen        = 32
	keyIDLen      = 4
	nonceLen      = 12
	// maxTicket bounds what the agent accepts as a PSK identity.
	maxTicket = 8192
	// maxChain bounds the certificates a ticket carries.
	maxChain = 4
)

var ticketAD = []byte("tsnmp-dtls-ticket-v1")

// ticketState is a ticket's plaintext.
type ticketState struct {
	Issued, Expires time.Time
	PSK             []byte
	Chain           [][]byte
}

var (
	errTicketFormat  = errors.New("dtls: malformed resumption ticket")
	errTicketKey     = errors.New("dtls: resumption ticket key unknown (rotated out)")
	errTicketExpired = errors.New("dtls: resumption ticket expired")
)

func (t *ticketState) marshal() ([]byte, error) {
	if len(t.PSK) != pskLen || len(t.Chain) == 0 || len(t.Chain) > maxChain {
		return nil, errTicketFormat
	}
	b := []byte{ticketVersion}
	b = binary.BigEndian.AppendUint64(b, uint64(t.Issued.Unix()))
	b = binary.BigEndian.AppendUint64(b, uint64(t.Expires.Unix()))
	b = append(b, t.PSK...)
	b = append(b, byte(len(t.Chain)))
	for _, c := range t.Chain {
		if len(c) == 0 || len(c) > 0xffff {
			return nil, errTicketFormat
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(c)))
		b = append(b, c...)
	}
	return b, nil
}

func (t *ticketState) unmarshal(b []byte) error {
	if len(b) < 1+16+pskLen+1 || b[0] != ticketVersion {
		return errTicketFormat
	}
	t.Issued = time.Unix(int64(binary.BigEndian.Uint64(b[1:])), 0)
	t.Expires = time.Unix(int64(binary.BigEndian.Uint64(b[9:])), 0)
	t.PSK = append([]byte(nil), b[17:17+pskLen]...)
	b = b[17+pskLen:]
	n := int(b[0])
	b = b[1:]
	if n == 0 || n > maxChain {
		return errTicketFormat
	}
	t.Chain = nil
	for i := 0; i < n; i++ {
		if len(b) < 2 {
			return errTicketFormat
		}
		l := int(binary.BigEndian.Uint16(b))
		b = b[2:]
		if l == 0 || l > len(b) {
			return errTicketFormat
		}
		t.Chain = append(t.Chain, append([]byte(nil), b[:l]...))
		b = b[l:]
	}
	if len(b) != 0 {
		return errTicketFormat
	}
	return nil
}

// sealer encrypts and decrypts tickets with the agent's rotating keys.
type sealer struct {
	mu   sync.RWMutex
	keys []sealKey // newest first
}

type sealKey struct {
	id   [keyIDLen]byte
	aead cipher.AEAD
}

// setKeys installs ticket keys, newest first (the TLS listeners' keys, so
// that one rotation governs both transports). The AEAD key is derived, so
// the same secret is never used by two algorithms.
func (s *sealer) setKeys(keys [][32]byte) {
	var out []sealKey
	for _, k := range keys {
		h := sha256.New()
		h.Write([]byte("tsnmp dtls ticket key"))
		h.Write(k[:])
		dk := h.Sum(nil)
		block, err := aes.NewCipher(dk)
		if err != nil {
			panic(err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			panic(err)
		}
		id := sha256.Sum256(append([]byte("tsnmp dtls ticket key id"), k[:]...))
		var sk sealKey
		copy(sk.id[:], id[:keyIDLen])
		sk.aead = aead
		out = append(out, sk)
	}
	s.mu.Lock()
	s.keys = out
	s.mu.Unlock()
}

func (s *sealer) seal(t *ticketState) ([]byte, error) {
	pt, err := t.marshal()
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.keys) == 0 {
		return nil, errTicketKey
	}
	k := s.keys[0]
	out := append([]byte(nil), k.id[:]...)
	nonce := make([]byte, nonceLen)
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out = append(out, nonce...)
	return k.aead.Seal(out, nonce, pt, append(append([]byte(nil), ticketAD...), k.id[:]...)), nil
}

// open authenticates and decrypts a ticket and checks its lifetime.
func (s *sealer) open(b []byte, now time.Time) (*ticketState, error) {
	if len(b) < keyIDLen+nonceLen+16 || len(b) > maxTicket {
		return nil, errTicketFormat
	}
	s.mu.RLock()
	var key *sealKey
	for i := range s.keys {
		if string(s.keys[i].id[:]) == string(b[:keyIDLen]) {
			key = &s.keys[i]
			break
		}
	}
	s.mu.RUnlock()
	if key == nil {
		return nil, errTicketKey
	}
	pt, err := key.aead.Open(nil, b[keyIDLen:keyIDLen+nonceLen], b[keyIDLen+nonceLen:],
		append(append([]byte(nil), ticketAD...), b[:keyIDLen]...))
	if err != nil {
		return nil, errTicketFormat
	}
	var t ticketState
	if err := t.unmarshal(pt); err != nil {
		return nil, err
	}
	if now.After(t.Expires) || now.Before(t.Issued.Add(-time.Minute)) {
		return nil, errTicketExpired
	}
	return &t, nil
}
