package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// TestEmptyMIBSOrMIBDIRS sets MIBS, MIBDIRS or both to an empty string,
// with and without modules or directories on the command line. Net-SNMP
// then has an empty module list or an empty search path and reads no
// module file; tsnmp get reads none either: the compiled-in modules
// serve and no cache entry is made or opened. A module named on the
// command line that is nowhere is reported as snmptranslate reports it
// with the same settings (line 0 where the search path has no module
// file).
func TestEmptyMIBSOrMIBDIRS(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	std := testenv.MIBDir(t)
	conf := t.TempDir()
	t.Setenv("SNMPCONFPATH", conf)
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	defer smi.Install(nil)
	sysDescr := []uint32{1, 3, 6, 1, 2, 1, 1, 1, 0}
	for _, c := range []struct {
		env   []string // NAME=VALUE; MIBS and MIBDIRS are unset otherwise
		args  []string // -m and -M
		cache bool     // a search path and modules to read: a cache entry
	}{
		{env: []string{"MIBS="}},
		{env: []string{"MIBDIRS="}},
		{env: []string{"MIBS=", "MIBDIRS="}},
		{env: []string{"MIBS=", "MIBDIRS=" + std}},
		{env: []string{"MIBS="}, args: []string{"-M", std}},
		{env: []string{"MIBDIRS="}, args: []string{"-m", "+NOPE-MIB"}},
		{env: []string{"MIBDIRS="}, args: []string{"-m", "IF-MIB:NOPE-MIB"}},
		{env: []string{"MIBS=", "MIBDIRS="}, args: []string{"-m", "ALL"}},
		{env: []string{"MIBDIRS=/nonexistent"}, args: []string{"-m", "+NOPE-MIB"}, cache: true},
	} {
		name := strings.Join(append(append([]string(nil), c.env...), c.args...), " ")
		os.Unsetenv("MIBS")
		os.Unsetenv("MIBDIRS")
		for _, e := range c.env {
			k, v, _ := strings.Cut(e, "=")
			os.Setenv(k, v)
		}
		cache := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", cache)
		var s mibSettings
		for i := 0; i+1 < len(c.args); i += 2 {
			s.set(c.args[i][1], c.args[i+1])
		}
		var errw bytes.Buffer
		smi.Install(smi.Compiled()) // not the compiled-in tables as they start
		loadMIBs(s, &errw, false)
		if ents, _ := os.ReadDir(filepath.Join(cache, "tsnmp")); len(ents) > 0 && !c.cache {
			t.Errorf("%s: tsnmp get made a MIB cache entry (%s) for an empty list of modules or directories", name, ents[0].Name())
		}
		if got := smi.Format(sysDescr, false); got != "SNMPv2-MIB::sysDescr.0" {
			t.Errorf("%s: sysDescr.0 prints as %s, want the compiled-in SNMPv2-MIB::sysDescr.0", name, got)
		}
		// Net-SNMP's report of the module named that is nowhere (it
		// also reports its own default list and the search path,
		// which tsnmp serves from the compiled-in modules).
		cmd := exec.Command(bin, append(append([]string(nil), c.args...), ".1.3")...)
		cmd.Env = append(os.Environ(), "SNMPCONFPATH="+conf)
		var werr bytes.Buffer
		cmd.Stderr = &werr
		cmd.Run()
		var want []string
		for _, l := range strings.Split(werr.String(), "\n") {
			if strings.HasPrefix(l, "Cannot find module (NOPE-MIB)") {
				want = append(want, l)
			}
		}
		if got := strings.Split(strings.TrimSuffix(errw.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: tsnmp reports %q, snmptranslate %q", name, got, want)
		}
	}
}
