package usm

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"
)

// PrivProtocol identifies a USM privacy protocol.
type PrivProtocol int

// Privacy protocols.
const (
	PrivNone    PrivProtocol = iota // usmNoPrivProtocol
	PrivDES                         // usmDESPrivProtocol, CBC-DES (RFC 3414 8)
	PrivAES128                      // usmAesCfb128Protocol (RFC 3826)
	PrivAES192                      // AES-192-CFB, Blumenthal key extension
	PrivAES256                      // AES-256-CFB, Blumenthal key extension
	PrivAES192C                     // AES-192-CFB, Reeder ("Cisco") key extension
	PrivAES256C                     // AES-256-CFB, Reeder ("Cisco") key extension
)

// Privacy protocol OIDs.
const (
	OIDNoPriv     = "1.3.6.1.6.3.10.1.2.1"
	OIDDESPriv    = "1.3.6.1.6.3.10.1.2.2"
	OIDAESCFB128  = "1.3.6.1.6.3.10.1.2.4"
	OIDAES192     = "1.3.6.1.4.1.14832.1.3"
	OIDAES256     = "1.3.6.1.4.1.14832.1.4"
	OIDAES192Reed = "1.3.6.1.4.1.9.12.6.1.1"
	OIDAES256Reed = "1.3.6.1.4.1.9.12.6.1.2"
)

// PrivParamsLen is the length of msgPrivacyParameters (the salt) for every
// supported privacy protocol.
const PrivParamsLen = 8

type keyExtension int

const (
	extendNone keyExtension = iota
	extendBlumenthal
	extendReeder
)

type privInfo struct {
	name    string // Net-SNMP -x name
	mibName string
	oid     string
	keyLen  int // octets of localized key material used (DES: key + pre-IV)
	extend  keyExtension
}

var privTable = [...]privInfo{
	PrivNone:    {"NOPRIV", "usmNoPrivProtocol", OIDNoPriv, 0, extendNone},
	PrivDES:     {"DES", "usmDESPrivProtocol", OIDDESPriv, 16, extendNone},
	PrivAES128:  {"AES", "usmAesCfb128Protocol", OIDAESCFB128, 16, extendNone},
	PrivAES192:  {"AES192", "usmAES192PrivProtocol", OIDAES192, 24, extendBlumenthal},
	PrivAES256:  {"AES256", "usmAES256PrivProtocol", OIDAES256, 32, extendBlumenthal},
	PrivAES192C: {"AES192C", "usmAES192CiscoPrivProtocol", OIDAES192Reed, 24, extendReeder},
	PrivAES256C: {"AES256C", "usmAES256CiscoPrivProtocol", OIDAES256Reed, 32, extendReeder},
}

func (p PrivProtocol) info() *privInfo {
	if p < 0 || int(p) >= len(privTable) {
		return nil
	}
	return &privTable[p]
}

// Valid reports whether p is a known protocol.
func (p PrivProtocol) Valid() bool { return p.info() != nil }

// String returns the Net-SNMP command-line name (e.g. "AES256C").
func (p PrivProtocol) String() string {
	if i := p.info(); i != nil {
		return i.name
	}
	return fmt.Sprintf("PrivProtocol(%d)", int(p))
}

// MIBName returns the protocol's MIB descriptor.
func (p PrivProtocol) MIBName() string {
	if i := p.info(); i != nil {
		return i.mibName
	}
	return ""
}

// OID returns the protocol's object identifier in dotted form.
func (p PrivProtocol) OID() string {
	if i := p.info(); i != nil {
		return i.oid
	}
	return ""
}

// KeyLen returns the number of octets of localized key the protocol uses:
// 16 for DES (8 key + 8 pre-IV), 16/24/32 for AES; 0 for PrivNone.
func (p PrivProtocol) KeyLen() int {
	if i := p.info(); i != nil {
		return i.keyLen
	}
	return 0
}

