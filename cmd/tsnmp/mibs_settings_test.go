package main

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// TestMIBSettingsLikeNetSNMP combines -m, -M, MIBS, MIBDIRS and
// snmp.conf's mibs and mibdirs lines ("+X" after, "-X" before, anything
// else in place) and compares the search path and the module list tsnmp
// works out with those snmpget (tsnmp get) and snmptranslate (tsnmp
// translate, whose -M stands for MIBDIRS) print: the search path they
// report before a module that is nowhere, and the modules they report
// missing from a search path of one empty directory, in order.
func TestMIBSettingsLikeNetSNMP(t *testing.T) {
	snmpget := testenv.Need(t, "snmpget")
	snmptranslate := testenv.Need(t, "snmptranslate")
	home := t.TempDir()
	empty := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("MIBS", "") // restored after the test
	t.Setenv("MIBDIRS", "")
	type setting struct {
		env  []string // MIBS=..., MIBDIRS=...
		conf string   // snmp.conf
		args []string // -m and -M, in order
	}
	// run returns what Net-SNMP's tool reports with s: the search path
	// (if it printed one) and the modules it could not find.
	run := func(tool string, s setting, conf string) (path []string, missing []string) {
		args := append(slices.Clone(s.args), ".1.3")
		if tool == snmpget {
			args = append([]string{"-v2c", "-c", "public", "-t", "0.1", "-r", "0"}, append(slices.Clone(s.args), "127.0.0.1:1", ".1.3")...)
		}
		cmd := exec.Command(tool, args...)
		cmd.Env = append(os.Environ(), "SNMPCONFPATH="+conf, "HOME="+home)
		cmd.Env = slices.DeleteFunc(cmd.Env, func(e string) bool {
			return strings.HasPrefix(e, "MIBS=") || strings.HasPrefix(e, "MIBDIRS=")
		})
		cmd.Env = append(cmd.Env, s.env...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Run()
		for _, l := range strings.Split(errb.String(), "\n") {
			if p, ok := strings.CutPrefix(l, "MIB search path: "); ok {
				path = splitList(p)
			}
			if m, ok := strings.CutPrefix(l, "Cannot find module ("); ok {
				missing = append(missing, m[:strings.IndexByte(m, ')')])
			}
		}
		return path, missing
	}
	plan := func(s setting, conf string, translate bool) mibPlan {
		t.Setenv("SNMPCONFPATH", conf)
		os.Unsetenv("MIBS")
		os.Unsetenv("MIBDIRS")
		for _, e := range s.env {
			k, v, _ := strings.Cut(e, "=")
			os.Setenv(k, v)
		}
		var ms mibSettings
		for i := 0; i+1 < len(s.args); i += 2 {
			ms.set(s.args[i][1], s.args[i+1])
		}
		ms.envDirs = translate && ms.dirsSet
		return ms.plan()
	}
	writeConf := func(text string) string {
		dir := t.TempDir()
		if err := os.WriteFile(dir+"/snmp.conf", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	// Search paths; NOPE-MIB makes the tools print theirs.
	for _, s := range []setting{
		{},
		{env: []string{"MIBDIRS=/e1:/e2"}},
		{env: []string{"MIBDIRS=+/e"}},
		{env: []string{"MIBDIRS=-/e"}},
		{conf: "mibdirs +/c\n"},
		{conf: "mibdirs /c1\nmibdirs +/c2\nmibdirs -/c0\n"},
		{conf: "mibdirs +/c\n", args: []string{"-M", "+/m"}},
		{env: []string{"MIBDIRS=/e"}, args: []string{"-M", "+/m"}},
		{env: []string{"MIBDIRS=+/e"}, conf: "mibdirs /c\n", args: []string{"-M", "-/m"}},
		{args: []string{"-M", "/a", "-M", "+/b"}},
		{args: []string{"-M", "-/a"}},
		{env: []string{"MIBDIRS=/e"}, conf: "mibdirs +/c\n"},
	} {
		s.args = append(s.args, "-m", "NOPE-MIB")
		conf := writeConf(s.conf)
		for _, tool := range []string{snmpget, snmptranslate} {
			want, _ := run(tool, s, conf)
			if want == nil {
				t.Fatalf("%s %v %q %v: no search path printed", tool, s.env, s.conf, s.args)
			}
			if got := plan(s, conf, tool == snmptranslate).dirs; !slices.Equal(got, want) {
				t.Errorf("%v, snmp.conf %q, %v: tsnmp's search path %v, %s's %v", s.env, s.conf, s.args, got, tool, want)
			}
		}
	}
	// Module lists, every module missing from an empty directory. The
	// default lists differ (this Debian build's has MTA-MIB and others
	// tsnmp's does not): each is written "DEFAULT".
	_, netsnmpDefault := run(snmptranslate, setting{args: []string{"-M", empty}}, writeConf(""))
	if len(netsnmpDefault) < 10 {
		t.Fatalf("snmptranslate reports %v missing with its default module list", netsnmpDefault)
	}
	collapse := func(l, def []string) []string {
		if i := slices.Index(l, def[0]); i >= 0 && len(l)-i >= len(def) && slices.Equal(l[i:i+len(def)], def) {
			return slices.Concat(l[:i], []string{"DEFAULT"}, l[i+len(def):])
		}
		return l
	}
	for _, s := range []setting{
		{env: []string{"MIBS=A-MIB:B-MIB"}},
		{env: []string{"MIBS=+A-MIB"}},
		{env: []string{"MIBS=-A-MIB"}},
		{conf: "mibs +C-MIB\n"},
		{conf: "mibs C1-MIB\nmibs +C2-MIB\nmibs -C0-MIB\n"},
		{conf: "mibs +C-MIB\n", env: []string{"MIBS=+A-MIB"}},
		{conf: "mibs +C-MIB\n", args: []string{"-m", "+B-MIB"}},
		{env: []string{"MIBS=+A-MIB"}, args: []string{"-m", "+B-MIB"}},
		{args: []string{"-m", "A-MIB", "-m", "-B-MIB"}},
	} {
		s.args = append([]string{"-M", empty}, s.args...)
		conf := writeConf(s.conf)
		for _, tool := range []string{snmpget, snmptranslate} {
			_, want := run(tool, s, conf)
			want = collapse(want, netsnmpDefault)
			if got := collapse(plan(s, conf, tool == snmptranslate).modules, splitList(defaultMIBs)); !slices.Equal(got, want) {
				t.Errorf("%v, snmp.conf %q, %v: tsnmp's modules %v, %s's %v", s.env, s.conf, s.args, got, tool, want)
			}
		}
	}
}

// TestPlusDirWinsLikeSnmpget puts a module in two directories and adds
// the second with -M +DIR to MIBDIRS's path, as a user adds a newer copy
// of a vendor module: tsnmp get reads it from the added directory, as
// snmpget does (Net-SNMP reads a module from the later directory of its
// path; snmptranslate, given that path, shows which OID it reads).
func TestPlusDirWinsLikeSnmpget(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	std := testenv.MIBDir(t)
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("MIBS", "")
	defer smi.Install(nil)
	var dirs []string
	for _, arc := range []string{"1", "2"} {
		d := t.TempDir()
		mib := "DUP-MIB DEFINITIONS ::= BEGIN\nIMPORTS enterprises FROM SNMPv2-SMI;\ndupObj OBJECT IDENTIFIER ::= { enterprises " + arc + " }\nEND\n"
		if err := os.WriteFile(d+"/DUP-MIB.txt", []byte(mib), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	t.Setenv("MIBDIRS", std+":"+dirs[0])
	var s mibSettings
	s.set('M', "+"+dirs[1])
	s.set('m', "DUP-MIB")
	p := s.plan()
	want := translateBatch(t, bin, []string{"-M", strings.Join(p.dirs, ":"), "-m", "DUP-MIB", "-On"}, []string{"DUP-MIB::dupObj"})
	if want[0] != ".1.3.6.1.4.1.2" {
		t.Fatalf("snmptranslate -M %s reads DUP-MIB::dupObj as %q, want the later directory's .1.3.6.1.4.1.2", strings.Join(p.dirs, ":"), want[0])
	}
	var errw bytes.Buffer
	loadMIBs(s, &errw, false)
	o, err := smi.Resolve("DUP-MIB::dupObj")
	if got := smi.Format(o, true); err != nil || got != want[0] {
		t.Errorf("tsnmp get -M +DIR with MIBDIRS reads DUP-MIB::dupObj as %s (%v), snmpget as %s", got, err, want[0])
	}
}
