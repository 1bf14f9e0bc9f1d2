package tls

import (
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// records is the agent's record layer for an established TLS session on
// an AEAD suite (RFC 8446 §5 for TLS 1.3, RFC 5246 §6.2 with RFC 5288 and
// RFC 7905 for TLS 1.2). crypto/tls does the handshake (handshake.go)
// and the session continues here, because a crypto/tls connection keeps
// about 4.4 KB per session that its API cannot release (its buffers, two
// ciphers with their key schedules, its configuration and handshake
// state), and an idle SNMP session is most of an agent's sessions. Here
// an idle session keeps its keys, IVs, sequence numbers and (TLS 1.3)
// traffic secrets, about 500 octets: its read buffer goes back to a pool
// once read, and its ciphers are dropped when a read times out (the
// session parks) and made again from the keys when it wakes.
//
// Security argument (docs/tls.md has it in full):
//   - Nonces never repeat: each direction's nonce is made from its
//     sequence number, which counts every record sealed or opened with
//     the key, from the value the handshake left (handshake.go counts
//     the records crypto/tls sealed and opened with the application keys
//     by opening them), and a new key (KeyUpdate) starts at zero. A
//     sequence number does not wrap: the session ends first.
//   - No plaintext is used before it is authenticated: a record is opened
//     in place as a whole, and only an opened record's content type and
//     data are looked at.
//   - Anything unexpected ends the session with a fatal alert: a record
//     that does not open (bad_record_mac), a record type, alert or
//     handshake message this state does not allow, an oversized record.
//   - KeyUpdate (TLS 1.3, RFC 8446 §4.6.3) replaces the read key; when
//     the peer asks, the agent answers with a KeyUpdate of its own
//     before its next record and replaces its write key. The agent also
//     updates its own write key every 2^24 records (RFC 8446 §5.5).
type records struct {
	conn  net.Conn
	suite suiteParams

	rmu     sync.Mutex
	in      half
	buf     *[]byte // pooled read buffer; nil when nothing is buffered
	start   int     // unread raw octets are (*buf)[start:end]
	end     int
	plain   []byte // opened, unread application data (in *buf)
	hs      [5]byte
	nhs     int // octets of a post-handshake message in hs
	useless int // records in a row that carried no application data
	rerr    error

	wmu       sync.Mutex
	out       half
	werr      error
	alertSent bool
}

// half is one direction's keys.
type half struct {
	aead   cipher.AEAD // nil while the session is idle
	seq    uint64
	key    [32]byte
	iv     [12]byte
	secret [48]byte // TLS 1.3 traffic secret (for KeyUpdate)
	nonceB [12]byte // scratch space for the nonce and additional data
	adB    [13]byte // (slices of locals would escape to the heap)
}

const (
	recordHeaderLen    = 5
	maxPlaintext       = 16384
	maxCiphertext12    = maxPlaintext + 2048
	maxCiphertext13    = maxPlaintext + 256
	maxUselessRecords  = 16
	recordTypeCCS      = 20
	recordTypeAlert    = 21
	recordTypeHS       = 22
	recordTypeData     = 23
	typeKeyUpdate      = 24
	alertCloseNotify   = 0
	alertUnexpected    = 10
	alertBadRecordMAC  = 20
	alertOverflow      = 22
	alertDecodeError   = 50
	alertProtoVersion  = 70
	alertIllegalParam  = 47
	alertInternalError = 80
	alertNoReneg       = 100
)

// keyUpdateAfter is the number of records the agent seals with one TLS
// 1.3 key before it updates it (RFC 8446 §5.5 allows 2^24.5 full-size
// records per AES-GCM key); a variable for tests.
var keyUpdateAfter uint64 = 1 << 24

// A recordError is a protocol error of the peer's: the session ends.
type recordError struct {
	alert uint8
	msg   string
}

func (e *recordError) Error() string { return "tls: " + e.msg }

// errBadRecordMAC is a record that does not open: damaged or forged.
var errBadRecordMAC = &recordError{alertBadRecordMAC, "record failed authentication (bad_record_mac)"}

// IsBadRecord reports whether err is a record that failed
// authentication.
func IsBadRecord(err error) bool { return errors.Is(err, errBadRecordMAC) }

// peerAlert is a fatal alert the peer sent.
type peerAlert uint8

func (a peerAlert) Error() string { return fmt.Sprintf("tls: peer sent alert %d", uint8(a)) }

// newRecords carries an established session on conn. The halves' keys,
// IVs, secrets and sequence numbers are set by the caller.
func newRecords(conn net.Conn, p suiteParams) *records {
	return &records{conn: conn, suite: p}
}

// setKeys sets a direction's key and IV (TLS 1.2), or derives them from
// a TLS 1.3 traffic secret.
func (h *half) set13(p suiteParams, secret []byte) {
	clear(h.secret[:])
	copy(h.secret[:], secret)
	k, iv := p.trafficKeys(secret)
	h.set(k, iv)
	clear(k)
}

func (h *half) set(key, iv []byte) {
	clear(h.key[:])
	copy(h.key[:], key)
	copy(h.iv[:], iv)
	h.aead = nil
	h.seq = 0
}

// update moves a TLS 1.3 direction to its next traffic secret.
func (h *half) update(p suiteParams) {
	n := p.hash().Size()
	next := p.nextSecret(h.secret[:n])
	h.set13(p, next)
	clear(next)
}

func (h *half) ready(p suiteParams) error {
	if h.aead != nil {
		return nil
	}
	a, err := p.newAEAD(h.key[:p.keyLen])
	if err != nil {
		return err
	}
	h.aead = a
	return nil
}

// nonce is the IV XORed with the sequence number (RFC 8446 §5.3,
// RFC 7905 §2).
func (h *half) nonce() []byte {
	h.nonceB = h.iv
	for i := 0; i < 8; i++ {
		h.nonceB[4+i] ^= byte(h.seq >> (56 - 8*i))
	}
	return h.nonceB[:]
}

// explicitNonce is TLS 1.2 AES-GCM's nonce: the salt and the explicit
// part (RFC 5288 §3).
func (h *half) explicitNonce(explicit []byte) []byte {
	copy(h.nonceB[:4], h.iv[:4])
	copy(h.nonceB[4:], explicit)
	return h.nonceB[:]
}

// ad12 is TLS 1.2's additional data (RFC 5246 §6.2.3.3).
func (h *half) ad12(typ uint8, n int) []byte {
	binary.BigEndian.PutUint64(h.adB[:], h.seq)
	h.adB[8], h.adB[9], h.adB[10] = typ, 3, 3
	binary.BigEndian.PutUint16(h.adB[11:], uint16(n))
	return h.adB[:]
}

func (h *half) wipe() {
	h.aead = nil
	clear(h.key[:])
	clear(h.iv[:])
	clear(h.secret[:])
}

// Read buffers: most SNMP records fit a small one.
const smallBuf = 4096

var (
	smallBufs = sync.Pool{New: func() any { b := make([]byte, smallBuf); return &b }}
	largeBufs = sync.Pool{New: func() any { b := make([]byte, recordHeaderLen+maxCiphertext12); return &b }}
)

func putBuf(b *[]byte) {
	if cap(*b) == smallBuf {
		smallBufs.Put(b)
	} else {
		largeBufs.Put(b)
	}
}

// Read returns application data.
func (r *records) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.rmu.Lock()
	defer r.rmu.Unlock()
	for len(r.plain) == 0 {
		if r.rerr != nil {
			return 0, r.rerr
		}
		if err := r.readRecord(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				r.idle()
				return 0, err
			}
			r.rerr = err
			r.release()
			var re *recordError
			if errors.As(err, &re) {
				r.sendAlert(re.alert)
			}
			return 0, err
		}
	}
	n := copy(b, r.plain)
	r.plain = r.plain[n:]
	if len(r.plain) == 0 && r.start == r.end {
		r.release()
	}
	return n, nil
}

