package hostres

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// TestNFSDirectives checks storageUseNFS and skipNFSInHostResources on a
// recorded mount table with NFS and CIFS mounts.
func TestNFSDirectives(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc/self"), 0o755)
	os.WriteFile(filepath.Join(root, "proc/self/mounts"), []byte(`/dev/sda1 / ext4 rw 0 0
proc /proc proc rw 0 0
server:/export /mnt/nfs nfs4 rw 0 0
//host/share /mnt/smb cifs ro 0 0
`), 0o644)
	no := false
	for _, c := range []struct {
		name    string
		cfg     Config
		nfsType string // hrStorageType of /mnt/nfs (index 33), "" when absent
	}{
		{"default", Config{}, "oid:1.3.6.1.2.1.25.2.1.10"},
		{"storageUseNFS 2", Config{StorageUseNFS: &no}, "oid:1.3.6.1.2.1.25.2.1.4"},
		{"skipNFSInHostResources", Config{SkipNFS: true}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cpu := procfs.NewCPUHistory(procfs.FS{Root: root}, time.Hour)
			defer cpu.Close()
			c.cfg.FS, c.cfg.CPU = procfs.FS{Root: root}, cpu
			var tree mib.Tree
			New(c.cfg).Register(&tree)
			got := mibtest.Walk(&tree, HostResources)
			if got["1.3.6.1.2.1.25.2.3.1.2.33"] != c.nfsType {
				t.Errorf("hrStorageType of /mnt/nfs = %q, want %q", got["1.3.6.1.2.1.25.2.3.1.2.33"], c.nfsType)
			}
			if c.nfsType != "" {
				// hrFSRemoteMountPoint is the server's export; the CIFS share is read-only.
				if want := "hex:" + hexs("server:/export"); got["1.3.6.1.2.1.25.3.8.1.3.3"] != want {
					t.Errorf("hrFSRemoteMountPoint = %s", got["1.3.6.1.2.1.25.3.8.1.3.3"])
				}
				if got["1.3.6.1.2.1.25.3.8.1.5.4"] != "2" || got["1.3.6.1.2.1.25.3.8.1.4.3"] != "oid:1.3.6.1.2.1.25.3.9.14" {
					t.Errorf("hrFSAccess/hrFSType: %s %s", got["1.3.6.1.2.1.25.3.8.1.5.4"], got["1.3.6.1.2.1.25.3.8.1.4.3"])
				}
			} else if _, ok := got["1.3.6.1.2.1.25.3.8.1.2.3"]; ok {
				t.Error("a remote file system in hrFSTable with skipNFSInHostResources")
			}
			if got["1.3.6.1.2.1.25.3.8.1.2.1"] != "hex:"+hexs("/") || got["1.3.6.1.2.1.25.3.8.1.6.1"] != "1" {
				t.Errorf("/: %s bootable %s", got["1.3.6.1.2.1.25.3.8.1.2.1"], got["1.3.6.1.2.1.25.3.8.1.6.1"])
			}
		})
	}
}