// PrivProtocols lists all supported protocols, PrivNone first.
func PrivProtocols() []PrivProtocol {
	return []PrivProtocol{PrivNone, PrivDES, PrivAES128, PrivAES192, PrivAES256, PrivAES192C, PrivAES256C}
}

// PrivProtocolByOID returns the protocol with the given dotted OID; a
// leading dot is ignored.
func PrivProtocolByOID(oid string) (PrivProtocol, error) {
	oid = strings.TrimPrefix(oid, ".")
	for i := range privTable {
		if privTable[i].oid == oid {
			return PrivProtocol(i), nil
		}
	}
	return 0, fmt.Errorf("%w: OID %q", ErrUnknownPrivProtocol, oid)
}

// ParsePrivProtocol accepts the names Net-SNMP's -x option accepts,
// case-insensitively: DES, AES (= AES128), AES192, AES256, AES192C,
// AES256C, the dashed forms AES-128, AES-192, AES-256, AES-192-C,
// AES-256-C, and NOPRIV.
func ParsePrivProtocol(name string) (PrivProtocol, error) {
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "NOPRIV", "NONE":
		return PrivNone, nil
	case "DES":
		return PrivDES, nil
	case "AES", "AES128", "AES-128":
		return PrivAES128, nil
	case "AES192", "AES-192":
		return PrivAES192, nil
	case "AES256", "AES-256":
		return PrivAES256, nil
	case "AES192C", "AES-192-C":
		return PrivAES192C, nil
	case "AES256C", "AES-256-C":
		return PrivAES256C, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownPrivProtocol, name)
}

// SaltSource generates msgPrivacyParameters. The counters start at random
// values, as RFC 3414 8.1.1.1 and RFC 3826 3.1.2.1 recommend. It is safe for
// concurrent use; the zero value is usable but starts at zero, so use
// NewSaltSource.
type SaltSource struct {
	n32 atomic.Uint32
	n64 atomic.Uint64
}

// NewSaltSource returns a SaltSource with randomly initialised counters.
func NewSaltSource() *SaltSource {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go >= 1.24)
	s := new(SaltSource)
	s.n32.Store(binary.BigEndian.Uint32(b[:4]))
	s.n64.Store(binary.BigEndian.Uint64(b[4:]))
	return s
}

// Next returns the next salt for protocol p. For DES the salt is the local
// snmpEngineBoots followed by a 32-bit counter (RFC 3414 8.1.1.1); for AES it
// is a 64-bit counter (RFC 3826 3.1.2.1). localBoots is ignored for AES.
func (s *SaltSource) Next(p PrivProtocol, localBoots uint32) [PrivParamsLen]byte {
	var salt [PrivParamsLen]byte
	if p == PrivDES {
		binary.BigEndian.PutUint32(salt[:4], localBoots)
		binary.BigEndian.PutUint32(salt[4:], s.n32.Add(1))
		return salt
	}
	binary.BigEndian.PutUint64(salt[:], s.n64.Add(1))
	return salt
}

// Encrypt encrypts plaintext (a serialized scopedPDU) with the localized,
// extended privacy key and the given salt, returning the ciphertext to be
// placed in encryptedPDU. The salt is sent as msgPrivacyParameters. For
// AES, boots and engineTime are the authoritative engine's
// msgAuthoritativeEngineBoots and msgAuthoritativeEngineTime; DES ignores
// them. DES pads the plaintext with zero octets to a multiple of 8.
func (p PrivProtocol) Encrypt(key []byte, boots, engineTime uint32, salt, plaintext []byte) ([]byte, error) {
	if err := p.checkKey(key); err != nil {
		return nil, err
	}
	if len(salt) != PrivParamsLen {
		return nil, fmt.Errorf("%w: salt is %d octets", ErrCiphertext, len(salt))
	}
	switch p {
	case PrivDES:
		blk, err := des.NewCipher(key[:8])
		if err != nil {
			return nil, err
		}
		var iv [8]byte
		for i := range iv {
			iv[i] = key[8+i] ^ salt[i]
		}
		n := (len(plaintext) + 7) &^ 7
		if n == 0 {
			n = 8
		}
		out := make([]byte, n)
		copy(out, plaintext)
		cipher.NewCBCEncrypter(blk, iv[:]).CryptBlocks(out, out)
		return out, nil
	default:
		blk, err := aes.NewCipher(key[:p.KeyLen()])
		if err != nil {
			return nil, err
		}
		out, scratch := cfbBuffers(len(plaintext))
		cfb128(blk, aesIV(boots, engineTime, salt), out, plaintext, false, scratch)
		return out, nil
	}
}

