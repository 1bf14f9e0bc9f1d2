package generator

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tsnmp/tsnmp/exporter"
	"github.com/tsnmp/tsnmp/exporter/internal/exptest"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/mib/smiload"
)

var (
	setOnce sync.Once
	mibSet  *smi.Set
)

// standardSet loads every module of the standard MIB directory.
func standardSet(t *testing.T) *smi.Set {
	dir := testenv.MIBDir(t)
	setOnce.Do(func() {
		mibSet, _ = smiload.Load(smiload.Request{Dirs: []string{dir}, Modules: []string{"ALL"}, Compiled: smi.Compiled})
	})
	return mibSet
}

func generate(t *testing.T, file string, opt Options) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(file, b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Generate(c, standardSet(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// modules parses an snmp.yml of either format into module name -> content.
func modules(t *testing.T, b []byte) map[string]map[string]any {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if m, ok := doc["modules"].(map[string]any); ok {
		doc = m
	}
	out := map[string]map[string]any{}
	for k, v := range doc {
		out[k], _ = v.(map[string]any)
	}
	return out
}

// diffModule reports how two generated modules differ, metric by metric.
func diffModule(t *testing.T, name string, want, got map[string]any) {
	t.Helper()
	for k := range want {
		if k != "metrics" && !reflect.DeepEqual(want[k], got[k]) {
			t.Errorf("module %s: %s: snmp_exporter's generator %v, tsnmp %v", name, k, want[k], got[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("module %s: extra key %s: %v", name, k, got[k])
		}
	}
	index := func(v any) map[string]any {
		m := map[string]any{}
		l, _ := v.([]any)
		for _, x := range l {
			mt, _ := x.(map[string]any)
			m[fmt.Sprint(mt["name"], " ", mt["oid"])] = mt
		}
		return m
	}
	a, b := index(want["metrics"]), index(got["metrics"])
	if len(a) == 0 {
		t.Errorf("module %s: snmp_exporter's generator made no metric", name)
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			t.Errorf("module %s: missing metric %s", name, k)
		} else if !reflect.DeepEqual(va, vb) {
			t.Errorf("module %s: metric %s:\n snmp_exporter's generator %v\n tsnmp                     %v", name, k, va, vb)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("module %s: extra metric %s", name, k)
		}
	}
}

// runDebianGenerator runs Debian's prometheus-snmp-generator (snmp_exporter
// 0.21, on Net-SNMP's MIB parser) on gen with the MIB directories dirs
// and returns the snmp.yml it writes.
func runDebianGenerator(t *testing.T, gen []byte, dirs []string) []byte {
	t.Helper()
	bin := testenv.Need(t, "prometheus-snmp-generator")
	dir := t.TempDir()
	// It reads generator.yml from its working directory.
	if err := os.WriteFile(filepath.Join(dir, "generator.yml"), gen, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "generate")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MIBDIRS="+strings.Join(dirs, ":"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("prometheus-snmp-generator: %v\n%s", err, out)
	}
	ref, err := os.ReadFile(filepath.Join(dir, "snmp.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// compareGenerated compares two snmp.yml module by module and metric by
// metric.
func compareGenerated(t *testing.T, ref, ours []byte, minModules int) {
	t.Helper()
	want, got := modules(t, ref), modules(t, ours)
	if len(want) < minModules {
		t.Fatalf("snmp_exporter's generator wrote %d modules", len(want))
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	metrics := 0
	for _, n := range names {
		if got[n] == nil {
			t.Errorf("module %s missing", n)
			continue
		}
		diffModule(t, n, want[n], got[n])
		l, _ := want[n]["metrics"].([]any)
		metrics += len(l)
	}
	if len(got) != len(want) {
		t.Errorf("%d modules, snmp_exporter's generator %d", len(got), len(want))
	}
	t.Logf("%d modules, %d metrics compared", len(names), metrics)
}

// TestSNMPExporterGenerator runs Debian's prometheus-snmp-generator and
// tsnmp's generator on one generator.yml and the standard MIB modules,
// and compares the snmp.yml they write module by module and metric by
// metric.
func TestSNMPExporterGenerator(t *testing.T) {
	src := "testdata/generator-0.21.yml"
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ref := runDebianGenerator(t, b, []string{testenv.MIBDir(t)})
	compareGenerated(t, ref, generate(t, src, Options{}), 10)
}

// debianGeneratorYML is the generator.yml Debian's package ships.
const debianGeneratorYML = "/usr/share/doc/prometheus-snmp-exporter/examples/generator.yml"

// TestSNMPExporterGeneratorVendor does the same with the vendor MIB
// modules kept beside the repository and the modules of the generator.yml
// Debian's package ships whose MIBs are among them (APC, Arista, Cisco's
// WLC, MikroTik, the Printer MIB).
func TestSNMPExporterGeneratorVendor(t *testing.T) {
	testenv.Need(t, "prometheus-snmp-generator")
	// The vendor folders these modules need (MikroTik's walks
	// UCD-SNMP-MIB), and of the large Cisco and RFC folders only the
	// files they need: both generators read every module of their
	// directories.
	dirs := []string{testenv.MIBDir(t)}
	picked := t.TempDir()
	byName := map[string]string{}
	for _, d := range testenv.VendorMIBDirs(t) {
		byName[filepath.Base(d)] = d
	}
	for _, n := range []string{"apc", "arista", "mikrotik", "net-snmp", "cisco", "rfc"} {
		if byName[n] == "" {
			t.Fatalf("vendor MIB folder %s not found", n)
		}
	}
	dirs = append(dirs, byName["apc"], byName["arista"], byName["mikrotik"], byName["net-snmp"], picked)
	for _, f := range []string{"cisco/AIRESPACE-REF-MIB.my", "cisco/AIRESPACE-WIRELESS-MIB.my",
		"rfc/Printer-MIB.txt", "rfc/IANA-PRINTER-MIB.txt", "rfc/IANA-CHARSET-MIB.txt"} {
		dir, name := filepath.Split(f)
		if err := os.Symlink(filepath.Join(byName[filepath.Clean(dir)], name), filepath.Join(picked, name)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(debianGeneratorYML)
	if err != nil {
		t.Fatalf("%v (installed with prometheus-snmp-exporter)", err)
	}
	var doc struct {
		Modules map[string]any `yaml:"modules"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keep := map[string]any{}
	for _, n := range []string{"if_mib", "cisco_wlc", "apcups", "arista_sw", "mikrotik", "printer_mib"} {
		if doc.Modules[n] == nil {
			t.Fatalf("%s has no module %s", debianGeneratorYML, n)
		}
		keep[n] = doc.Modules[n]
	}
	gen, err := yaml.Marshal(map[string]any{"modules": keep})
	if err != nil {
		t.Fatal(err)
	}
	ref := runDebianGenerator(t, gen, dirs)
	set, _ := smiload.Load(smiload.Request{Dirs: dirs, Modules: []string{"ALL"}, Compiled: smi.Compiled})
	c, err := Load("generator.yml", gen)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Generate(c, set, Options{Legacy: true})
	if err != nil {
		t.Fatal(err)
	}
	compareGenerated(t, ref, ours, 6)
}

func metric(t *testing.T, mod map[string]any, name string) map[string]any {
	t.Helper()
	l, _ := mod["metrics"].([]any)
	for _, x := range l {
		if m, _ := x.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// TestCurrentRules checks what the current generator adds to 0.21's:
// auths, Module::name, static and dynamic filters, override of name,
// help, scale, offset, datetime_pattern and display_hint (@mib from the
// MIB), and enumerated indexes as EnumAsInfo.
func TestCurrentRules(t *testing.T) {
	out := generate(t, "testdata/generator.yml", Options{})
	var doc struct {
		Auths map[string]map[string]any `yaml:"auths"`
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if a := doc.Auths["public_v1"]; a["community"] != "public" || a["version"] != 1 || a["security_level"] != "noAuthNoPriv" {
		t.Errorf("auth public_v1 = %v, want snmp_exporter's defaults with version 1", a)
	}
	if a := doc.Auths["v3user"]; a["username"] != "alice" || a["priv_protocol"] != "AES" || a["version"] != 3 {
		t.Errorf("auth v3user = %v", a)
	}
	mods := modules(t, out)
	ifm := mods["if_mib"]
	if ifm["max_repetitions"] != 10 || ifm["retries"] != 2 || ifm["timeout"] != "3s" {
		t.Errorf("walk parameters not copied: %v %v %v", ifm["max_repetitions"], ifm["retries"], ifm["timeout"])
	}
	if w := strs(ifm["walk"]); !slices.Equal(w, []string{"1.3.6.1.2.1.2", "1.3.6.1.2.1.31.1.1"}) {
		t.Errorf("if_mib walk = %v", w)
	}
	f, _ := ifm["filters"].([]any)
	if len(f) != 1 || fmt.Sprint(f[0]) != "map[oid:1.3.6.1.2.1.2.2.1.7 targets:[1.3.6.1.2.1.2.2.1.8] values:[1]]" {
		t.Errorf("dynamic filters = %v", f)
	}
	sp := metric(t, ifm, "ifSpeedBytes")
	if sp["oid"] != "1.3.6.1.2.1.2.2.1.5" || sp["help"] != "Interface speed in bytes per second" || sp["scale"] != 0.125 || fmt.Sprint(sp["offset"]) != "1" {
		t.Errorf("overridden ifSpeed = %v", sp)
	}
	lc := metric(t, ifm, "ifLastChange")
	if lc["datetime_pattern"] != "%Y" || lc["display_hint"] != "x" {
		t.Errorf("override by OID: ifLastChange = %v", lc)
	}
	in := metric(t, ifm, "ifInOctets")
	var hint any
	for _, l := range in["lookups"].([]any) {
		if l := l.(map[string]any); l["labelname"] == "ifDescr" {
			hint = l["display_hint"]
		}
	}
	if hint != "255a" {
		t.Errorf("lookup ifDescr display_hint @mib = %v, want DisplayString's 255a", hint)
	}
	if ty := metric(t, ifm, "ifType"); ty["type"] != "EnumAsInfo" || ty["enum_values"] == nil {
		t.Errorf("ifType = %v", ty)
	}

	fm := mods["filtered"]
	if w := fm["walk"]; w != nil {
		t.Errorf("filtered walk = %v, want none: the filter leaves only gets", w)
	}
	wantGet := []string{"1.3.6.1.2.1.2.2.1.10.2", "1.3.6.1.2.1.2.2.1.10.3", "1.3.6.1.2.1.2.2.1.16.2",
		"1.3.6.1.2.1.2.2.1.16.3", "1.3.6.1.2.1.31.1.1.1.1.2", "1.3.6.1.2.1.31.1.1.1.1.3"}
	if g := strs(fm["get"]); !slices.Equal(g, wantGet) {
		t.Errorf("filtered get = %v\nwant %v", g, wantGet)
	}
	ls := metric(t, fm, "ifInOctets")["lookups"].([]any)
	if len(ls) != 2 || ls[1].(map[string]any)["labelname"] != "ifIndex" {
		t.Errorf("drop_source_indexes: lookups = %v", ls)
	}

	ix := metric(t, mods["ipstats"], "ipSystemStatsInReceives")["indexes"].([]any)[0].(map[string]any)
	if ix["type"] != "EnumAsInfo" || ix["enum_values"] == nil {
		t.Errorf("enumerated index = %v, want EnumAsInfo with its values", ix)
	}
	pa := metric(t, mods["ipstats"], "ipNetToPhysicalPhysAddress")
	var labels []string
	for _, x := range pa["indexes"].([]any) {
		labels = append(labels, fmt.Sprint(x.(map[string]any)["labelname"], ":", x.(map[string]any)["type"]))
	}
	if want := []string{"ipNetToPhysicalIfIndex:gauge", "ipNetToPhysicalNetAddress:InetAddress"}; !slices.Equal(labels, want) {
		t.Errorf("InetAddressType and InetAddress indexes = %v, want %v", labels, want)
	}

	// The old rules keep the enumerated index a gauge.
	old := modules(t, generate(t, "testdata/generator.yml", Options{Legacy: true}))
	ix = metric(t, old["ipstats"], "ipSystemStatsInReceives")["indexes"].([]any)[0].(map[string]any)
	if ix["type"] != "gauge" {
		t.Errorf("old rules: enumerated index = %v, want gauge", ix)
	}
}

// TestErrors: a bad generator.yml names file and line; a walk that
// names nothing fails the generation with the module's line.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ yml, want string }{
		{"modules:\n  a:\n    walk: [sysUpTime]\n    overrides:\n      sysUpTime:\n        type: Nonsense\n", "g.yml:5: sysUpTime: invalid metric type override 'Nonsense'"},
		{"modules:\n  a:\n    walk: [sysUpTime]\n    filters:\n      static:\n        - targets: [ifName]\n          indices: [x]\n", "g.yml:4: filters: invalid index 'x'"},
		{"modules:\n  a:\n    walkk: [sysUpTime]\n", "g.yml: line 3: field walkk not found"},
		{"auths:\n  x:\n    version: 3\n", "g.yml:2: x: username is missing"},
	} {
		_, err := Load("g.yml", []byte(c.yml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.yml, err, c.want)
		}
	}
	for _, c := range []struct{ yml, want string }{
		{"modules:\n  a:\n    walk: [sysUpTime]\n  b:\n    walk: [noSuchObject]\n", "g.yml:4: b: cannot find oid 'noSuchObject' to walk"},
		{"modules:\n  a:\n    walk: [.1.3.6.1.2.1.1]\n", "remove the leading '.'"},
	} {
		cfg, err := Load("g.yml", []byte(c.yml))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Generate(cfg, standardSet(t), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.yml, err, c.want)
		}
	}
}

func FuzzLoad(f *testing.F) {
	for _, p := range []string{"testdata/generator.yml", "testdata/generator-0.21.yml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("modules:\n  a:\n    overrides:\n      x:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Load("f.yml", b)
		if err != nil {
			return
		}
		// Whatever loads generates or fails with an error, against a
		// small tree.
		Generate(c, smi.Compiled(), Options{})
	})
}

// TestGeneratedScrape scrapes snmpd through Debian's snmp_exporter and
// tsnmp exporter, both on the snmp.yml tsnmp generates in the old format,
// and compares what they return. (tcpudp is left out: the machine's
// connections change between the two scrapes.)
func TestGeneratedScrape(t *testing.T) {
	file := filepath.Join(t.TempDir(), "snmp.yml")
	if err := os.WriteFile(file, generate(t, "testdata/generator-0.21.yml", Options{}), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := exptest.StartSNMPExporter(t, file)
	e := &exporter.Exporter{ConfigFiles: []string{file}, WalkConcurrency: 4, Pool: &exporter.Pool{Idle: time.Minute, Max: 10}}
	if err := e.Reload(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { srv.Close(); e.Pool.Close() })
	agent := snmpdtest.Start(t, "rocommunity public 127.0.0.1")
	for _, module := range []string{"if_mib", "system", "hrstorage", "hrdevice", "ip", "stack", "instances"} {
		t.Run(module, func(t *testing.T) {
			exptest.Compare(t, ref, srv.URL, fmt.Sprintf("/snmp?target=127.0.0.1:%d&module=%s", agent.Port, module))
		})
	}
}

// TestFixedSize: the one value a textual convention's constraint allows
// is the fixed size of an index of that type, as Net-SNMP gives it (an
// INTEGER (1..1) convention, as Dell's DellCMCPowerIndexRange, too).
func TestFixedSize(t *testing.T) {
	for r, want := range map[string]int{"(6)": 6, "(1..1)": 1, "(4 | 16)": 0, "(0..255)": 0, "": 0, "(16)": 16, "(-1..-1)": 0} {
		if got := fixedSize(r); got != want {
			t.Errorf("fixedSize(%q) = %d, want %d", r, got, want)
		}
	}
}
