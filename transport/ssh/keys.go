package ssh

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	tssh "github.com/tsnmp/tsnmp/ssh"
	xssh "golang.org/x/crypto/ssh"
)

// HostKeyFile is the name of the host key an agent generates in its state
// directory when none is configured.
const HostKeyFile = "ssh_host_ed25519_key"

// LoadOrCreateHostKey returns the Ed25519 host key kept in path (OpenSSH
// private key format), generating it with mode 0600 if the file does not
// exist. created tells whether it was generated now.
func LoadOrCreateHostKey(path string) (key tssh.Signer, created bool, err error) {
	key, err = tssh.LoadPrivateKeyFile(path, nil)
	if err == nil {
		return key, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, err
	}
	block, err := xssh.MarshalPrivateKey(priv, "tsnmpd host key")
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, false, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, false, err
	}
	if _, err := tmp.Write(pem.EncodeToMemory(block)); err != nil {
		tmp.Close()
		return nil, false, err
	}
	if err := tmp.Close(); err != nil {
		return nil, false, err
	}
	// Link, not rename: a concurrent start that created the key first wins
	// and both use its key.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			key, err = tssh.LoadPrivateKeyFile(path, nil)
			return key, false, err
		}
		return nil, false, err
	}
	key, err = tssh.NewSigner(priv)
	if err != nil {
		return nil, false, err
	}
	if err := writePublic(path+".pub", key); err != nil {
		return nil, true, fmt.Errorf("ssh: host key created, but writing its public key: %w", err)
	}
	return key, true, nil
}

func writePublic(path string, key tssh.Signer) error {
	pub, err := xssh.ParsePublicKey(key.PublicKey())
	if err != nil {
		return err
	}
	return os.WriteFile(path, xssh.MarshalAuthorizedKey(pub), 0o644)
}

// AuthorizedKeyLine returns key's public key as an authorized_keys or
// known_hosts key field ("ssh-ed25519 AAAA...").
func AuthorizedKeyLine(key []byte) (string, error) {
	pub, err := xssh.ParsePublicKey(key)
	if err != nil {
		return "", err
	}
	b := xssh.MarshalAuthorizedKey(pub)
	return string(b[:len(b)-1]), nil
}
