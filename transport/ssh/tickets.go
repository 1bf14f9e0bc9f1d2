package ssh

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	tssh "github.com/tsnmp/tsnmp/ssh"
)

// TicketKeysFile is the name of the ticket key file an agent keeps in its
// state directory when ticket keys are persisted.
const TicketKeysFile = "ssh_ticket_keys"

// FileTicketKeys keeps SSH ticket keys in a file (mode 0600, replaced
// atomically), so that resumption tickets survive an agent restart. It
// implements ssh.TicketKeyStore. The file holds secrets: whoever reads it
// can open the tickets it protects.
type FileTicketKeys struct {
	Path string
}

// LoadTicketKeys reads the keys; a missing file is no keys.
func (f *FileTicketKeys) LoadTicketKeys() ([]tssh.TicketKey, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer clear(b)
	var keys []tssh.TicketKey
	for i, line := range strings.Split(string(b), "\n") {
		w := strings.Fields(line)
		if len(w) == 0 || strings.HasPrefix(w[0], "#") {
			continue
		}
		var k tssh.TicketKey
		id, err1 := hex.DecodeString(w[0])
		if len(w) != 3 || err1 != nil || len(id) != len(k.ID) {
			return nil, fmt.Errorf("%s:%d: malformed ticket key", f.Path, i+1)
		}
		key, err2 := hex.DecodeString(w[1])
		created, err3 := strconv.ParseInt(w[2], 10, 64)
		if err2 != nil || err3 != nil || len(key) != len(k.Key) {
			return nil, fmt.Errorf("%s:%d: malformed ticket key", f.Path, i+1)
		}
		copy(k.ID[:], id)
		copy(k.Key[:], key)
		clear(key)
		k.Created = time.Unix(created, 0)
		keys = append(keys, k)
	}
	return keys, nil
}

// SaveTicketKeys replaces the file.
func (f *FileTicketKeys) SaveTicketKeys(keys []tssh.TicketKey) error {
	var b []byte
	b = append(b, "# tsnmpd SSH ticket keys: id key created (secret; mode 0600)\n"...)
	for _, k := range keys {
		b = fmt.Appendf(b, "%x %x %d\n", k.ID, k.Key, k.Created.Unix())
	}
	defer clear(b)
	dir := filepath.Dir(f.Path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.Path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path)
}
