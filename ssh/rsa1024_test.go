package ssh

import (
	"crypto/rand"
	"crypto/rsa"
	"testing"
)

// TestRSA1024HostKey: a 1,024-bit RSA host key is refused unless the client
// asks for InsecureRSA1024 (key-length measurements).
func TestRSA1024HostKey(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := NewSigner(k)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("exchange hash")
	for _, algo := range []string{KeyAlgoRSASHA256, KeyAlgoRSASHA512} {
		sig, err := signer.Sign(rand.Reader, data, algo)
		if err != nil {
			t.Fatal(err)
		}
		pub := signer.PublicKey()
		if err := verifySignature(pub, algo, data, sig); err == nil {
			t.Errorf("%s: 1024-bit key accepted by default", algo)
		}
		if err := verifySignatureMin(pub, algo, data, sig, 1024); err != nil {
			t.Errorf("%s: 1024-bit key refused with InsecureRSA1024: %v", algo, err)
		}
	}
}
