package manager

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"github.com/tsnmp/tsnmp/security/usm"
)

// KeyCache keeps a USM user's keys localized to each agent's engine in
// files, so that a later process with the same user, protocols and
// passwords talking to the same engine derives no key from a password
// (RFC 3414 A.2: a million octets hashed per password, most of a one-shot
// v3 command's own work).
//
// Each file (mode 0600 in a 0700 directory) holds the localized keys of
// one engine ID, user name and pair of protocols, and a check value: a
// SHA-256 of a random salt, those names and the passwords. An entry is
// used only when the passwords given now produce the same check value, so
// a changed or mistyped password is never replaced by a cached key.
//
// The trade-off: whoever can read the file has the localized keys, which
// authenticate and decrypt as the user towards that one engine (as a
// Net-SNMP agent's persistent file does), and can test guesses of the
// passwords against the check value at the cost of one SHA-256 each
// rather than the million-octet hash. The command's --no-key-cache option
// turns the cache off; a file that cannot be read or parsed counts as
// absent.
type KeyCache struct {
	Dir string
}

const keyFileMagic = "TSNMPUK1"

func (k *KeyCache) path(engineID []byte, user string, auth usm.AuthProtocol, priv usm.PrivProtocol) string {
	h := sha256.New()
	h.Write([]byte("tsnmp usm keys\x00"))
	for _, f := range [][]byte{engineID, []byte(user), []byte(auth.String()), []byte(priv.String())} {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(f))))
		h.Write(f)
	}
	return filepath.Join(k.Dir, "usm-keys-"+hex.EncodeToString(h.Sum(nil)[:12]))
}

// keyCheck is the check value of an entry.
func keyCheck(salt, engineID []byte, user string, auth usm.AuthProtocol, priv usm.PrivProtocol, authPW, privPW string) []byte {
	h := sha256.New()
	h.Write([]byte(keyFileMagic))
	for _, f := range [][]byte{salt, engineID, []byte(user), []byte(auth.String()), []byte(priv.String()), []byte(authPW), []byte(privPW)} {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(f))))
		h.Write(f)
	}
	return h.Sum(nil)
}

var errKeyFile = errors.New("manager: damaged USM key cache file")

// get returns the cached keys for the user towards engineID, if the
// passwords match those they were made from.
func (k *KeyCache) get(engineID []byte, user string, auth usm.AuthProtocol, priv usm.PrivProtocol, authPW, privPW string) (authKey, privKey []byte, ok bool) {
	b, err := os.ReadFile(k.path(engineID, user, auth, priv))
	if err != nil {
		return nil, nil, false
	}
	salt, check, authKey, privKey, err := decodeKeyFile(b)
	if err != nil {
		return nil, nil, false
	}
	want := keyCheck(salt, engineID, user, auth, priv, authPW, privPW)
	if subtle.ConstantTimeCompare(check, want) != 1 || len(authKey) != auth.DigestLen() ||
		(priv != usm.PrivNone && len(privKey) != priv.KeyLen()) || (priv == usm.PrivNone && len(privKey) != 0) {
		return nil, nil, false
	}
	return authKey, privKey, true
}

func decodeKeyFile(b []byte) (salt, check, authKey, privKey []byte, err error) {
	if !bytes.HasPrefix(b, []byte(keyFileMagic)) || len(b) < len(keyFileMagic)+16+32+2 {
		return nil, nil, nil, nil, errKeyFile
	}
	b = b[len(keyFileMagic):]
	salt, check, b = b[:16], b[16:48], b[48:]
	n := int(b[0])
	if len(b) < 1+n+1 {
		return nil, nil, nil, nil, errKeyFile
	}
	authKey, b = b[1:1+n], b[1+n:]
	m := int(b[0])
	if len(b) != 1+m {
		return nil, nil, nil, nil, errKeyFile
	}
	return salt, check, authKey, b[1:], nil
}

// remove deletes an entry.
func (k *KeyCache) remove(engineID []byte, user string, auth usm.AuthProtocol, priv usm.PrivProtocol) {
	os.Remove(k.path(engineID, user, auth, priv))
}

// put stores the keys; failures are ignored (the cache only saves work).
func (k *KeyCache) put(engineID []byte, user string, auth usm.AuthProtocol, priv usm.PrivProtocol, authPW, privPW string, authKey, privKey []byte) {
	if len(authKey) > 255 || len(privKey) > 255 {
		return
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return
	}
	b := append([]byte(keyFileMagic), salt...)
	b = append(b, keyCheck(salt, engineID, user, auth, priv, authPW, privPW)...)
	b = append(append(b, byte(len(authKey))), authKey...)
	b = append(append(b, byte(len(privKey))), privKey...)
	writeCacheFile(k.path(engineID, user, auth, priv), b)
}

// writeCacheFile replaces file with b (mode 0600, in a directory made
// 0700 if missing) through a temporary file renamed over it, so that
// another process reads the old content or the new, never a part.
// Failures are ignored: the command's cache files only save work.
func writeCacheFile(file string, b []byte) {
	dir := filepath.Dir(file)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(file)+"-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	if tmp.Chmod(0o600) != nil {
		tmp.Close()
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return
	}
	_ = os.Rename(tmp.Name(), file)
}
