// Package mibtest runs Net-SNMP's snmpd beside tsnmp's MIB handlers and
// compares their walks, for the host MIBs' interoperability tests.
package mibtest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// Canon renders a value the way snmpwalk -On -Ox output is read by
// ParseWalk, so both sides compare as strings.
func Canon(v snmp.Value) string {
	switch v.Type {
	case snmp.OctetString:
		return "hex:" + hex.EncodeToString(v.Bytes)
	case snmp.Integer:
		return strconv.FormatInt(v.Int(), 10)
	case snmp.ObjectIdentifier:
		return "oid:" + v.OID.String()
	case snmp.Opaque:
		return "opaque:" + hex.EncodeToString(v.Bytes)
	case snmp.IPAddress:
		if len(v.Bytes) == 4 {
			return fmt.Sprintf("ip:%d.%d.%d.%d", v.Bytes[0], v.Bytes[1], v.Bytes[2], v.Bytes[3])
		}
		return "ip:" + hex.EncodeToString(v.Bytes)
	case snmp.NoSuchInstance, snmp.NoSuchObject, snmp.EndOfMibView:
		return v.Type.String()
	}
	return strconv.FormatUint(v.Num, 10)
}

// WriteFile writes data to name below root, making its directories: a
// file of a recorded /proc or /sys tree.
func WriteFile(t testing.TB, root, name, data string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Walk returns every instance of tree under base as OID -> Canon value.
func Walk(tree *mib.Tree, base snmp.OID) map[string]string {
	out := map[string]string{}
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	cur := base
	for range 1_000_000 {
		vb, ok := tree.Next(r, cur)
		if !ok || !vb.Name.HasPrefix(base) {
			break
		}
		if vb.Name.Compare(cur) <= 0 {
			// A walk that does not go forward never ends, or repeats.
			panic(fmt.Sprintf("mibtest.Walk: %v follows %v: the tree's Next does not go forward", vb.Name, cur))
		}
		cur = vb.Name.Clone()
		out[cur.String()] = Canon(vb.Value)
	}
	return out
}

var walkLine = regexp.MustCompile(`^(\.[0-9.]+) = (?:([A-Za-z0-9-]+): )?(.*)$`)

// ParseWalk reads snmpwalk -On -Ox -Oe output into OID -> canonical value.
func ParseWalk(t testing.TB, out []byte) map[string]string {
	t.Helper()
	got := map[string]string{}
	var last string
	for _, line := range strings.Split(string(out), "\n") {
		m := walkLine.FindStringSubmatch(line)
		if m == nil {
			if last != "" && strings.TrimSpace(line) != "" && strings.HasPrefix(got[last], "hex:") {
				got[last] += strings.ToLower(strings.ReplaceAll(strings.TrimSpace(line), " ", ""))
			}
			continue
		}
		o, typ, val := strings.TrimPrefix(m[1], "."), m[2], strings.TrimSpace(m[3])
		switch typ {
		case "Hex-STRING":
			got[o] = "hex:" + strings.ToLower(strings.ReplaceAll(val, " ", ""))
		case "STRING":
			s, err := strconv.Unquote(val)
			if err != nil {
				s = strings.Trim(val, `"`)
			}
			got[o] = "hex:" + hex.EncodeToString([]byte(s))
		case "IpAddress":
			got[o] = "ip:" + val
		case "OID":
			got[o] = "oid:" + strings.TrimPrefix(val, ".")
		case "Timeticks":
			if i := strings.Index(val, "("); i >= 0 {
				val = val[i+1 : strings.Index(val, ")")]
			}
			got[o] = val
		case "Opaque":
			got[o] = "opaque-text:" + val
		case "":
			got[o] = "hex:"
			if val != `""` {
				got[o] = val
			}
		default:
			got[o] = val
		}
		last = o
	}
	return got
}

// Snmpd is a running Net-SNMP snmpd.
type Snmpd struct {
	Addr string
	Log  *testenv.LogBuffer
	ns   []string // command prefix to run tools in its network namespace
}

// StartSnmpd starts snmpd with conf (rocommunity public is added) in the
// current namespaces, or in network namespace netns when not empty, and
// waits until it answers. It is killed when the test ends.
func StartSnmpd(t testing.TB, netns, conf string) *Snmpd {
	t.Helper()
	var prefix []string
	if netns != "" {
		prefix = []string{"ip", "netns", "exec", netns}
	}
	return startSnmpd(t, prefix, conf)
}

// StartSnmpdNetOnly starts snmpd as StartSnmpd does in network namespace
// netns, but entering only that namespace (nsenter --net): "ip netns
// exec" also gives it a mount namespace of its own with /sys mounted
// again, whose mount table is not the test's.
func StartSnmpdNetOnly(t testing.TB, netns, conf string) *Snmpd {
	t.Helper()
	nsenter := testenv.Need(t, "nsenter")
	return startSnmpd(t, []string{nsenter, "--net=/run/netns/" + netns}, conf)
}

func startSnmpd(t testing.TB, prefix []string, conf string) *Snmpd {
	t.Helper()
	bin := testenv.Need(t, "snmpd")
	testenv.Need(t, "snmpbulkwalk")
	dir := t.TempDir()
	file := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(file, []byte("rocommunity public 127.0.0.1\ndontLogTCPWrappersConnects yes\n"+conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var addr string
	if prefix != nil {
		addr = "127.0.0.1:16161"
	} else {
		addr = "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	}
	s := &Snmpd{Addr: addr, Log: new(testenv.LogBuffer), ns: prefix}
	args := append(append([]string{}, prefix...), bin, "-f", "-Le", "-I", "-smux", "-C", "-c", file,
		"-p", filepath.Join(dir, "snmpd.pid"), "udp:"+addr)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS=/nonexistent")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for range 100 {
		if _, err := s.tool("snmpget", "-t", "0.2", "-r", "0", "1.3.6.1.2.1.1.3.0"); err == nil {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("snmpd did not answer on %s; its log:\n%s", addr, s.Log)
	return nil
}

func (s *Snmpd) tool(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	full := append(append([]string{}, s.ns...), name, "-v2c", "-c", "public", "-On", "-Ox", "-Oe", "-m", "")
	full = append(full, reorder(args, s.Addr)...)
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS=/nonexistent")
	return cmd.Output()
}

// reorder puts the agent address after the options (those starting with
// '-' and their values) and before the OIDs.
func reorder(args []string, addr string) []string {
	var opts, oids []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			opts = append(opts, args[i])
			if i+1 < len(args) && len(args[i]) == 2 {
				opts = append(opts, args[i+1])
				i++
			}
			continue
		}
		oids = append(oids, args[i])
	}
	return append(append(opts, addr), oids...)
}

// Walk returns snmpd's instances under base.
func (s *Snmpd) Walk(t testing.TB, base string) map[string]string {
	t.Helper()
	out, err := s.tool("snmpbulkwalk", "-t", "5", "-r", "1", "-Cr50", base)
	if err != nil {
		t.Fatalf("snmpbulkwalk %s: %v; snmpd log:\n%s", base, err, s.Log)
	}
	return ParseWalk(t, out)
}

// InMountNS re-runs the calling test in a private mount namespace (so that
// the file systems it mounts vanish with it) and reports whether the
// caller is already inside it. When it returns false, the caller returns:
// the child's result has been reported.
func InMountNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv("TSNMP_TEST_MNTNS") == t.Name() {
		return true
	}
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatal("needs root for a mount namespace")
		}
		t.Skip("needs root for a mount namespace")
	}
	unshare := testenv.Need(t, "unshare")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", exe,
		"-test.run", "^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TSNMP_TEST_MNTNS="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("in a private mount namespace:\n%s", out)
	if err != nil {
		t.Fatalf("%s in a mount namespace: %v", t.Name(), err)
	}
	if bytes.Contains(out, []byte("--- SKIP")) {
		t.Skip("skipped inside the mount namespace")
	}
	return false
}