// Decrypt reverses Encrypt. privParams is the received
// msgPrivacyParameters. It returns an error wrapping ErrCiphertext when the
// parameters or the ciphertext length are invalid (the decryptionError
// case of RFC 3414 3.2 step 8). For DES the result keeps any padding; the
// BER length of the scopedPDU delimits it.
func (p PrivProtocol) Decrypt(key []byte, boots, engineTime uint32, privParams, ciphertext []byte) ([]byte, error) {
	if err := p.checkKey(key); err != nil {
		return nil, err
	}
	if len(privParams) != PrivParamsLen {
		return nil, fmt.Errorf("%w: msgPrivacyParameters is %d octets, want 8", ErrCiphertext, len(privParams))
	}
	switch p {
	case PrivDES:
		if len(ciphertext) == 0 || len(ciphertext)%8 != 0 {
			return nil, fmt.Errorf("%w: DES ciphertext length %d is not a positive multiple of 8", ErrCiphertext, len(ciphertext))
		}
		blk, err := des.NewCipher(key[:8])
		if err != nil {
			return nil, err
		}
		var iv [8]byte
		for i := range iv {
			iv[i] = key[8+i] ^ privParams[i]
		}
		out := make([]byte, len(ciphertext))
		cipher.NewCBCDecrypter(blk, iv[:]).CryptBlocks(out, ciphertext)
		return out, nil
	default:
		blk, err := aes.NewCipher(key[:p.KeyLen()])
		if err != nil {
			return nil, err
		}
		out, scratch := cfbBuffers(len(ciphertext))
		cfb128(blk, aesIV(boots, engineTime, privParams), out, ciphertext, true, scratch)
		return out, nil
	}
}

func (p PrivProtocol) checkKey(key []byte) error {
	if p == PrivNone || !p.Valid() {
		return fmt.Errorf("%w: %v cannot encrypt", ErrUnknownPrivProtocol, p)
	}
	if len(key) < p.KeyLen() {
		return fmt.Errorf("%w: %v key is %d octets, want %d", ErrKeyLength, p, len(key), p.KeyLen())
	}
	return nil
}

// aesIV builds the RFC 3826 3.1.2.1 IV: boots || time || salt.
func aesIV(boots, engineTime uint32, salt []byte) [aes.BlockSize]byte {
	var iv [aes.BlockSize]byte
	binary.BigEndian.PutUint32(iv[0:4], boots)
	binary.BigEndian.PutUint32(iv[4:8], engineTime)
	copy(iv[8:], salt)
	return iv
}

// cfb128 runs AES in 128-bit cipher feedback mode (NIST SP 800-38A), as
// RFC 3826 requires. dst and src may overlap exactly.
func cfb128(blk cipher.Block, iv [aes.BlockSize]byte, dst, src []byte, decrypt bool, scratch []byte) {
	// The key stream and feedback blocks live in caller-provided scratch
	// space: arrays passed to the cipher.Block interface would escape to
	// the heap on every message.
	ks, fb := scratch[:aes.BlockSize], scratch[aes.BlockSize:2*aes.BlockSize]
	copy(fb, iv[:])
	for len(src) > 0 {
		blk.Encrypt(ks, fb)
		n := min(len(src), aes.BlockSize)
		for i := 0; i < n; i++ {
			c := src[i]
			dst[i] = c ^ ks[i]
			if decrypt {
				fb[i] = c
			} else {
				fb[i] = dst[i]
			}
		}
		src, dst = src[n:], dst[n:]
	}
	clear(ks)
}
