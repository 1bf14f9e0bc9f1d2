package usm

import (
	"crypto/rand"
	"fmt"
)

// EncodeKeyChange computes a KeyChange value (RFC 3414 section 5, the
// syntax of usmUserAuthKeyChange and usmUserPrivKeyChange) that changes
// oldKey into newKey, using a's hash. The value is random || delta, where
// random has len(oldKey) octets; random may be nil to draw it from
// crypto/rand. newKey must be as long as oldKey.
func EncodeKeyChange(a AuthProtocol, oldKey, newKey, random []byte) ([]byte, error) {
	if a.NewHash() == nil {
		return nil, fmt.Errorf("%w: %v has no hash", ErrUnknownAuthProtocol, a)
	}
	if len(oldKey) == 0 || len(newKey) != len(oldKey) {
		return nil, fmt.Errorf("%w: KeyChange needs keys of equal, non-zero length", ErrKeyLength)
	}
	out := make([]byte, 2*len(oldKey))
	r, delta := out[:len(oldKey)], out[len(oldKey):]
	if random == nil {
		_, _ = rand.Read(r) // crypto/rand.Read never fails (Go >= 1.24)
	} else if len(random) != len(oldKey) {
		return nil, fmt.Errorf("%w: KeyChange random component", ErrKeyLength)
	} else {
		copy(r, random)
	}
	keyChangeXOR(a, oldKey, r, newKey, delta)
	return out, nil
}

// DecodeKeyChange applies a KeyChange value received for a key whose
// current value is oldKey and returns the new key (RFC 3414 section 5).
func DecodeKeyChange(a AuthProtocol, oldKey, keyChange []byte) ([]byte, error) {
	if a.NewHash() == nil {
		return nil, fmt.Errorf("%w: %v has no hash", ErrUnknownAuthProtocol, a)
	}
	if len(oldKey) == 0 || len(keyChange) != 2*len(oldKey) {
		return nil, fmt.Errorf("%w: KeyChange is %d octets for a %d-octet key", ErrKeyLength, len(keyChange), len(oldKey))
	}
	n := len(oldKey)
	newKey := make([]byte, n)
	keyChangeXOR(a, oldKey, keyChange[:n], keyChange[n:], newKey)
	return newKey, nil
}

// keyChangeXOR sets dst = in XOR (H(K||r), H(H(K||r)||r), ...), the
// transformation both directions of KeyChange use.
func keyChangeXOR(a AuthProtocol, key, random, in, dst []byte) {
	h := a.NewHash()()
	temp := append([]byte(nil), key...)
	for off := 0; off < len(in); {
		h.Reset()
		h.Write(temp)
		h.Write(random)
		clear(temp)
		temp = h.Sum(temp[:0])
		n := min(len(temp), len(in)-off)
		for i := 0; i < n; i++ {
			dst[off+i] = in[off+i] ^ temp[i]
		}
		off += n
	}
	clear(temp)
}
