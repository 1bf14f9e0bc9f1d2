package tls

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	gotls "crypto/tls"
	"encoding/binary"
	"hash"

	"golang.org/x/crypto/chacha20poly1305"
)

// The AEAD cipher suites whose established sessions the agent carries
// with its own record layer (records.go), and how their keys are made.
// Sessions on any other suite (CBC, TLS 1.0 and 1.1) stay with
// crypto/tls.
type suiteParams struct {
	tls13  bool
	chacha bool // ChaCha20-Poly1305, else AES-GCM
	keyLen int
	// ivLen is the IV derived from the secrets: 12 octets for TLS 1.3
	// and ChaCha20-Poly1305 (XORed with the sequence number), 4 for
	// TLS 1.2 AES-GCM (the salt before the 8-octet explicit nonce,
	// RFC 5288 §3).
	ivLen int
	hash  func() hash.Hash
}

var aeadSuites = map[uint16]suiteParams{
	gotls.TLS_AES_128_GCM_SHA256:       {tls13: true, keyLen: 16, ivLen: 12, hash: sha256.New},
	gotls.TLS_AES_256_GCM_SHA384:       {tls13: true, keyLen: 32, ivLen: 12, hash: sha512.New384},
	gotls.TLS_CHACHA20_POLY1305_SHA256: {tls13: true, chacha: true, keyLen: 32, ivLen: 12, hash: sha256.New},

	gotls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:       {keyLen: 16, ivLen: 4, hash: sha256.New},
	gotls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:         {keyLen: 16, ivLen: 4, hash: sha256.New},
	gotls.TLS_RSA_WITH_AES_128_GCM_SHA256:               {keyLen: 16, ivLen: 4, hash: sha256.New},
	gotls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:       {keyLen: 32, ivLen: 4, hash: sha512.New384},
	gotls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:         {keyLen: 32, ivLen: 4, hash: sha512.New384},
	gotls.TLS_RSA_WITH_AES_256_GCM_SHA384:               {keyLen: 32, ivLen: 4, hash: sha512.New384},
	gotls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: {chacha: true, keyLen: 32, ivLen: 12, hash: sha256.New},
	gotls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:   {chacha: true, keyLen: 32, ivLen: 12, hash: sha256.New},
}

// newAEAD makes the AEAD of a suite from a key.
func (p suiteParams) newAEAD(key []byte) (cipher.AEAD, error) {
	if p.chacha {
		return chacha20poly1305.New(key)
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context
// (RFC 8446 §7.1).
func (p suiteParams) expandLabel(secret []byte, label string, n int) []byte {
	info := make([]byte, 0, 4+6+len(label))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, 0)
	out, err := hkdf.Expand(p.hash, secret, string(info), n)
	if err != nil {
		panic("tls: HKDF-Expand-Label: " + err.Error()) // n is always small
	}
	return out
}

// trafficKeys are the key and IV of a TLS 1.3 traffic secret (RFC 8446
// §7.3).
func (p suiteParams) trafficKeys(secret []byte) (key, iv []byte) {
	return p.expandLabel(secret, "key", p.keyLen), p.expandLabel(secret, "iv", p.ivLen)
}

// nextSecret is the traffic secret after a KeyUpdate (RFC 8446 §7.2).
func (p suiteParams) nextSecret(secret []byte) []byte {
	return p.expandLabel(secret, "traffic upd", len(secret))
}

// prf12 is the TLS 1.2 PRF with the suite's hash (RFC 5246 §5).
func (p suiteParams) prf12(secret []byte, label string, seed []byte, n int) []byte {
	ls := append([]byte(label), seed...)
	mac := hmac.New(p.hash, secret)
	mac.Write(ls)
	a := mac.Sum(nil)
	out := make([]byte, 0, n+mac.Size())
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		mac.Write(ls)
		out = mac.Sum(out)
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(a[:0])
	}
	return out[:n]
}

// keys12 derives a TLS 1.2 AEAD suite's client and server write keys
// and IVs from the master secret (RFC 5246 §6.3: the key block, whose
// MAC keys are empty for AEAD suites).
func (p suiteParams) keys12(master, clientRandom, serverRandom []byte) (ckey, skey, civ, siv []byte) {
	seed := append(append([]byte{}, serverRandom...), clientRandom...)
	kb := p.prf12(master, "key expansion", seed, 2*p.keyLen+2*p.ivLen)
	ckey, kb = kb[:p.keyLen], kb[p.keyLen:]
	skey, kb = kb[:p.keyLen], kb[p.keyLen:]
	civ, siv = kb[:p.ivLen], kb[p.ivLen:]
	return
}
