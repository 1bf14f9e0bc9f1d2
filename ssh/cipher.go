package ssh

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	"golang.org/x/crypto/chacha20"
	//lint:ignore SA1019 the OpenSSH chacha20-poly1305 construction needs raw Poly1305 with a one-time key per packet.
	"golang.org/x/crypto/poly1305"
)

const (
	// maxPacket is the largest packet tsnmp accepts (RFC 4253 section 6.1
	// requires at least 35000 bytes).
	maxPacket = 256 * 1024
	// minPadding is the minimum random padding length.
	minPadding = 4
)

// packetCipher seals and opens binary packets (RFC 4253 section 6).
type packetCipher interface {
	// writePacket encrypts and writes one packet with the given sequence number.
	writePacket(seq uint32, w io.Writer, rand io.Reader, payload []byte) error
	// readPacket reads and decrypts one packet, returning its payload.
	readPacket(seq uint32, r io.Reader) ([]byte, error)
	// wipe erases key material.
	wipe()
}

// cipherMode describes one negotiable encryption algorithm.
type cipherMode struct {
	keySize int
	ivSize  int
	aead    bool // integrated authentication; no separate MAC negotiated
	create  func(key, iv []byte, mac *macMode, macKey []byte) (packetCipher, error)
}

// macMode describes one negotiable MAC algorithm.
type macMode struct {
	keySize int
	etm     bool
	new     func(key []byte) hash.Hash
}

// Cipher names.
const (
	CipherChaCha20Poly1305 = "chacha20-poly1305@openssh.com"
	CipherAES128GCM        = "aes128-gcm@openssh.com"
	CipherAES256GCM        = "aes256-gcm@openssh.com"
	CipherAES128CTR        = "aes128-ctr"
	CipherAES192CTR        = "aes192-ctr"
	CipherAES256CTR        = "aes256-ctr"
	// CipherNone and MACNone disable protection. They are negotiated only when
	// both sides set AllowNone and list them explicitly; use for benchmarks.
	CipherNone = "none"
	MACNone    = "none"
)

// MAC names.
const (
	MACHMACSHA256    = "hmac-sha2-256"
	MACHMACSHA512    = "hmac-sha2-512"
	MACHMACSHA256ETM = "hmac-sha2-256-etm@openssh.com"
	MACHMACSHA512ETM = "hmac-sha2-512-etm@openssh.com"
	MACHMACSHA1      = "hmac-sha1"
)

var cipherModes = map[string]*cipherMode{
	CipherChaCha20Poly1305: {keySize: 64, aead: true, create: newChaChaCipher},
	CipherAES128GCM:        {keySize: 16, ivSize: 12, aead: true, create: newGCMCipher},
	CipherAES256GCM:        {keySize: 32, ivSize: 12, aead: true, create: newGCMCipher},
	CipherAES128CTR:        {keySize: 16, ivSize: 16, create: newCTRCipher},
	CipherAES192CTR:        {keySize: 24, ivSize: 16, create: newCTRCipher},
	CipherAES256CTR:        {keySize: 32, ivSize: 16, create: newCTRCipher},
	CipherNone:             {create: newNoneCipher},
}

var macModes = map[string]*macMode{
	MACHMACSHA256ETM: {keySize: 32, etm: true, new: func(k []byte) hash.Hash { return hmac.New(sha256.New, k) }},
	MACHMACSHA512ETM: {keySize: 64, etm: true, new: func(k []byte) hash.Hash { return hmac.New(sha512.New, k) }},
	MACHMACSHA256:    {keySize: 32, new: func(k []byte) hash.Hash { return hmac.New(sha256.New, k) }},
	MACHMACSHA512:    {keySize: 64, new: func(k []byte) hash.Hash { return hmac.New(sha512.New, k) }},
	MACHMACSHA1:      {keySize: 20, new: func(k []byte) hash.Hash { return hmac.New(sha1.New, k) }},
	MACNone:          {new: nil},
}

// Default algorithm lists, strongest first. hmac-sha1 is supported for
// interoperability but is not offered unless configured.
var (
	defaultCiphers = []string{CipherChaCha20Poly1305, CipherAES128GCM, CipherAES256GCM, CipherAES128CTR, CipherAES192CTR, CipherAES256CTR}
	defaultMACs    = []string{MACHMACSHA256ETM, MACHMACSHA512ETM, MACHMACSHA256, MACHMACSHA512}
)

