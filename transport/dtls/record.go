package dtls

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"

	"github.com/pion/dtls/v3"
	"github.com/pion/dtls/v3/pkg/crypto/prf"
	"golang.org/x/crypto/chacha20poly1305"
)

// The record layer of established associations (RFC 6347 §4.1): pion/dtls
// runs each handshake, and once it is complete the listener protects and
// opens the association's records itself, in its own read path (see
// docs/dtls.md for why, and for the security argument). Only AEAD suites
// are served, the only ones the listener negotiates (TestRecordSuites).

// Record content types (RFC 5246 §6.2.1).
const (
	typeChangeCipherSpec = 20
	typeAlert            = 21
	typeHandshake        = 22
	typeApplicationData  = 23
)

const (
	headerLen = 13 // type, version, epoch, sequence number (48 bits), length
	tagLen    = 16 // of every AEAD served
	// maxPlaintext and maxFragment bound a record (RFC 5246 §6.2.1, §6.2.3).
	maxPlaintext = 1 << 14
	maxFragment  = maxPlaintext + 2048
	maxSeq       = 1<<48 - 1
)

// Alerts (RFC 5246 §7.2).
const (
	alertWarning     = 1
	alertFatal       = 2
	alertCloseNotify = 0
)

// dtls12 is the record version of DTLS 1.2 (RFC 6347 §4.1).
var dtls12 = [2]byte{0xfe, 0xfd}

var (
	errRecordFormat  = errors.New("dtls: malformed record")
	errRecordAuth    = errors.New("dtls: record failed authentication")
	errSuiteNotOwned = errors.New("dtls: cipher suite not served by the record layer")
)

