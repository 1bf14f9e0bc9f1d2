package usm

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/subtle"
	"hash"
	"sync"
)

// keyState is the per-key crypto state derived once from LocalizedKeys:
// keyed HMACs (pooled, since a hash is not safe for concurrent use) and the
// expanded AES key schedule (safe for concurrent use). Without it every
// message would redo the HMAC key setup and the AES key expansion.
type keyState struct {
	macs sync.Pool // of *macState keyed with Auth

	blkOnce sync.Once
	blk     cipher.Block
	blkErr  error
}

// macState is a keyed HMAC with room for its output.
type macState struct {
	h   hash.Hash
	sum [64]byte
}

// mac appends the truncated HMAC of the message made of parts.
func (k *LocalizedKeys) mac(a AuthProtocol, dst []byte, parts ...[]byte) []byte {
	m, ok := k.state.macs.Get().(*macState)
	if ok {
		m.h.Reset()
	} else {
		m = &macState{h: hmac.New(a.NewHash(), k.Auth)}
	}
	for _, p := range parts {
		m.h.Write(p)
	}
	full := m.h.Sum(m.sum[:0])
	dst = append(dst, full[:a.MACLen()]...)
	clear(m.sum[:])
	k.state.macs.Put(m)
	return dst
}

// verify reports in constant time whether want is the truncated HMAC of
// the message made of parts.
func (k *LocalizedKeys) verify(a AuthProtocol, want []byte, parts ...[]byte) bool {
	var buf [maxMACLen]byte
	got := k.mac(a, buf[:0], parts...)
	ok := len(want) == len(got) && subtle.ConstantTimeCompare(got, want) == 1
	clear(buf[:])
	return ok
}

// aesBlock returns the AES cipher for an AES privacy protocol.
func (k *LocalizedKeys) aesBlock(p PrivProtocol) (cipher.Block, error) {
	k.state.blkOnce.Do(func() {
		if err := p.checkKey(k.Priv); err != nil {
			k.state.blkErr = err
			return
		}
		k.state.blk, k.state.blkErr = aes.NewCipher(k.Priv[:p.KeyLen()])
	})
	return k.state.blk, k.state.blkErr
}

// encrypt is PrivProtocol.Encrypt with the cached AES key schedule.
func (k *LocalizedKeys) encrypt(p PrivProtocol, boots, engineTime uint32, salt, plaintext []byte) ([]byte, error) {
	if p == PrivDES {
		return p.Encrypt(k.Priv, boots, engineTime, salt, plaintext)
	}
	blk, err := k.aesBlock(p)
	if err != nil {
		return nil, err
	}
	out, scratch := cfbBuffers(len(plaintext))
	cfb128(blk, aesIV(boots, engineTime, salt), out, plaintext, false, scratch)
	return out, nil
}

// decrypt is PrivProtocol.Decrypt with the cached AES key schedule.
func (k *LocalizedKeys) decrypt(p PrivProtocol, boots, engineTime uint32, privParams, ciphertext []byte) ([]byte, error) {
	if p == PrivDES || len(privParams) != PrivParamsLen {
		return p.Decrypt(k.Priv, boots, engineTime, privParams, ciphertext)
	}
	blk, err := k.aesBlock(p)
	if err != nil {
		return nil, err
	}
	out, scratch := cfbBuffers(len(ciphertext))
	cfb128(blk, aesIV(boots, engineTime, privParams), out, ciphertext, true, scratch)
	return out, nil
}

// cfbBuffers returns an n-octet output buffer and, in the same allocation,
// the two blocks of scratch space cfb128 needs.
func cfbBuffers(n int) (out, scratch []byte) {
	b := make([]byte, n+2*aes.BlockSize)
	return b[:n:n], b[n:]
}
