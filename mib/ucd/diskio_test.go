package ucd

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
)

// TestInteropDiskIOSelection compares diskIOTable's devices and their
// numbers with Net-SNMP snmpd's under the directives that choose them:
// diskio_exclude_loop and diskio_exclude_ram, which leave the devices
// whose names start with loop and ram out; and diskio lines, which list
// their devices alone, in their order, each once, under the name the
// line gives (here a device file of the test's own, made with mknod(2)
// for a device the kernel lists), a line naming no block device left out
// (and every device listed when no line names one).
func TestInteropDiskIOSelection(t *testing.T) {
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatal("needs root for mknod(2)")
		}
		t.Skip("needs root for mknod(2)")
	}
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := procfs.ParseDiskstats(b)
	// A device with a node under /dev, named in a line by its bare name,
	// and the last one the kernel lists, by a node of the test's.
	i := slices.IndexFunc(ds, func(d procfs.DiskStat) bool {
		var st unix.Stat_t
		return unix.Stat("/dev/"+d.Name, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK
	})
	if i < 0 || len(ds) < 2 {
		t.Fatalf("want two block devices, one with a node in /dev: /proc/diskstats lists %d", len(ds))
	}
	last := ds[len(ds)-1]
	node := filepath.Join(t.TempDir(), "tsnmp-disk")
	if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(uint32(last.Major), uint32(last.Minor)))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, conf string
		cfg        Config
		want       []string // the devices, in order; nil: not checked
	}{
		{"exclude loop and ram", "diskio_exclude_loop yes\ndiskio_exclude_ram yes\n",
			Config{DiskIOExclude: []string{"loop", "ram"}}, nil},
		{"diskio lines", fmt.Sprintf("diskio %s\ndiskio /nonexistent-tsnmp\ndiskio %s\ndiskio /dev/%s\n", ds[i].Name, node, ds[i].Name),
			Config{DiskIO: []string{ds[i].Name, "/nonexistent-tsnmp", node, "/dev/" + ds[i].Name}},
			[]string{ds[i].Name, "tsnmp-disk"}},
		// No line names a block device: snmpd keeps none and lists every
		// device, as without diskio lines.
		{"no diskio line a device", "diskio /nonexistent-tsnmp\n",
			Config{DiskIO: []string{"/nonexistent-tsnmp"}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			snmpd := mibtest.StartSnmpd(t, "", c.conf)
			c.cfg.CacheTTL = time.Millisecond
			m := New(c.cfg)
			defer m.Close()
			var tree mib.Tree
			m.Register(&tree)
			const entry = "1.3.6.1.4.1.2021.13.15.1.1"
			// snmpd lists every device until the reading it took as it
			// started, before it read its configuration, is a second old.
			var ours, theirs map[string]string
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(300 * time.Millisecond) {
				ours = textColumn(t, "tsnmp", mibtest.Walk(&tree, DiskIOEntry), entry, 2, 1)
				theirs = textColumn(t, "Net-SNMP", snmpd.Walk(t, entry), entry, 2, 1)
				if fmt.Sprint(ours) == fmt.Sprint(theirs) || time.Now().After(deadline) {
					break
				}
			}
			t.Logf("tsnmp: %s", showRows(ours))
			if fmt.Sprint(ours) != fmt.Sprint(theirs) {
				t.Errorf("diskIOTable devices differ\n   tsnmp: %s\nNet-SNMP: %s\nsnmpd's log:\n%s", showRows(ours), showRows(theirs), snmpd.Log)
			}
			for _, r := range ours {
				for _, p := range c.cfg.DiskIOExclude {
					if strings.HasPrefix(r, p) {
						t.Errorf("%s listed, with %s devices excluded", r, p)
					}
				}
			}
			if c.want != nil {
				var got []string
				for k := 1; k <= len(ours); k++ {
					got = append(got, ours[fmt.Sprint(k)])
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("devices %q, want %q", got, c.want)
				}
			}
		})
	}
}