// SupportedCiphers returns every cipher name the package implements
// (excluding none).
func SupportedCiphers() []string { return append([]string(nil), defaultCiphers...) }

// SupportedMACs returns every MAC name the package implements (excluding none).
func SupportedMACs() []string { return append(append([]string(nil), defaultMACs...), MACHMACSHA1) }

var errMAC = errors.New("ssh: message authentication failed")

func wipeBytes(b []byte) { clear(b) }

// paddingFor returns the padding length for a payload so that the covered
// length (headerLen + 1 + payload + padding) is a multiple of blockSize.
func paddingFor(headerLen, payloadLen, blockSize int) int {
	p := blockSize - (headerLen+1+payloadLen)%blockSize
	if p < minPadding {
		p += blockSize
	}
	return p
}

func checkLength(length uint32, blockAlign int, covered uint32) error {
	if length < 5 || length > maxPacket {
		return fmt.Errorf("ssh: invalid packet length %d", length)
	}
	if blockAlign > 1 && covered%uint32(blockAlign) != 0 {
		return fmt.Errorf("ssh: packet length %d not a multiple of block size", length)
	}
	return nil
}

// extractPayload validates padding and returns the payload from
// padding_length || payload || padding.
func extractPayload(body []byte) ([]byte, error) {
	if len(body) < 1 {
		return nil, errors.New("ssh: empty packet")
	}
	pad := int(body[0])
	if pad < minPadding || pad+1 > len(body) {
		return nil, fmt.Errorf("ssh: invalid padding length %d", pad)
	}
	payload := body[1 : len(body)-pad]
	if len(payload) == 0 {
		return nil, errors.New("ssh: empty payload")
	}
	return payload, nil
}

// --- stream (CTR or none) cipher with separate MAC ---

type streamCipher struct {
	stream    cipher.Stream // nil for none
	blockSize int
	mac       hash.Hash // nil for none
	etm       bool
	macKey    []byte
	buf       []byte
	macBuf    []byte
	seqBuf    [4]byte
}

func newCTRCipher(key, iv []byte, mm *macMode, macKey []byte) (packetCipher, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return newStream(cipher.NewCTR(block, iv), aes.BlockSize, mm, macKey), nil
}

func newNoneCipher(_, _ []byte, mm *macMode, macKey []byte) (packetCipher, error) {
	return newStream(nil, 8, mm, macKey), nil
}

func newStream(s cipher.Stream, bs int, mm *macMode, macKey []byte) *streamCipher {
	c := &streamCipher{stream: s, blockSize: bs, macKey: macKey}
	if mm != nil && mm.new != nil {
		c.mac = mm.new(macKey)
		c.etm = mm.etm
	}
	return c
}

func (c *streamCipher) wipe() { wipeBytes(c.macKey) }

func (c *streamCipher) macOver(seq uint32, parts ...[]byte) []byte {
	c.mac.Reset()
	binary.BigEndian.PutUint32(c.seqBuf[:], seq)
	c.mac.Write(c.seqBuf[:])
	for _, p := range parts {
		c.mac.Write(p)
	}
	c.macBuf = c.mac.Sum(c.macBuf[:0])
	return c.macBuf
}

func (c *streamCipher) writePacket(seq uint32, w io.Writer, rand io.Reader, payload []byte) error {
	header := 4
	if c.etm {
		header = 0
	}
	pad := paddingFor(header, len(payload), c.blockSize)
	n := 4 + 1 + len(payload) + pad
	if cap(c.buf) < n {
		c.buf = make([]byte, n, n+64)
	}
	buf := c.buf[:n]
	binary.BigEndian.PutUint32(buf, uint32(1+len(payload)+pad))
	buf[4] = byte(pad)
	copy(buf[5:], payload)
	if _, err := io.ReadFull(rand, buf[5+len(payload):]); err != nil {
		return err
	}
	var mac []byte
	switch {
	case c.mac == nil:
		if c.stream != nil {
			c.stream.XORKeyStream(buf, buf)
		}
	case c.etm:
		if c.stream != nil {
			c.stream.XORKeyStream(buf[4:], buf[4:])
		}
		mac = c.macOver(seq, buf)
	default:
		mac = c.macOver(seq, buf)
		if c.stream != nil {
			c.stream.XORKeyStream(buf, buf)
		}
	}
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if mac != nil {
		if _, err := w.Write(mac); err != nil {
			return err
		}
	}
	return nil
}