// release gives the read buffer back when nothing is left in it.
func (r *records) release() {
	if r.buf != nil {
		putBuf(r.buf)
		r.buf, r.start, r.end, r.plain = nil, 0, 0, nil
	}
}

// idle drops what an idle session need not keep: its read buffer when
// empty and its ciphers, which are made again from the keys on the next
// record.
func (r *records) idle() {
	if r.start == r.end && len(r.plain) == 0 {
		r.release()
	}
	r.in.aead = nil
	if r.wmu.TryLock() {
		r.out.aead = nil
		r.wmu.Unlock()
	}
}

// fill reads until n raw octets are buffered.
func (r *records) fill(n int) error {
	if r.buf == nil {
		if n <= smallBuf {
			r.buf = smallBufs.Get().(*[]byte)
		} else {
			r.buf = largeBufs.Get().(*[]byte)
		}
	}
	for r.end-r.start < n {
		b := *r.buf
		if r.start+n > len(b) {
			if n <= len(b) {
				r.end = copy(b, b[r.start:r.end])
				r.start = 0
			} else {
				nb := largeBufs.Get().(*[]byte)
				r.end = copy(*nb, b[r.start:r.end])
				r.start = 0
				putBuf(r.buf)
				r.buf = nb
				b = *nb
			}
		}
		m, err := r.conn.Read(b[r.end:])
		r.end += m
		if err != nil {
			if r.end-r.start >= n {
				break
			}
			if err == io.EOF && r.end > r.start {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// readRecord reads and opens one record, and acts on it: application
// data goes to r.plain.
func (r *records) readRecord() error {
	if err := r.fill(recordHeaderLen); err != nil {
		return err
	}
	hdr := (*r.buf)[r.start : r.start+recordHeaderLen]
	n := int(binary.BigEndian.Uint16(hdr[3:]))
	max := maxCiphertext12
	if r.suite.tls13 {
		max = maxCiphertext13
	}
	if n > max {
		return &recordError{alertOverflow, fmt.Sprintf("record of %d octets", n)}
	}
	if err := r.fill(recordHeaderLen + n); err != nil {
		return err
	}
	rec := (*r.buf)[r.start : r.start+recordHeaderLen+n]
	r.start += len(rec)
	typ, data, err := r.open(rec)
	if err != nil {
		return err
	}
	if r.nhs > 0 && typ != recordTypeHS {
		// RFC 8446 §5.1: a handshake message in pieces is not
		// interleaved with other records.
		return &recordError{alertUnexpected, "record inside a handshake message"}
	}
	if typ == recordTypeData && len(data) > 0 {
		r.useless = 0
		r.plain = data
		return nil
	}
	if r.useless++; r.useless > maxUselessRecords {
		return &recordError{alertUnexpected, "too many records without application data"}
	}
	switch typ {
	case recordTypeData:
		return nil
	case recordTypeAlert:
		if len(data) != 2 {
			return &recordError{alertDecodeError, "malformed alert"}
		}
		if data[1] == alertCloseNotify {
			return io.EOF
		}
		if !r.suite.tls13 && data[0] == 1 {
			return nil // a TLS 1.2 warning
		}
		return peerAlert(data[1])
	case recordTypeHS:
		if !r.suite.tls13 {
			return &recordError{alertNoReneg, "renegotiation refused"}
		}
		return r.handshakeData(data)
	}
	return &recordError{alertUnexpected, fmt.Sprintf("unexpected record type %d", typ)}
}

// open authenticates and decrypts a record in place, returning its
// content type and data.
func (r *records) open(rec []byte) (uint8, []byte, error) {
	in := &r.in
	if err := in.ready(r.suite); err != nil {
		return 0, nil, err
	}
	if in.seq == ^uint64(0) {
		return 0, nil, &recordError{alertInternalError, "read sequence number exhausted"}
	}
	typ, payload := rec[0], rec[recordHeaderLen:]
	if r.suite.tls13 {
		if typ != recordTypeData {
			return 0, nil, &recordError{alertUnexpected, fmt.Sprintf("unexpected record type %d", typ)}
		}
		pt, err := in.aead.Open(payload[:0], in.nonce(), payload, rec[:recordHeaderLen])
		if err != nil {
			return 0, nil, errBadRecordMAC
		}
		in.seq++
		i := len(pt) - 1
		for i >= 0 && pt[i] == 0 {
			i--
		}
		if i < 0 {
			return 0, nil, &recordError{alertUnexpected, "record without content type"}
		}
		typ, pt = pt[i], pt[:i]
		if len(pt) > maxPlaintext {
			return 0, nil, &recordError{alertOverflow, "oversized plaintext"}
		}
		return typ, pt, nil
	}
	if typ != recordTypeData && typ != recordTypeAlert && typ != recordTypeHS {
		return 0, nil, &recordError{alertUnexpected, fmt.Sprintf("unexpected record type %d", typ)}
	}
	if rec[1] != 3 || rec[2] != 3 {
		return 0, nil, &recordError{alertProtoVersion, fmt.Sprintf("record version %#02x%02x", rec[1], rec[2])}
	}
	var nonce []byte
	if r.suite.chacha {
		nonce = in.nonce()
	} else {
		if len(payload) < 8 {
			return 0, nil, errBadRecordMAC
		}
		nonce = in.explicitNonce(payload[:8])
		payload = payload[8:]
	}
	if len(payload) < in.aead.Overhead() {
		return 0, nil, errBadRecordMAC
	}
	ad := in.ad12(typ, len(payload)-in.aead.Overhead())
	pt, err := in.aead.Open(payload[:0], nonce, payload, ad)
	if err != nil {
		return 0, nil, errBadRecordMAC
	}
	in.seq++
	if len(pt) > maxPlaintext {
		return 0, nil, &recordError{alertOverflow, "oversized plaintext"}
	}
	return typ, pt, nil
}

// handshakeData takes a TLS 1.3 post-handshake message, which may come
// in pieces: only KeyUpdate is allowed from a client.
func (r *records) handshakeData(data []byte) error {
	for len(data) > 0 {
		k := copy(r.hs[r.nhs:], data)
		r.nhs += k
		data = data[k:]
		if r.nhs >= 4 && (r.hs[0] != typeKeyUpdate || r.hs[1] != 0 || r.hs[2] != 0 || r.hs[3] != 1) {
			if r.hs[0] != typeKeyUpdate {
				return &recordError{alertUnexpected, fmt.Sprintf("unexpected handshake message %d", r.hs[0])}
			}
			return &recordError{alertDecodeError, "malformed KeyUpdate"}
		}
		if r.nhs < len(r.hs) {
			continue
		}
		r.nhs = 0
		req := r.hs[4]
		if req > 1 {
			return &recordError{alertIllegalParam, "malformed KeyUpdate"}
		}
		if len(data) > 0 {
			// RFC 8446 §5.1: handshake messages must not span a key change.
			return &recordError{alertUnexpected, "data after KeyUpdate in its record"}
		}
		r.in.update(r.suite)
		if req == 1 {
			r.wmu.Lock()
			err := r.updateWriteKeyLocked()
			r.wmu.Unlock()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// updateWriteKeyLocked sends a KeyUpdate (update_not_requested) and
// moves the write direction to its next key.
func (r *records) updateWriteKeyLocked() error {
	if r.werr != nil {
		return r.werr
	}
	var b []byte
	b, err := r.sealLocked(b, recordTypeHS, []byte{typeKeyUpdate, 0, 0, 1, 0})
	if err == nil {
		_, err = r.conn.Write(b)
	}
	if err != nil {
		r.werr = err
		return err
	}
	r.out.update(r.suite)
	return nil
}

// Write sends b as application data, in records of at most 16 KB.
func (r *records) Write(b []byte) (int, error) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if r.werr != nil {
		return 0, r.werr
	}
	if r.suite.tls13 && r.out.seq >= keyUpdateAfter {
		if err := r.updateWriteKeyLocked(); err != nil {
			return 0, err
		}
	}
	bp := smallBufs.Get().(*[]byte)
	out := (*bp)[:0]
	var err error
	for off := 0; off < len(b) && err == nil; off += maxPlaintext {
		out, err = r.sealLocked(out, recordTypeData, b[off:min(off+maxPlaintext, len(b))])
	}
	if err == nil {
		_, err = r.conn.Write(out)
	}
	smallBufs.Put(bp)
	if err != nil {
		r.werr = err
		return 0, err
	}
	return len(b), nil
}

// sealLocked appends a record of type typ holding data.
func (r *records) sealLocked(out []byte, typ uint8, data []byte) ([]byte, error) {
	o := &r.out
	if err := o.ready(r.suite); err != nil {
		return out, err
	}
	if o.seq == ^uint64(0) {
		return out, errors.New("tls: write sequence number exhausted")
	}
	tag := o.aead.Overhead()
	h := len(out)
	if r.suite.tls13 {
		n := len(data) + 1 + tag
		out = append(out, recordTypeData, 3, 3, byte(n>>8), byte(n))
		p := len(out)
		out = append(out, data...)
		out = append(out, typ)
		out = o.aead.Seal(out[:p], o.nonce(), out[p:], out[h:p])
		o.seq++
		return out, nil
	}
	var nonce []byte
	explicit := 0
	if r.suite.chacha {
		nonce = o.nonce()
	} else {
		var seq [8]byte
		binary.BigEndian.PutUint64(seq[:], o.seq)
		nonce = o.explicitNonce(seq[:])
		explicit = 8
	}
	n := explicit + len(data) + tag
	out = append(out, typ, 3, 3, byte(n>>8), byte(n))
	out = append(out, nonce[12-explicit:]...)
	p := len(out)
	out = append(out, data...)
	out = o.aead.Seal(out[:p], nonce, out[p:], o.ad12(typ, len(data)))
	o.seq++
	return out, nil
}

// sendAlert sends a fatal alert (close_notify is a warning) and makes
// the session unusable for writing.
func (r *records) sendAlert(desc uint8) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.sendAlertLocked(desc)
}

func (r *records) sendAlertLocked(desc uint8) {
	if r.werr != nil || r.alertSent {
		return
	}
	level := uint8(2)
	if desc == alertCloseNotify {
		level = 1
	}
	r.alertSent = true
	r.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	b, err := r.sealLocked(nil, recordTypeAlert, []byte{level, desc})
	if err == nil {
		_, err = r.conn.Write(b)
	}
	if err == nil {
		err = net.ErrClosed
	}
	r.werr = err
}

// Close sends close_notify, unless a write is in progress (then Close
// only ends it), and closes the connection.
func (r *records) Close() error {
	if r.wmu.TryLock() {
		r.sendAlertLocked(alertCloseNotify)
		r.out.wipe()
		r.wmu.Unlock()
	}
	err := r.conn.Close()
	if r.rmu.TryLock() {
		r.in.wipe()
		r.rmu.Unlock()
	}
	return err
}
