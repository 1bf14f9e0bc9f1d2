package dtls

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pion/dtls/v3"
	"golang.org/x/crypto/cryptobyte"
)

// The cookie exchange (RFC 6347 §4.2.1) is the listener's, and stateless:
// a ClientHello without a cookie is answered from the read path with a
// HelloVerifyRequest whose cookie is an HMAC over the client's address and
// port and the ClientHello's parameters, under a key that rotates every
// cookiePeriod (the one before still verifies). Nothing is kept for the
// source. Only a ClientHello that returns a cookie that verifies makes a
// handshake (startHandshake), and only then does pion/dtls see it; see
// docs/dtls.md for how pion/dtls is started past its own cookie exchange.

const (
	// cookieLen is the length of the listener's cookies: an HMAC-SHA256
	// (RFC 6347 §4.2.1 allows up to 255 octets in DTLS 1.2).
	cookieLen = sha256.Size
	// cookiePeriod is how often the cookie key rotates: a cookie verifies
	// for at least that long and at most twice that.
	cookiePeriod = 30 * time.Second
	// maxHelloSeq bounds the record sequence number of a ClientHello that
	// starts a handshake: pion/dtls's epoch-0 records are renumbered from
	// it (hsConn.WriteTo), which must stay far from 2^48.
	maxHelloSeq = 1 << 40
)

// dtls10 is the version a HelloVerifyRequest carries, in its record and
// its server_version (RFC 6347 §4.2.1: DTLS 1.2 servers SHOULD use DTLS
// 1.0 there, whatever they negotiate).
var dtls10 = [2]byte{0xfe, 0xff}

// Handshake message types (RFC 5246 §7.4, RFC 6347 §4.3.2).
const (
	hsClientHello        = 1
	hsHelloVerifyRequest = 3
)

// hsHeaderLen is the length of a DTLS handshake message header: type,
// length (24 bits), message_seq, fragment_offset and fragment_length
// (24 bits each).
const hsHeaderLen = 12

var errHello = errors.New("dtls: malformed ClientHello")

// hello is what the listener reads of a datagram that starts with a
// ClientHello: the fields the cookie covers, the cookie, and where the
// message lies in the datagram.
type hello struct {
	recordSeq uint64 // the record's sequence number (epoch 0)
	msgSeq    uint16 // the handshake message_seq
	version   uint16 // client_version
	random    []byte
	sessionID []byte
	cookie    []byte
	suites    []byte // the content of cipher_suites
	methods   []byte // the content of compression_methods

	recordVersion [2]byte
	body          []byte // the ClientHello's body (after the handshake header)
	cookieAt      int    // offset in body of the cookie's length octet
}

// parseHello reads the first record of a datagram as an unfragmented
// ClientHello of epoch 0 (RFC 6347 §4.2.1, RFC 5246 §7.4.1.2); anything
// else is errHello. A fragmented ClientHello is refused: tsnmp's and
// Net-SNMP's fit in one datagram, and taking fragments would mean keeping
// them.
func parseHello(b []byte) (h hello, err error) {
	r, _, err := nextRecord(b)
	if err != nil || r.typ != typeHandshake || r.epoch() != 0 {
		return h, errHello
	}
	h.recordSeq = r.seq()
	h.recordVersion = [2]byte{b[1], b[2]}
	s := cryptobyte.String(r.fragment)
	var typ uint8
	var length, off, fragLen uint32
	if !s.ReadUint8(&typ) || typ != hsClientHello ||
		!s.ReadUint24(&length) || !s.ReadUint16(&h.msgSeq) ||
		!s.ReadUint24(&off) || !s.ReadUint24(&fragLen) ||
		off != 0 || fragLen != length || !s.ReadBytes(&h.body, int(length)) {
		return h, errHello
	}
	body := cryptobyte.String(h.body)
	var sid, cookie, suites, methods cryptobyte.String
	if !body.ReadUint16(&h.version) || !body.ReadBytes(&h.random, 32) ||
		!body.ReadUint8LengthPrefixed(&sid) || len(sid) > 32 {
		return h, errHello
	}
	h.cookieAt = len(h.body) - len(body)
	if !body.ReadUint8LengthPrefixed(&cookie) ||
		!body.ReadUint16LengthPrefixed(&suites) || len(suites) < 2 || len(suites)%2 != 0 ||
		!body.ReadUint8LengthPrefixed(&methods) || len(methods) < 1 {
		return h, errHello
	}
	// Extensions, if any, follow; pion/dtls reads them.
	h.sessionID, h.cookie, h.suites, h.methods = []byte(sid), []byte(cookie), []byte(suites), []byte(methods)
	return h, nil
}

