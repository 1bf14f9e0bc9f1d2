// Package dist holds what installs tsnmp as a system service: systemd
// units, the example configuration and the Debian package's scripts.
package dist

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// TestDeb builds the Debian package with make deb and checks it: its
// control fields, conffiles and maintainer scripts (valid sh), the files
// it installs (binaries, units, configuration), and that none of them is
// a file of the snmpd package, so both install side by side.
func TestDeb(t *testing.T) {
	testenv.Need(t, "dpkg-deb")
	dir := t.TempDir()
	deb := filepath.Join(dir, "tsnmp.deb")
	cmd := exec.Command("make", "-C", "..", "deb", "DEBROOT="+filepath.Join(dir, "root"), "DEB="+deb, "BIN="+filepath.Join(dir, "bin"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make deb: %v\n%s", err, out)
	}
	info, err := exec.Command("dpkg-deb", "--info", deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb --info: %v\n%s", err, info)
	}
	for _, want := range []string{"Package: tsnmp", "Architecture: ", "Version: 0.0+git", "conffiles", "postinst", "postrm", "prerm"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("--info lacks %q:\n%s", want, info)
		}
	}
	list, err := exec.Command("dpkg-deb", "--contents", deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb --contents: %v\n%s", err, list)
	}
	files := map[string]string{}
	for _, l := range strings.Split(string(list), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		files[strings.TrimPrefix(f[5], ".")] = f[0] + " " + f[1]
	}
	for path, mode := range map[string]string{
		"/usr/sbin/tsnmpd":                            "-rwxr-xr-x root/root",
		"/usr/bin/tsnmp":                              "-rwxr-xr-x root/root",
		"/usr/lib/systemd/system/tsnmpd.service":      "-rw-r--r-- root/root",
		"/usr/lib/systemd/system/tsnmp-trapd.service": "-rw-r--r-- root/root",
		"/etc/tsnmp/tsnmpd.yaml":                      "-rw-r--r-- root/root",
		"/etc/tsnmp/snmptrapd.conf":                   "-rw-r--r-- root/root",
		"/usr/share/doc/tsnmp/migration.md":           "-rw-r--r-- root/root",
		"/usr/share/man/man8/tsnmpd.8.gz":             "-rw-r--r-- root/root",
		"/usr/share/man/man5/tsnmpd.conf.5.gz":        "-rw-r--r-- root/root",
		"/usr/share/man/man8/tsnmp-trapd.8.gz":        "-rw-r--r-- root/root",
	} {
		if got := files[path]; got != mode {
			t.Errorf("%s: %q, want %q", path, got, mode)
		}
	}
	// Maintainer scripts and conffiles.
	ctl := filepath.Join(dir, "control")
	if out, err := exec.Command("dpkg-deb", "--control", deb, ctl).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --control: %v\n%s", err, out)
	}
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		if out, err := exec.Command("sh", "-n", filepath.Join(ctl, s)).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", s, err, out)
		}
	}
	conf, _ := os.ReadFile(filepath.Join(ctl, "conffiles"))
	for _, l := range strings.Fields(string(conf)) {
		if _, ok := files[l]; !ok {
			t.Errorf("conffile %s not in the package", l)
		}
	}
	// No file of the snmpd package: its list where it is installed, else
	// the paths Debian's snmpd package ships.
	snmpd := []string{"/usr/sbin/snmpd", "/etc/snmp/snmpd.conf", "/usr/lib/systemd/system/snmpd.service", "/lib/systemd/system/snmpd.service", "/etc/default/snmpd", "/etc/init.d/snmpd"}
	if f, err := os.Open("/var/lib/dpkg/info/snmpd.list"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			snmpd = append(snmpd, sc.Text())
		}
		f.Close()
	}
	for _, p := range snmpd {
		if m, ok := files[p]; ok && !strings.HasPrefix(m, "d") {
			t.Errorf("%s is also a file of the snmpd package", p)
		}
	}
}