// Mount mounts a file system of type typ with options at a new directory
// and returns it. Only for use inside InMountNS.
func Mount(t testing.TB, typ, source, opts string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tsnmp-mnt-")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-t", typ}
	if opts != "" {
		args = append(args, "-o", opts)
	}
	if out, err := exec.Command("mount", append(args, source, dir)...).CombinedOutput(); err != nil {
		t.Fatalf("mount %s: %v: %s", dir, err, out)
	}
	t.Cleanup(func() {
		exec.Command("umount", dir).Run()
		os.Remove(dir)
	})
	return dir
}

// Num parses a canonical integer value.
func Num(s string) (float64, error) {
	return strconv.ParseFloat(s, 64)
}

// Within reports whether two canonical numeric values differ by at most
// tol (absolute) or frac of the larger (relative).
func Within(a, b string, tol, frac float64) bool {
	x, err1 := Num(a)
	y, err2 := Num(b)
	if err1 != nil || err2 != nil {
		return false
	}
	d := x - y
	if d < 0 {
		d = -d
	}
	return d <= tol || d <= frac*max(x, y, -x, -y)
}

// Text decodes a canonical OCTET STRING.
func Text(s string) string {
	b, err := hex.DecodeString(strings.TrimPrefix(s, "hex:"))
	if err != nil {
		return fmt.Sprintf("(%s)", s)
	}
	return string(b)
}

