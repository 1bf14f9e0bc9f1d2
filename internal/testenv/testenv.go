// Package testenv finds the real peers interop tests run against (Net-SNMP,
// OpenSSH) and fails, rather than skips, when one is missing under CI.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/localhost"
	"github.com/tsnmp/tsnmp/internal/netns"
)

// Net-SNMP's tools and agents keep persistent state (snmpapp.conf,
// snmpd.conf) in one directory, /var/lib/snmp by default. Tools of test
// binaries running side by side rewrote the same file, damaging it for
// every later run, so each test process gets a directory of its own
// unless the caller chose one. It is made here, with the cert_indexes
// folder Net-SNMP's TLS code wants, because a tool that has to create
// them says so on stderr, which tests comparing output would see.
//
// tsnmp's own caches (compiled MIB indexes, USM keys, resumption state)
// are kept per test process too, for the same reason: a test must not
// read what another test, or another build of tsnmp, left in the user's
// cache directory.
//
// Go's build cache lives in the user's cache directory too, so it is
// pinned first: the go builds tests run must keep sharing it, or each
// test process would compile the standard library again.
//
// These directories are removed, in the background, by test processes
// that start after their own has ended.
func init() {
	go removeStale()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d", stalePrefix, os.Getpid()))
	if os.Getenv("SNMP_PERSISTENT_DIR") == "" {
		if err := os.MkdirAll(filepath.Join(dir, "cert_indexes"), 0o700); err == nil {
			os.Setenv("SNMP_PERSISTENT_DIR", dir)
		}
	}
	if os.Getenv("XDG_CACHE_HOME") == "" {
		pinGoCache()
		if err := os.MkdirAll(filepath.Join(dir, "cache"), 0o700); err == nil {
			os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
		}
	}
}

const stalePrefix = "tsnmp-netsnmp-"

// pinGoCache sets GOCACHE to the directory go would use by default, unless
// the environment or go's own configuration file already names one.
func pinGoCache() {
	if os.Getenv("GOCACHE") != "" {
		return
	}
	env := os.Getenv("GOENV")
	if env == "" {
		if d, err := os.UserConfigDir(); err == nil {
			env = filepath.Join(d, "go", "env")
		}
	}
	if b, err := os.ReadFile(env); err == nil {
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(strings.TrimSpace(line), "GOCACHE=") {
				return
			}
		}
	}
	if d, err := os.UserCacheDir(); err == nil {
		os.Setenv("GOCACHE", filepath.Join(d, "go-build"))
	}
}

// removeStale removes the per-process directories of test processes that
// have ended.
func removeStale() {
	if _, err := os.Stat("/proc/self"); err != nil {
		return
	}
	ents, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, ok := strings.CutPrefix(e.Name(), stalePrefix)
		if !ok || !e.IsDir() {
			continue
		}
		if n, err := strconv.Atoi(pid); err != nil || n == os.Getpid() {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", pid)); !os.IsNotExist(err) {
			continue
		}
		os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
	}
}

// InCI reports whether tests run under CI (CI=true), where a missing peer
// is a failure.
func InCI() bool { return os.Getenv("CI") == "true" }

// Need returns the path of a peer program, failing the test under CI and
// skipping it otherwise when the program is missing.
func Need(t testing.TB, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
		if _, err := os.Stat(dir + "/" + prog); err == nil {
			return dir + "/" + prog
		}
	}
	if InCI() {
		t.Fatalf("%s is required (install Debian's snmp, snmpd, openssh-server packages): %v", prog, err)
	}
	t.Skipf("%s not installed; skipping (CI=true makes this a failure)", prog)
	return ""
}

// FreePort returns a port that was free on 127.0.0.1 for both UDP and TCP
// a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := localhost.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// MIBDir returns the directory of the standard MIB modules: $TSNMP_MIBDIR,
// else shared/mibs beside the repository. When neither exists the test
// fails under CI and is skipped otherwise.
func MIBDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("TSNMP_MIBDIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "SNMPv2-MIB.txt")); err == nil {
			return d
		}
	}
	dir, _ := os.Getwd()
	for i := 0; i < 10 && dir != "/"; i++ {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			m := filepath.Join(filepath.Dir(dir), "shared", "mibs")
			if _, err := os.Stat(filepath.Join(m, "SNMPv2-MIB.txt")); err == nil {
				return m
			}
			break
		}
		dir = filepath.Dir(dir)
	}
	if InCI() {
		t.Fatal("the standard MIB modules are needed: set TSNMP_MIBDIR or keep shared/mibs beside the repository")
	}
	t.Skip("MIB modules not found (set TSNMP_MIBDIR); skipping")
	return ""
}