func (c *streamCipher) readPacket(seq uint32, r io.Reader) ([]byte, error) {
	first := c.blockSize
	if c.etm {
		first = 4
	}
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:first]); err != nil {
		return nil, err
	}
	if c.stream != nil && !c.etm {
		c.stream.XORKeyStream(hdr[:first], hdr[:first])
	}
	length := binary.BigEndian.Uint32(hdr[:4])
	covered := length + 4
	if c.etm {
		covered = length
	}
	if err := checkLength(length, c.blockSize, covered); err != nil {
		return nil, err
	}
	if !c.etm && length+4 < uint32(first) {
		return nil, fmt.Errorf("ssh: invalid packet length %d", length)
	}
	macLen := 0
	if c.mac != nil {
		macLen = c.mac.Size()
	}
	n := 4 + int(length)
	if cap(c.buf) < n+macLen {
		c.buf = make([]byte, n+macLen, n+macLen+64)
	}
	buf := c.buf[:n+macLen]
	copy(buf, hdr[:first])
	if _, err := io.ReadFull(r, buf[first:]); err != nil {
		return nil, err
	}
	pkt, mac := buf[:n], buf[n:]
	switch {
	case c.mac == nil:
		if c.stream != nil {
			c.stream.XORKeyStream(pkt[first:], pkt[first:])
		}
	case c.etm:
		want := c.macOver(seq, pkt)
		if subtle.ConstantTimeCompare(want, mac) != 1 {
			return nil, errMAC
		}
		if c.stream != nil {
			c.stream.XORKeyStream(pkt[4:], pkt[4:])
		}
	default:
		if c.stream != nil {
			c.stream.XORKeyStream(pkt[first:], pkt[first:])
		}
		want := c.macOver(seq, pkt)
		if subtle.ConstantTimeCompare(want, mac) != 1 {
			return nil, errMAC
		}
	}
	return extractPayload(pkt[4:])
}

// --- AES-GCM (OpenSSH PROTOCOL, RFC 5647 with OpenSSH naming) ---

type gcmCipher struct {
	aead cipher.AEAD
	iv   []byte // 4-byte fixed field || 8-byte invocation counter
	buf  []byte
}

func newGCMCipher(key, iv []byte, _ *macMode, _ []byte) (packetCipher, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &gcmCipher{aead: aead, iv: append([]byte(nil), iv...)}, nil
}

func (c *gcmCipher) wipe() { wipeBytes(c.iv) }

func (c *gcmCipher) incIV() {
	ctr := binary.BigEndian.Uint64(c.iv[4:])
	binary.BigEndian.PutUint64(c.iv[4:], ctr+1)
}

func (c *gcmCipher) writePacket(_ uint32, w io.Writer, rand io.Reader, payload []byte) error {
	pad := paddingFor(0, len(payload), aes.BlockSize)
	length := 1 + len(payload) + pad
	n := 4 + length + c.aead.Overhead()
	if cap(c.buf) < n {
		c.buf = make([]byte, n, n+64)
	}
	buf := c.buf[:4+length]
	binary.BigEndian.PutUint32(buf, uint32(length))
	buf[4] = byte(pad)
	copy(buf[5:], payload)
	if _, err := io.ReadFull(rand, buf[5+len(payload):]); err != nil {
		return err
	}
	out := c.aead.Seal(buf[4:4], c.iv, buf[4:], buf[:4])
	c.incIV()
	_, err := w.Write(c.buf[:4+len(out)])
	return err
}

func (c *gcmCipher) readPacket(_ uint32, r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	length := binary.BigEndian.Uint32(hdr[:])
	if err := checkLength(length, aes.BlockSize, length); err != nil {
		return nil, err
	}
	n := int(length) + c.aead.Overhead()
	if cap(c.buf) < n {
		c.buf = make([]byte, n, n+64)
	}
	buf := c.buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	plain, err := c.aead.Open(buf[:0], c.iv, buf, hdr[:])
	if err != nil {
		return nil, errMAC
	}
	c.incIV()
	return extractPayload(plain)
}

// --- chacha20-poly1305@openssh.com (OpenSSH PROTOCOL.chacha20poly1305) ---