// Rule says how one column compares between tsnmp and Net-SNMP.
type Rule struct {
	Tol, Frac float64 // numeric tolerance (absolute, relative); both 0: equal
	Skip      string  // why the column is not compared
	// OursOnly says why Net-SNMP does not serve the column and where the
	// test checks tsnmp's values instead; TheirsOnly says why tsnmp does
	// not serve it. The instances must then be on that side only.
	OursOnly, TheirsOnly string
}

// Result is what Compare compared: the instances present on both sides
// whose values were checked (not skipped).
type Result struct {
	compared map[string]bool
}

// N returns the number of values compared.
func (r *Result) N() int { return len(r.compared) }

// Compared reports whether instance k was compared.
func (r *Result) Compared(k string) bool { return r.compared[k] }

// Rows returns the distinct indexes under table entry prefix entry (an
// entry OID followed by '.') with at least one value compared.
func (r *Result) Rows(entry string) map[string]bool {
	rows := map[string]bool{}
	for k := range r.compared {
		if rest, ok := strings.CutPrefix(k, entry); ok {
			_, idx, _ := strings.Cut(rest, ".")
			rows[idx] = true
		}
	}
	return rows
}

// RequireRows fails the test unless each table entry prefix (name: entry,
// alternately) has at least min rows compared on both sides.
func (r *Result) RequireRows(t testing.TB, min int, tables ...string) {
	t.Helper()
	for i := 0; i+1 < len(tables); i += 2 {
		if n := len(r.Rows(tables[i+1])); n < min {
			t.Errorf("%s (%s): %d rows compared on both sides, want at least %d", tables[i], tables[i+1], n, min)
		}
	}
}

// Require fails the test unless each instance in keys was compared (is
// present on both sides with a rule that is not Skip).
func (r *Result) Require(t testing.TB, what string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if !r.compared[k] {
			t.Errorf("%s: %s was not compared on both sides", what, k)
		}
	}
}

// Compare checks that both walks have the same instances and that values
// agree by the rule of the longest rule prefix each instance starts with
// (rule keys are prefixes ending in '.' or ':', or whole instance keys). An
// instance no rule covers fails the test: every column a walk returns
// needs a rule, a comparison or a Skip with its reason.
func Compare(t *testing.T, ours, theirs map[string]string, rules map[string]Rule) *Result {
	t.Helper()
	keys := map[string]bool{}
	for k := range ours {
		keys[k] = true
	}
	for k := range theirs {
		keys[k] = true
	}
	sorted := slices.Sorted(maps.Keys(keys))
	res := &Result{compared: map[string]bool{}}
	var unruled []string
	for _, k := range sorted {
		var rl Rule
		col, found := "", false
		for p, r := range rules {
			if (p == k || (strings.HasSuffix(p, ".") || strings.HasSuffix(p, ":")) && strings.HasPrefix(k, p)) && (!found || len(p) > len(col)) {
				col, rl, found = p, r, true
			}
		}
		if !found {
			unruled = append(unruled, k)
			continue
		}
		o, okO := ours[k]
		th, okT := theirs[k]
		switch {
		case rl.OursOnly != "" || rl.TheirsOnly != "":
			if okO == (rl.OursOnly == "") || okT == (rl.TheirsOnly == "") {
				t.Errorf("%s: tsnmp %q, Net-SNMP %q; the test expects it from one side only (%s%s)", k, o, th, rl.OursOnly, rl.TheirsOnly)
			}
			continue
		case !okO:
			t.Errorf("%s: Net-SNMP serves %s, tsnmp nothing", k, th)
			continue
		case !okT:
			t.Errorf("%s: tsnmp serves %s, Net-SNMP nothing", k, o)
			continue
		case rl.Skip != "":
			continue
		}
		res.compared[k] = true
		if rl.Tol == 0 && rl.Frac == 0 {
			if o != th {
				t.Errorf("%s: tsnmp %q, Net-SNMP %q", k, o, th)
			}
		} else if !Within(o, th, rl.Tol, rl.Frac) {
			t.Errorf("%s: tsnmp %s, Net-SNMP %s (tolerance %g or %g%%)", k, o, th, rl.Tol, rl.Frac*100)
		}
	}
	if len(unruled) > 0 {
		const show = 40
		t.Errorf("%d instances have no comparison rule (each column needs one: equal, a tolerance or a Skip with its reason):\n%s%s",
			len(unruled), strings.Join(unruled[:min(len(unruled), show)], "\n"), more(len(unruled)-show))
	}
	return res
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("\n... and %d more", n)
}

