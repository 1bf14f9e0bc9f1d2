package ssh

import (
	"bytes"
	"crypto/ecdh"
	"crypto/mlkem"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
)

// kexRun carries the state of one key exchange.
type kexRun struct {
	t           *transport
	magics      []byte // string V_C || string V_S || string I_C || string I_S
	hostKeyAlgo string
	first       bool
}

// kexResult is the outcome of a key exchange.
type kexResult struct {
	H       []byte // exchange hash
	K       []byte // shared secret, encoded as an SSH mpint (with length)
	hostKey []byte // server host key (full exchanges only)

	resumed         bool
	newResumeSecret []byte
}

// kexAlgorithm runs one key exchange method for either role.
type kexAlgorithm interface {
	run(k *kexRun) (*kexResult, error)
}

var kexAlgorithms = map[string]kexAlgorithm{
	KexMLKEM768X25519:   &hybridKex{},
	KexCurve25519:       &ecdhKex{curve: ecdh.X25519()},
	KexCurve25519LibSSH: &ecdhKex{curve: ecdh.X25519()},
	KexECDHP256:         &ecdhKex{curve: ecdh.P256()},
	KexDHGroup14SHA256:  newDHGroup14(),
	KexResumeServer:     &resumeKex{mode: KexResumeServer},
	KexResumeTicket:     &resumeKex{mode: KexResumeTicket},
}

// SupportedKeyExchanges lists the full key exchange methods implemented.
func SupportedKeyExchanges() []string { return slices.Clone(defaultKexAlgos) }

func (k *kexRun) write(p []byte) error { return k.t.writeKexPacket(p) }

func (k *kexRun) read(want byte) (*reader, error) {
	p, err := k.t.readKexPacket()
	if err != nil {
		return nil, err
	}
	if p[0] != want {
		return nil, fmt.Errorf("ssh: key exchange: got message %d, want %d", p[0], want)
	}
	return &reader{b: p[1:]}, nil
}