// withoutCookie returns the ClientHello h was read from as the first
// ClientHello of the exchange, the one pion/dtls is given to start from:
// its cookie left out, message_seq 0, and record sequence number seq. Its
// length is that of h's minus the cookie's.
func (h *hello) withoutCookie(seq uint64) []byte {
	n := len(h.body) - len(h.cookie)
	out := make([]byte, 0, headerLen+hsHeaderLen+n)
	out = appendHandshakeHeader(out, h.recordVersion, seq&maxSeq, hsClientHello, n)
	out = append(out, h.body[:h.cookieAt]...)
	out = append(out, 0)
	return append(out, h.body[h.cookieAt+1+len(h.cookie):]...)
}

// appendHandshakeHeader appends the header of a record of epoch 0 with
// sequence number seq holding one unfragmented handshake message of type
// typ, message_seq 0 and n octets of body.
func appendHandshakeHeader(out []byte, version [2]byte, seq uint64, typ byte, n int) []byte {
	out = append(out, typeHandshake, version[0], version[1])
	out = binary.BigEndian.AppendUint64(out, seq) // epoch 0
	out = binary.BigEndian.AppendUint16(out, uint16(hsHeaderLen+n))
	out = append(out, typ)
	out = appendUint24(out, n)
	out = append(out, 0, 0) // message_seq
	out = appendUint24(out, 0)
	return appendUint24(out, n)
}

func appendUint24(b []byte, v int) []byte {
	return append(b, byte(v>>16), byte(v>>8), byte(v))
}

// helloVerifyRequest appends to out the HelloVerifyRequest that answers h
// with cookie: a record of epoch 0 with h's record sequence number (RFC
// 6347 §4.2.1, so that HelloVerifyRequests to retransmitted ClientHellos
// do not repeat one), message_seq 0, and version DTLS 1.0. It is
// headerLen+hsHeaderLen+3+len(cookie) octets (60): less than any
// ClientHello parseHello takes (67 at least), so it amplifies nothing.
func helloVerifyRequest(out []byte, h *hello, cookie []byte) []byte {
	n := 3 + len(cookie)
	out = appendHandshakeHeader(out, dtls10, h.recordSeq, hsHelloVerifyRequest, n)
	out = append(out, dtls10[0], dtls10[1], byte(len(cookie)))
	return append(out, cookie...)
}

// cookieJar makes and verifies a listener's cookies.
type cookieJar struct {
	start time.Time
	skew  atomic.Int64 // added to the clock (tests)
	keys  atomic.Pointer[cookieKeys]
}

// cookieKeys are the keys of one period (the current one, and the one
// before, which still verifies).
type cookieKeys struct {
	period    int64
	cur, prev [32]byte
}

func newCookieJar() *cookieJar {
	return &cookieJar{start: time.Now()}
}

// current returns the keys of the current period, making a new key when a
// period has begun. Keys are random and held only in memory: a restarted
// listener refuses the cookies of the one before (the client starts over
// after its retransmission timer). A reader that read the clock just
// before another installed the next period's keys takes those: keys never
// go back to an earlier period, which would replace the newest key by a
// fresh one and refuse the cookies made under it.
func (j *cookieJar) current() *cookieKeys {
	p := int64((time.Since(j.start) + time.Duration(j.skew.Load())) / cookiePeriod)
	for {
		k := j.keys.Load()
		if k != nil && k.period >= p {
			return k
		}
		n := &cookieKeys{period: p}
		rand.Read(n.cur[:])
		if k != nil && k.period == p-1 {
			n.prev = k.cur
		} else {
			rand.Read(n.prev[:])
		}
		if j.keys.CompareAndSwap(k, n) {
			return n
		}
	}
}

// mac returns the cookie for h from a under key: RFC 6347 §4.2.1's
// HMAC(Secret, Client-IP, Client-Parameters), the parameters being those
// a client must repeat with the cookie (version, random, session_id,
// cipher_suites, compression_methods), each length-prefixed.
func mac(key *[32]byte, a netip.AddrPort, h *hello) [cookieLen]byte {
	m := hmac.New(sha256.New, key[:])
	var b []byte
	ip := a.Addr().Unmap().As16()
	b = append(b, ip[:]...)
	b = binary.BigEndian.AppendUint16(b, a.Port())
	b = binary.BigEndian.AppendUint16(b, h.version)
	b = append(b, h.random...)
	b = append(b, byte(len(h.sessionID)))
	b = append(b, h.sessionID...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.suites)))
	b = append(b, h.suites...)
	b = append(b, byte(len(h.methods)))
	b = append(b, h.methods...)
	m.Write(b)
	var c [cookieLen]byte
	m.Sum(c[:0])
	return c
}