// A suite is how an AEAD cipher suite protects records: RFC 5288 (AES-GCM:
// a 4-octet salt from the key block and an 8-octet explicit nonce sent
// with each record) or RFC 7905 (ChaCha20-Poly1305: a 12-octet IV from the
// key block, XORed with the epoch and sequence number; nothing sent).
type suite struct {
	keyLen   int
	ivLen    int
	explicit bool // an 8-octet explicit nonce precedes the ciphertext
	sha384   bool // the PRF hashes with SHA-384
	aead     func(key []byte) (cipher.AEAD, error)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

var (
	aes128GCM = &suite{keyLen: 16, ivLen: 4, explicit: true, aead: newGCM}
	aes256GCM = &suite{keyLen: 32, ivLen: 4, explicit: true, sha384: true, aead: newGCM}
	chacha    = &suite{keyLen: 32, ivLen: 12, aead: chacha20poly1305.New}
)

// recordSuites are the suites the record layer serves, by IANA number.
var recordSuites = map[dtls.CipherSuiteID]*suite{
	dtls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:       aes128GCM,
	dtls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:         aes128GCM,
	dtls.TLS_PSK_WITH_AES_128_GCM_SHA256:               aes128GCM,
	dtls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:       aes256GCM,
	dtls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:         aes256GCM,
	dtls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: chacha,
	dtls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:   chacha,
	dtls.TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256:   chacha,
	dtls.TLS_PSK_WITH_CHACHA20_POLY1305_SHA256:         chacha,
}

// protection is one direction's record protection.
type protection struct {
	aead     cipher.AEAD
	iv       [12]byte
	explicit bool
}

// overhead is what protection adds before the plaintext.
func (p *protection) prefix() int {
	if p.explicit {
		return headerLen + 8
	}
	return headerLen
}

func (p *protection) nonce(n *[12]byte, epochSeq uint64, explicit []byte) {
	if p.explicit {
		copy(n[:4], p.iv[:4])
		copy(n[4:], explicit)
		return
	}
	*n = p.iv
	for i := 0; i < 8; i++ {
		n[4+i] ^= byte(epochSeq >> (56 - 8*i))
	}
}

// additionalData is RFC 5246 §6.2.3.3's: seq_num (epoch and sequence
// number), type, version, length of the plaintext.
func additionalData(ad *[13]byte, typ byte, epochSeq uint64, n int) {
	binary.BigEndian.PutUint64(ad[:8], epochSeq)
	ad[8] = typ
	ad[9], ad[10] = dtls12[0], dtls12[1]
	binary.BigEndian.PutUint16(ad[11:], uint16(n))
}

// record is one record of a datagram.
type record struct {
	typ      byte
	epochSeq uint64 // epoch (16 bits) and sequence number (48)
	fragment []byte // the protected payload
}

func (r *record) epoch() uint16 { return uint16(r.epochSeq >> 48) }
func (r *record) seq() uint64   { return r.epochSeq & maxSeq }

// nextRecord splits the first record off a datagram (RFC 6347 §4.1;
// records without connection IDs). It checks the header only: the
// version must be DTLS 1.2's for a record of a nonzero epoch, and the
// length must fit the datagram and RFC 5246's bound.
func nextRecord(b []byte) (r record, rest []byte, err error) {
	if len(b) < headerLen {
		return r, nil, errRecordFormat
	}
	n := int(binary.BigEndian.Uint16(b[11:]))
	if n > len(b)-headerLen || n > maxFragment {
		return r, nil, errRecordFormat
	}
	r.typ = b[0]
	r.epochSeq = binary.BigEndian.Uint64(b[3:11])
	if r.epoch() != 0 && (b[1] != dtls12[0] || b[2] != dtls12[1]) {
		return r, nil, errRecordFormat
	}
	r.fragment = b[headerLen : headerLen+n]
	return r, b[headerLen+n:], nil
}

// open authenticates and decrypts r in place and returns the plaintext.
// Nothing of the plaintext may be used if it fails.
func (p *protection) open(r *record) ([]byte, error) {
	ct := r.fragment
	var explicit []byte
	if p.explicit {
		if len(ct) < 8 {
			return nil, errRecordFormat
		}
		explicit, ct = ct[:8], ct[8:]
	}
	if len(ct) < tagLen || len(ct)-tagLen > maxPlaintext {
		return nil, errRecordFormat
	}
	var nonce [12]byte
	p.nonce(&nonce, r.epochSeq, explicit)
	var ad [13]byte
	additionalData(&ad, r.typ, r.epochSeq, len(ct)-tagLen)
	out, err := p.aead.Open(ct[:0], nonce[:], ct, ad[:])
	if err != nil {
		return nil, errRecordAuth
	}
	return out, nil
}

// seal protects a record in place: b holds prefix() octets of room for
// the header (and explicit nonce), then the plaintext. It returns the
// record, grown by the tag (within b's capacity if there is room).
func (p *protection) seal(b []byte, typ byte, epochSeq uint64) []byte {
	pre := p.prefix()
	plain := b[pre:]
	b[0] = typ
	b[1], b[2] = dtls12[0], dtls12[1]
	binary.BigEndian.PutUint64(b[3:11], epochSeq)
	binary.BigEndian.PutUint16(b[11:13], uint16(len(b)-headerLen+tagLen))
	var explicit []byte
	if p.explicit {
		// The explicit nonce is the epoch and sequence number, unique
		// per record under the key (RFC 9325 §7.2.1).
		explicit = b[headerLen:pre]
		binary.BigEndian.PutUint64(explicit, epochSeq)
	}
	var nonce [12]byte
	p.nonce(&nonce, epochSeq, explicit)
	var ad [13]byte
	additionalData(&ad, typ, epochSeq, len(plain))
	out := p.aead.Seal(plain[:0], nonce[:], plain, ad[:])
	if len(out) > 0 && len(plain) > 0 && &out[0] == &plain[0] {
		return b[:pre+len(out)]
	}
	return append(b[:pre:pre], out...)
}

// replayWindow is RFC 6347 §4.1.2.6's sliding window of 64 records: next
// is one past the highest sequence number authenticated, bit i of seen
// stands for next-1-i.
type replayWindow struct {
	next uint64
	seen uint64
}

// fresh reports whether seq may be accepted: newer than the window, or
// inside it and not seen.
func (w *replayWindow) fresh(seq uint64) bool {
	if seq >= w.next {
		return true
	}
	d := w.next - 1 - seq
	return d < 64 && w.seen&(1<<d) == 0
}

// mark records an authenticated seq (fresh(seq) was true).
func (w *replayWindow) mark(seq uint64) {
	if seq >= w.next {
		if s := seq + 1 - w.next; s >= 64 {
			w.seen = 0
		} else {
			w.seen <<= s
		}
		w.seen |= 1
		w.next = seq + 1
		return
	}
	w.seen |= 1 << (w.next - 1 - seq)
}

// pionState mirrors the fields of pion/dtls's serialized State (its
// MarshalBinary, gob: fields match by name) that the record layer needs.
type pionState struct {
	HandshakeComplete bool
	IsClient          bool
	LocalEpoch        uint16
	RemoteEpoch       uint16
	LocalRandom       [32]byte
	RemoteRandom      [32]byte
	CipherSuiteID     uint16
	MasterSecret      []byte
	// SequenceNumber is the next sequence number of LocalEpoch.
	SequenceNumber uint64
	// RemoteSequenceNumber is one past the highest sequence number of
	// the peer's records of a nonzero epoch that pion/dtls authenticated
	// (its Finished, and any retransmission of it).
	RemoteSequenceNumber uint64
}

// keys are an association's record protection after its handshake.
type keys struct {
	rd, wr protection
	epoch  uint16 // both directions' (no renegotiation)
	seq    uint64 // the next sequence number to send
	// win starts the replay window past the records pion/dtls took.
	win replayWindow
}

// takeKeys derives the record protection of a completed handshake from
// pion/dtls's state (RFC 5246 §6.3: key_block = PRF(master_secret, "key
// expansion", server_random + client_random); for AEAD suites it holds
// the client's and the server's write keys, then their IVs).
func takeKeys(st *dtls.State) (*keys, error) {
	b, err := st.MarshalBinary()
	if err != nil {
		return nil, err
	}
	var ps pionState
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&ps); err != nil {
		return nil, fmt.Errorf("dtls: reading the handshake's state: %w", err)
	}
	defer clear(ps.MasterSecret)
	return deriveKeys(&ps)
}