type chachaCipher struct {
	lengthKey  [32]byte // K_1: encrypts the packet length
	contentKey [32]byte // K_2: encrypts the packet and keys Poly1305
	buf        []byte
}

func newChaChaCipher(key, _ []byte, _ *macMode, _ []byte) (packetCipher, error) {
	if len(key) != 64 {
		return nil, errors.New("ssh: chacha20-poly1305 needs a 64-byte key")
	}
	c := &chachaCipher{}
	copy(c.contentKey[:], key[:32])
	copy(c.lengthKey[:], key[32:])
	return c, nil
}

func (c *chachaCipher) wipe() { clear(c.lengthKey[:]); clear(c.contentKey[:]) }

func chachaNonce(seq uint32) []byte {
	var nonce [12]byte
	binary.BigEndian.PutUint32(nonce[8:], seq)
	return nonce[:]
}

// polyKey returns the Poly1305 key (first 32 bytes of block 0) and a stream
// positioned at block 1 for the packet contents.
func (c *chachaCipher) streams(seq uint32) (polyKey [32]byte, content *chacha20.Cipher, length *chacha20.Cipher, err error) {
	nonce := chachaNonce(seq)
	content, err = chacha20.NewUnauthenticatedCipher(c.contentKey[:], nonce)
	if err != nil {
		return
	}
	content.XORKeyStream(polyKey[:], polyKey[:])
	content.SetCounter(1)
	length, err = chacha20.NewUnauthenticatedCipher(c.lengthKey[:], nonce)
	return
}

func (c *chachaCipher) writePacket(seq uint32, w io.Writer, rand io.Reader, payload []byte) error {
	pad := paddingFor(0, len(payload), 8)
	length := 1 + len(payload) + pad
	n := 4 + length + poly1305.TagSize
	if cap(c.buf) < n {
		c.buf = make([]byte, n, n+64)
	}
	buf := c.buf[:n]
	binary.BigEndian.PutUint32(buf, uint32(length))
	buf[4] = byte(pad)
	copy(buf[5:], payload)
	if _, err := io.ReadFull(rand, buf[5+len(payload):4+length]); err != nil {
		return err
	}
	polyKey, content, lc, err := c.streams(seq)
	if err != nil {
		return err
	}
	lc.XORKeyStream(buf[:4], buf[:4])
	content.XORKeyStream(buf[4:4+length], buf[4:4+length])
	var tag [poly1305.TagSize]byte
	poly1305.Sum(&tag, buf[:4+length], &polyKey)
	copy(buf[4+length:], tag[:])
	clear(polyKey[:])
	_, err = w.Write(buf)
	return err
}

func (c *chachaCipher) readPacket(seq uint32, r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	polyKey, content, lc, err := c.streams(seq)
	if err != nil {
		return nil, err
	}
	defer clear(polyKey[:])
	var plainLen [4]byte
	lc.XORKeyStream(plainLen[:], hdr[:])
	length := binary.BigEndian.Uint32(plainLen[:])
	if err := checkLength(length, 8, length); err != nil {
		return nil, err
	}
	n := 4 + int(length) + poly1305.TagSize
	if cap(c.buf) < n {
		c.buf = make([]byte, n, n+64)
	}
	buf := c.buf[:n]
	copy(buf, hdr[:])
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return nil, err
	}
	var tag [poly1305.TagSize]byte
	copy(tag[:], buf[4+length:])
	if !poly1305.Verify(&tag, buf[:4+length], &polyKey) {
		return nil, errMAC
	}
	body := buf[4 : 4+length]
	content.XORKeyStream(body, body)
	return extractPayload(body)
}

// closedCipher replaces a wiped cipher; every operation fails.
type closedCipher struct{}

func (closedCipher) writePacket(uint32, io.Writer, io.Reader, []byte) error { return ErrClosed }
func (closedCipher) readPacket(uint32, io.Reader) ([]byte, error)           { return nil, ErrClosed }
func (closedCipher) wipe()                                                  {}

// bufReleaser is implemented by the ciphers that keep a packet buffer
// from one packet to the next: releaseBuf drops it, so that a parked
// connection keeps none (the next packet allocates one again).
type bufReleaser interface{ releaseBuf() }

func (c *streamCipher) releaseBuf() { c.buf = nil }
func (c *gcmCipher) releaseBuf()    { c.buf = nil }
func (c *chachaCipher) releaseBuf() { c.buf = nil }