// NetSNMP595 is where ../shared/peers/install-netsnmp-5.9.5.sh installs
// Net-SNMP 5.9.5 (TLS 1.2 and 1.3, DTLS, SSH).
const NetSNMP595 = "/opt/netsnmp-src"

// NeedNetSNMP595 returns the path of a Net-SNMP 5.9.5 program ("sbin/snmpd",
// "bin/snmpget"), failing the test under CI and skipping it otherwise when
// it is not installed.
func NeedNetSNMP595(t testing.TB, prog string) string {
	t.Helper()
	p := filepath.Join(NetSNMP595, prog)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if InCI() {
		t.Fatalf("%s is required: install Net-SNMP 5.9.5 with ../shared/peers/install-netsnmp-5.9.5.sh (make test does)", p)
	}
	t.Skipf("%s not installed; skipping (CI=true makes this a failure)", p)
	return ""
}

// VendorMIBDirs returns the folders of the vendor MIB module collection
// (test data kept out of the repository): the subdirectories of
// $TSNMP_VENDOR_MIBDIR, else of shared/mibs-vendor beside the repository.
// When neither exists the test fails under CI and is skipped otherwise.
func VendorMIBDirs(t testing.TB) []string {
	t.Helper()
	var roots []string
	if d := os.Getenv("TSNMP_VENDOR_MIBDIR"); d != "" {
		roots = append(roots, d)
	}
	dir, _ := os.Getwd()
	for i := 0; i < 10 && dir != "/"; i++ {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			roots = append(roots, filepath.Join(filepath.Dir(dir), "shared", "mibs-vendor"))
			break
		}
		dir = filepath.Dir(dir)
	}
	roots = append(roots, "/work/shared/mibs-vendor")
	for _, r := range roots {
		ents, err := os.ReadDir(r)
		if err != nil {
			continue
		}
		var dirs []string
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(r, e.Name()))
			}
		}
		if len(dirs) > 0 {
			return dirs
		}
	}
	if InCI() {
		t.Fatal("the vendor MIB modules are needed: set TSNMP_VENDOR_MIBDIR to the mibs-vendor collection")
	}
	t.Skip("vendor MIB modules not found (set TSNMP_VENDOR_MIBDIR); skipping")
	return nil
}

// Build compiles the command at pkg (an import path, or a directory such as
// ".") with the extra go build flags into a temporary directory of the test
// and returns the binary's path.
func Build(t testing.TB, pkg string, flags ...string) string {
	t.Helper()
	name := filepath.Base(pkg)
	if pkg == "." {
		wd, _ := os.Getwd()
		name = filepath.Base(wd)
	}
	bin := filepath.Join(t.TempDir(), name)
	if !raceSupported() {
		flags = slices.DeleteFunc(slices.Clone(flags), func(f string) bool { return f == "-race" })
	}
	args := append(append([]string{"build", "-o", bin}, flags...), pkg)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// raceSupported reports whether Go's race detector runs on this
// platform. Where it does not (32-bit ARM, MIPS and x86 among others),
// tests build their programs without it.
func raceSupported() bool {
	switch runtime.GOARCH {
	case "amd64", "arm64", "loong64", "ppc64le", "riscv64", "s390x":
		return runtime.GOOS == "linux"
	}
	return false
}

// NetNS creates a network namespace named from prefix, removed when the
// test ends, and runs the ip commands of script (one a line, may be
// empty) inside it. Where namespaces are not available the test is
// skipped, or fails under CI=true.
func NetNS(t testing.TB, prefix, script string) *netns.NS {
	t.Helper()
	if err := netns.Available(); err != nil {
		if InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New(prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ns.Delete(); err != nil {
			t.Error(err)
		}
	})
	if script != "" {
		if err := ns.IPBatch(script); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}
