package ssh

import (
	"encoding/binary"
	"errors"
	"math/big"
	"strings"
)

// Message numbers (RFC 4250 section 4.1, RFC 8308, and tsnmp's resumption
// extension documented in docs/ssh-resumption.md).
const (
	msgDisconnect     = 1
	msgIgnore         = 2
	msgUnimplemented  = 3
	msgDebug          = 4
	msgServiceRequest = 5
	msgServiceAccept  = 6
	msgExtInfo        = 7

	msgKexInit = 20
	msgNewKeys = 21

	// Key exchange method specific (30-49).
	msgKexECDHInit  = 30
	msgKexECDHReply = 31
	msgKexSRInit    = 30
	msgKexSROK      = 31
	msgKexSRError   = 32

	msgUserAuthRequest  = 50
	msgUserAuthFailure  = 51
	msgUserAuthSuccess  = 52
	msgUserAuthBanner   = 53
	msgUserAuthPubKeyOK = 60

	msgGlobalRequest  = 80
	msgRequestSuccess = 81
	msgRequestFailure = 82

	msgChannelOpen         = 90
	msgChannelOpenConfirm  = 91
	msgChannelOpenFailure  = 92
	msgChannelWindowAdjust = 93
	msgChannelData         = 94
	msgChannelExtendedData = 95
	msgChannelEOF          = 96
	msgChannelClose        = 97
	msgChannelRequest      = 98
	msgChannelSuccess      = 99
	msgChannelFailure      = 100

	// msgResumeState tells the client how to resume this session: a ticket,
	// or a server cache entry (local extension range, RFC 4250 section 4.1.2).
	msgResumeState = 200
)

// errShortRead is returned when a message ends before all fields are parsed.
var errShortRead = errors.New("ssh: malformed message: truncated")

// reader decodes SSH wire types (RFC 4251 section 5) from a byte slice.
// The first error sticks; later reads return zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errShortRead
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) bool() bool { return r.byte() != 0 }

func (r *reader) uint32() uint32 {
	if len(r.b) < 4 {
		r.fail()
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) uint64() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || len(r.b) < n {
		r.fail()
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// string returns the next SSH string; the slice aliases the input.
func (r *reader) string() []byte {
	n := r.uint32()
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	return r.bytes(int(n))
}

func (r *reader) text() string { return string(r.string()) }

func (r *reader) nameList() []string {
	s := r.text()
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (r *reader) mpint() *big.Int {
	b := r.string()
	if r.err != nil {
		return nil
	}
	if len(b) > 0 && b[0]&0x80 != 0 {
		// Negative values never occur in tsnmp's key exchanges.
		r.err = errors.New("ssh: malformed message: negative mpint")
		return nil
	}
	return new(big.Int).SetBytes(b)
}

// done reports an error if parsing failed or bytes are left over.
func (r *reader) done() error {
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return errors.New("ssh: malformed message: trailing data")
	}
	return nil
}

// builder encodes SSH wire types.
type builder struct{ b []byte }

func newBuilder(msgType byte) *builder { return &builder{b: []byte{msgType}} }

func (w *builder) byte(v byte) *builder { w.b = append(w.b, v); return w }
func (w *builder) bool(v bool) *builder {
	if v {
		return w.byte(1)
	}
	return w.byte(0)
}
func (w *builder) uint32(v uint32) *builder { w.b = binary.BigEndian.AppendUint32(w.b, v); return w }
func (w *builder) uint64(v uint64) *builder { w.b = binary.BigEndian.AppendUint64(w.b, v); return w }
func (w *builder) raw(v []byte) *builder    { w.b = append(w.b, v...); return w }
func (w *builder) string(v []byte) *builder {
	w.uint32(uint32(len(v)))
	w.b = append(w.b, v...)
	return w
}
func (w *builder) text(v string) *builder {
	w.uint32(uint32(len(v)))
	w.b = append(w.b, v...)
	return w
}
func (w *builder) nameList(v []string) *builder { return w.text(strings.Join(v, ",")) }
func (w *builder) mpint(v *big.Int) *builder    { return w.string(mpintBytes(v)) }

// mpintBytes returns the body of an SSH mpint for a non-negative integer.
func mpintBytes(v *big.Int) []byte {
	if v.Sign() == 0 {
		return nil
	}
	b := v.Bytes()
	if b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// mpintFromBytes returns the body of an SSH mpint for an unsigned
// big-endian integer given as bytes (used for ECDH shared secrets).
func mpintFromBytes(b []byte) []byte {
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	if len(b) == 0 {
		return nil
	}
	out := make([]byte, 0, len(b)+1)
	if b[0]&0x80 != 0 {
		out = append(out, 0)
	}
	return append(out, b...)
}

// appendString appends an SSH string.
func appendString(dst, s []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}