func deriveKeys(ps *pionState) (*keys, error) {
	su := recordSuites[dtls.CipherSuiteID(ps.CipherSuiteID)]
	switch {
	case su == nil:
		return nil, fmt.Errorf("%w: %#04x", errSuiteNotOwned, ps.CipherSuiteID)
	case !ps.HandshakeComplete || ps.LocalEpoch == 0 || ps.LocalEpoch != ps.RemoteEpoch || len(ps.MasterSecret) != 48:
		return nil, errors.New("dtls: handshake state incomplete")
	case ps.SequenceNumber > maxSeq:
		return nil, errors.New("dtls: sequence numbers used up")
	}
	h := sha256.New
	if su.sha384 {
		h = sha512.New384
	}
	client, server := ps.RemoteRandom, ps.LocalRandom
	if ps.IsClient {
		client, server = server, client
	}
	kb, err := prf.GenerateEncryptionKeys(ps.MasterSecret, client[:], server[:], 0, su.keyLen, su.ivLen, h)
	if err != nil {
		return nil, err
	}
	defer func() {
		clear(kb.ClientWriteKey)
		clear(kb.ServerWriteKey)
	}()
	k := &keys{epoch: ps.LocalEpoch, seq: ps.SequenceNumber}
	if ps.RemoteSequenceNumber > 0 {
		// Every record below it was either taken by pion/dtls or
		// never sent in this epoch before the Finished (RFC 6347
		// §4.1.2.6: each record once per epoch).
		k.win = replayWindow{next: ps.RemoteSequenceNumber, seen: ^uint64(0)}
	}
	rdKey, rdIV, wrKey, wrIV := kb.ClientWriteKey, kb.ClientWriteIV, kb.ServerWriteKey, kb.ServerWriteIV
	if ps.IsClient {
		rdKey, rdIV, wrKey, wrIV = wrKey, wrIV, rdKey, rdIV
	}
	for _, d := range []struct {
		p       *protection
		key, iv []byte
	}{{&k.rd, rdKey, rdIV}, {&k.wr, wrKey, wrIV}} {
		if d.p.aead, err = su.aead(d.key); err != nil {
			return nil, err
		}
		copy(d.p.iv[:], d.iv)
		d.p.explicit = su.explicit
	}
	return k, nil
}