func (k *kexRun) exchangeHash(parts ...[]byte) []byte {
	h := sha256.New()
	h.Write(k.magics)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// hostSigner returns the server host key for the negotiated algorithm.
func (k *kexRun) hostSigner() (Signer, error) {
	for _, s := range k.t.hostKeys {
		if slices.Contains(s.Algorithms(), k.hostKeyAlgo) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("ssh: no host key for %s", k.hostKeyAlgo)
}

// verifyServer checks the server's signature over H and, for the first
// exchange, asks the client's host key policy; later exchanges must present
// the same host key.
func (k *kexRun) verifyServer(hostKey, sig, h []byte) error {
	if err := verifySignatureMin(hostKey, k.hostKeyAlgo, h, sig, k.t.minRSABits); err != nil {
		return err
	}
	t := k.t
	if t.hostKey != nil {
		if !bytes.Equal(t.hostKey, hostKey) {
			return errors.New("ssh: host key changed during re-exchange")
		}
		return nil
	}
	if t.checkHostKey == nil {
		return errors.New("ssh: no host key policy configured")
	}
	return t.checkHostKey(k.hostKeyAlgo, hostKey)
}

// ecdhKex implements curve25519-sha256 (RFC 8731) and ecdh-sha2-nistp256
// (RFC 5656).
type ecdhKex struct{ curve ecdh.Curve }

func (e *ecdhKex) run(k *kexRun) (*kexResult, error) {
	priv, err := e.curve.GenerateKey(k.t.cfg.rand())
	if err != nil {
		return nil, err
	}
	ours := priv.PublicKey().Bytes()
	if k.t.isClient {
		if err := k.write(newBuilder(msgKexECDHInit).string(ours).b); err != nil {
			return nil, err
		}
		r, err := k.read(msgKexECDHReply)
		if err != nil {
			return nil, err
		}
		hostKey, theirs, sig := r.string(), r.string(), r.string()
		if err := r.done(); err != nil {
			return nil, err
		}
		K, err := e.shared(priv, theirs)
		if err != nil {
			return nil, err
		}
		H := k.exchangeHash(appendString(nil, hostKey), appendString(nil, ours), appendString(nil, theirs), K)
		if err := k.verifyServer(hostKey, sig, H); err != nil {
			wipeBytes(K)
			return nil, err
		}
		return &kexResult{H: H, K: K, hostKey: slices.Clone(hostKey)}, nil
	}
	r, err := k.read(msgKexECDHInit)
	if err != nil {
		return nil, err
	}
	theirs := r.string()
	if err := r.done(); err != nil {
		return nil, err
	}
	K, err := e.shared(priv, theirs)
	if err != nil {
		return nil, err
	}
	signer, err := k.hostSigner()
	if err != nil {
		return nil, err
	}
	hostKey := signer.PublicKey()
	H := k.exchangeHash(appendString(nil, hostKey), appendString(nil, theirs), appendString(nil, ours), K)
	sig, err := signer.Sign(k.t.cfg.rand(), H, k.hostKeyAlgo)
	if err != nil {
		return nil, err
	}
	if err := k.write(newBuilder(msgKexECDHReply).string(hostKey).string(ours).string(sig).b); err != nil {
		return nil, err
	}
	return &kexResult{H: H, K: K, hostKey: slices.Clone(hostKey)}, nil
}

func (e *ecdhKex) shared(priv *ecdh.PrivateKey, peer []byte) ([]byte, error) {
	pub, err := e.curve.NewPublicKey(peer)
	if err != nil {
		return nil, fmt.Errorf("ssh: invalid peer key exchange value: %w", err)
	}
	secret, err := priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("ssh: key agreement failed: %w", err)
	}
	K := appendString(nil, mpintFromBytes(secret))
	wipeBytes(secret)
	return K, nil
}

// dhKex implements diffie-hellman-group14-sha256 (RFC 8268).
type dhKex struct {
	g, p, pMinus1 *big.Int
}

const oakleyGroup14 = "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA051015728E5A8AACAA68FFFFFFFFFFFFFFFF"

func newDHGroup14() *dhKex {
	p, _ := new(big.Int).SetString(oakleyGroup14, 16)
	return &dhKex{g: big.NewInt(2), p: p, pMinus1: new(big.Int).Sub(p, big.NewInt(1))}
}

func (d *dhKex) shared(x, peer *big.Int) ([]byte, error) {
	if peer == nil || peer.Cmp(big.NewInt(1)) <= 0 || peer.Cmp(d.pMinus1) >= 0 {
		return nil, errors.New("ssh: DH value out of range")
	}
	return appendString(nil, mpintBytes(new(big.Int).Exp(peer, x, d.p))), nil
}

func (d *dhKex) run(k *kexRun) (*kexResult, error) {
	// A 512-bit exponent is well above twice the group's ~112-bit strength
	// (RFC 8268 section 4; RFC 3526 section 8).
	x, err := rand.Int(k.t.cfg.rand(), new(big.Int).Lsh(big.NewInt(1), 512))
	if err != nil {
		return nil, err
	}
	x.Add(x, big.NewInt(2))
	ours := new(big.Int).Exp(d.g, x, d.p)
	oursEnc := appendString(nil, mpintBytes(ours))
	if k.t.isClient {
		if err := k.write(newBuilder(msgKexECDHInit).mpint(ours).b); err != nil {
			return nil, err
		}
		r, err := k.read(msgKexECDHReply)
		if err != nil {
			return nil, err
		}
		hostKey, f, sig := r.string(), r.mpint(), r.string()
		if err := r.done(); err != nil {
			return nil, err
		}
		K, err := d.shared(x, f)
		if err != nil {
			return nil, err
		}
		H := k.exchangeHash(appendString(nil, hostKey), oursEnc, appendString(nil, mpintBytes(f)), K)
		if err := k.verifyServer(hostKey, sig, H); err != nil {
			return nil, err
		}
		return &kexResult{H: H, K: K, hostKey: slices.Clone(hostKey)}, nil
	}
	r, err := k.read(msgKexECDHInit)
	if err != nil {
		return nil, err
	}
	e := r.mpint()
	if err := r.done(); err != nil {
		return nil, err
	}
	K, err := d.shared(x, e)
	if err != nil {
		return nil, err
	}
	signer, err := k.hostSigner()
	if err != nil {
		return nil, err
	}
	hostKey := signer.PublicKey()
	H := k.exchangeHash(appendString(nil, hostKey), appendString(nil, mpintBytes(e)), oursEnc, K)
	sig, err := signer.Sign(k.t.cfg.rand(), H, k.hostKeyAlgo)
	if err != nil {
		return nil, err
	}
	if err := k.write(newBuilder(msgKexECDHReply).string(hostKey).mpint(ours).string(sig).b); err != nil {
		return nil, err
	}
	return &kexResult{H: H, K: K, hostKey: slices.Clone(hostKey)}, nil
}

// hybridKex implements mlkem768x25519-sha256
// (draft-ietf-sshm-mlkem-hybrid-kex, as OpenSSH 9.9 and
// golang.org/x/crypto/ssh speak it): the client sends its ML-KEM-768
// encapsulation key followed by its X25519 public key; the server answers
// with the ML-KEM ciphertext followed by its X25519 public key, in the
// messages of ECDH (30 and 31). The shared secret is
// SHA-256(ML-KEM secret || X25519 secret), encoded as a string (not an
// mpint) in the exchange hash and the key derivation. ML-KEM is
// crypto/mlkem's; the key exchange survives a future quantum computer as
// long as ML-KEM does, and a break of ML-KEM as long as X25519 holds.
type hybridKex struct{}

// hybridSharedSecret combines the two secrets and wipes them.
func hybridSharedSecret(pq, cl []byte) []byte {
	h := sha256.New()
	h.Write(pq)
	h.Write(cl)
	wipeBytes(pq)
	wipeBytes(cl)
	secret := h.Sum(nil)
	K := appendString(nil, secret)
	wipeBytes(secret)
	return K
}

func (e *hybridKex) run(k *kexRun) (*kexResult, error) {
	x := ecdh.X25519()
	priv, err := x.GenerateKey(k.t.cfg.rand())
	if err != nil {
		return nil, err
	}
	if k.t.isClient {
		seed := make([]byte, mlkem.SeedSize)
		if _, err := io.ReadFull(k.t.cfg.rand(), seed); err != nil {
			return nil, err
		}
		dk, err := mlkem.NewDecapsulationKey768(seed)
		wipeBytes(seed)
		if err != nil {
			return nil, err
		}
		ours := append(dk.EncapsulationKey().Bytes(), priv.PublicKey().Bytes()...)
		if err := k.write(newBuilder(msgKexECDHInit).string(ours).b); err != nil {
			return nil, err
		}
		r, err := k.read(msgKexECDHReply)
		if err != nil {
			return nil, err
		}
		hostKey, theirs, sig := r.string(), r.string(), r.string()
		if err := r.done(); err != nil {
			return nil, err
		}
		if len(theirs) != mlkem.CiphertextSize768+32 {
			return nil, fmt.Errorf("ssh: mlkem768x25519 reply of %d bytes, want %d", len(theirs), mlkem.CiphertextSize768+32)
		}
		pq, err := dk.Decapsulate(theirs[:mlkem.CiphertextSize768])
		if err != nil {
			return nil, fmt.Errorf("ssh: invalid ML-KEM ciphertext: %w", err)
		}
		cl, err := x25519Shared(priv, theirs[mlkem.CiphertextSize768:])
		if err != nil {
			return nil, err
		}
		K := hybridSharedSecret(pq, cl)
		H := k.exchangeHash(appendString(nil, hostKey), appendString(nil, ours), appendString(nil, theirs), K)
		if err := k.verifyServer(hostKey, sig, H); err != nil {
			wipeBytes(K)
			return nil, err
		}
		return &kexResult{H: H, K: K, hostKey: slices.Clone(hostKey)}, nil
	}
	r, err := k.read(msgKexECDHInit)
	if err != nil {
		return nil, err
	}
	theirs := r.string()
	if err := r.done(); err != nil {
		return nil, err
	}
	if len(theirs) != mlkem.EncapsulationKeySize768+32 {
		return nil, fmt.Errorf("ssh: mlkem768x25519 client value of %d bytes, want %d", len(theirs), mlkem.EncapsulationKeySize768+32)
	}
	ek, err := mlkem.NewEncapsulationKey768(theirs[:mlkem.EncapsulationKeySize768])
	if err != nil {
		return nil, fmt.Errorf("ssh: invalid ML-KEM encapsulation key: %w", err)
	}
	pq, ct := ek.Encapsulate()
	cl, err := x25519Shared(priv, theirs[mlkem.EncapsulationKeySize768:])
	if err != nil {
		wipeBytes(pq)
		return nil, err
	}
	K := hybridSharedSecret(pq, cl)
	signer, err := k.hostSigner()
	if err != nil {
		return nil, err
	}
	ours := append(ct, priv.PublicKey().Bytes()...)
	hostKey := signer.PublicKey()
	H := k.exchangeHash(appendString(nil, hostKey), appendString(nil, theirs), appendString(nil, ours), K)
	sig, err := signer.Sign(k.t.cfg.rand(), H, k.hostKeyAlgo)
	if err != nil {
		return nil, err
	}
	if err := k.write(newBuilder(msgKexECDHReply).string(hostKey).string(ours).string(sig).b); err != nil {
		return nil, err
	}
	return &kexResult{H: H, K: K, hostKey: slices.Clone(hostKey)}, nil
}

// x25519Shared is the raw X25519 shared secret with the peer's public
// value (an all-zero result, from a low-order point, is refused).
func x25519Shared(priv *ecdh.PrivateKey, peer []byte) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(peer)
	if err != nil {
		return nil, fmt.Errorf("ssh: invalid peer X25519 value: %w", err)
	}
	secret, err := priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("ssh: key agreement failed: %w", err)
	}
	return secret, nil
}