// cookie returns the cookie for a ClientHello h from a.
func (j *cookieJar) cookie(a netip.AddrPort, h *hello) [cookieLen]byte {
	return mac(&j.current().cur, a, h)
}

// verify reports whether h carries a cookie made for it and for a, under
// the current key or the one before.
func (j *cookieJar) verify(a netip.AddrPort, h *hello) bool {
	if len(h.cookie) != cookieLen {
		return false
	}
	k := j.current()
	c := mac(&k.cur, a, h)
	p := mac(&k.prev, a, h)
	return hmac.Equal(c[:], h.cookie) || hmac.Equal(p[:], h.cookie)
}

// helloCounters count the ClientHellos that did not start a handshake.
type helloCounters struct {
	verifies, badCookies, malformed, started atomic.Uint64
}

// HelloStats count the ClientHellos the listener answered or refused
// before any state was made for their source.
type HelloStats struct {
	// Verifies: ClientHellos without a cookie, answered with a
	// HelloVerifyRequest.
	Verifies uint64
	// BadCookies: ClientHellos whose cookie did not verify (forged,
	// expired, or made for another address or ClientHello), dropped.
	BadCookies uint64
	// Malformed: datagrams that looked like a ClientHello and did not
	// parse as one, or fragmented ones, dropped.
	Malformed uint64
	// Started: ClientHellos with a valid cookie that started a handshake.
	Started uint64
}

// HelloStats returns the counters of the cookie exchange.
func (s *Server) HelloStats() HelloStats {
	c := &s.hellos
	return HelloStats{Verifies: c.verifies.Load(), BadCookies: c.badCookies.Load(), Malformed: c.malformed.Load(), Started: c.started.Load()}
}

// pion/dtls has no way to start a server handshake past a cookie exchange
// made by someone else. WithInsecureSkipVerifyHello does not: the server
// then expects the ClientHello with message_seq 0 and sends its
// ServerHello with message_seq 0, where the client, after a cookie
// exchange, sends 1 and expects 1; and message_seq is part of the
// handshake hash (RFC 6347 §4.2.6), so renumbering on the way cannot
// work. So pion/dtls runs its own exchange, on the listener's behalf: it
// is handed the ClientHello without its cookie first (hello.withoutCookie),
// answers it with a HelloVerifyRequest that the hsConn keeps from the
// wire, and at that moment its cookie is made the one the client already
// returned (setPionCookie), so that it takes the client's second
// ClientHello as it is. Its handshake hash then covers what the client's
// does: the second ClientHello and what follows (RFC 6347 §4.2.1).
//
// pion/dtls keeps the cookie in an unexported field (Conn.state.cookie),
// written only when its handshake starts and read when the second
// ClientHello comes. pionCookieOffset locates it; Listen refuses to open
// if it is not there, with the type expected (a change in pion/dtls is
// thus found by the tests, not in the field).
var pionCookieOffset = func() uintptr {
	conn := reflect.TypeFor[dtls.Conn]()
	st, ok := conn.FieldByName("state")
	if !ok || st.Type != reflect.TypeFor[dtls.State]() {
		return 0
	}
	c, ok := st.Type.FieldByName("cookie")
	if !ok || c.Type != reflect.TypeFor[[]byte]() {
		return 0
	}
	return st.Offset + c.Offset
}()

var errPionCookie = errors.New("dtls: pion/dtls has no Conn.state.cookie of type []byte: the cookie exchange cannot be handed to it (see transport/dtls/cookie.go)")

// setPionCookie sets the cookie of pion/dtls's handshake state. It must
// run on the handshake's goroutine (hsConn.WriteTo, called by it), after
// the handshake began.
func setPionCookie(c *dtls.Conn, cookie []byte) {
	*(*[]byte)(unsafe.Add(unsafe.Pointer(c), pionCookieOffset)) = append([]byte(nil), cookie...)
}

// isHelloVerifyRequest reports whether a datagram pion/dtls writes starts
// with a HelloVerifyRequest.
func isHelloVerifyRequest(b []byte) bool {
	r, _, err := nextRecord(b)
	return err == nil && r.typ == typeHandshake && r.epoch() == 0 && len(r.fragment) > 0 && r.fragment[0] == hsHelloVerifyRequest
}