// Rekey replaces the index of the table rows under prefix (an entry OID
// followed by '.') with their column 2 value, so that rows compare by it.
func Rekey(m map[string]string, prefix string) {
	name := map[string]string{}
	for k, v := range m {
		if idx, ok := strings.CutPrefix(k, prefix+"2."); ok {
			name[idx] = Text(v)
		}
	}
	moved := map[string]string{}
	for k, v := range m {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		col, idx, _ := strings.Cut(rest, ".")
		delete(m, k)
		if col != "1" { // the index column itself
			moved[prefix+col+"."+name[idx]] = v
		}
	}
	maps.Copy(m, moved)
}

// DropRows deletes, from both walks, the instances under each table entry
// prefix (ending in '.') whose index holds no port listed in keep: the
// sockets of the agents and walks themselves differ between the two sides.
// An index's ports are taken as every sub-identifier after an address.
func DropRows(ours, theirs map[string]string, keep map[string]bool, prefixes ...string) {
	for _, m := range []map[string]string{ours, theirs} {
		for k := range m {
			for _, p := range prefixes {
				rest, ok := strings.CutPrefix(k, p)
				if !ok {
					continue
				}
				_, idx, _ := strings.Cut(rest, ".")
				found := false
				for s := range strings.SplitSeq(idx, ".") {
					if keep[s] {
						found = true
					}
				}
				if !found {
					delete(m, k)
				}
			}
		}
	}
}

// MountLoop makes an ext4 file system of sizeMB in a file, mounts it
// through a loop device at a new directory and returns the directory. Only
// for use inside InMountNS (the loop device is released when the mount
// namespace ends).
func MountLoop(t testing.TB, sizeMB int) string {
	t.Helper()
	mkfs := testenv.Need(t, "mkfs.ext4")
	img := filepath.Join(t.TempDir(), "fs.img")
	f, err := os.Create(img)
	if err == nil {
		err = f.Truncate(int64(sizeMB) << 20)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-F", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	return Mount(t, "ext4", img, "loop")
}

// Float reads a canonical value that carries a real number: a decimal
// OCTET STRING ("hex:" of "0.52"), an Opaque float as tsnmp encodes it
// (UCD's 9f 78 04 and an IEEE 754 single) or as snmpwalk prints it
// ("opaque-text:Float: 0.52"), or an integer.
func Float(s string) (float64, bool) {
	switch {
	case strings.HasPrefix(s, "hex:"):
		f, err := strconv.ParseFloat(strings.TrimSpace(Text(s)), 64)
		return f, err == nil
	case strings.HasPrefix(s, "opaque:9f7804") && len(s) == len("opaque:9f7804")+8:
		b, err := hex.DecodeString(s[len("opaque:9f7804"):])
		if err != nil {
			return 0, false
		}
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b))), true
	case strings.HasPrefix(s, "opaque-text:Float:"):
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(s, "opaque-text:Float:")), 64)
		return f, err == nil
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}
