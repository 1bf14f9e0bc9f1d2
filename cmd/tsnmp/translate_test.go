package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// TestTranslateLikeSnmptranslate compares `tsnmp translate` with
// snmptranslate over the standard modules for its common options.
func TestTranslateLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dir := testenv.MIBDir(t)
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	for _, args := range [][]string{
		{"-On", "SNMPv2-MIB::sysDescr.0", "IF-MIB::ifDescr.2", `SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."user"`},
		{".1.3.6.1.2.1.1.1.0", ".1.3.6.1.4.1.9999.1", ".1.3.6.1.99", ".1", ".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114"},
		{"-Of", "SNMPv2-MIB::sysORDescr.3", "IF-MIB::ifDescr.2"},
		{"-Os", "SNMPv2-MIB::sysDescr.0", ".1.3.6.1.2.1.2.2.1.7.1"},
		{"-IR", "-On", "sysDescr.0", "ifAdminStatus.3", "snmpTargetAddrTAddress.'x'"},
		{"-IR", "-OS", "sysUpTime"},
		{"sysDescr.0"}, // no random access without -IR
		{"-Tp", "SNMPv2-MIB::snmpMIB"},
		{"-Tp", "SNMPv2-MIB::system"},
		{"-Tp", "-IR", "snmpTargetAddrEntry"},
		{"-Tp", "-IR", "hrStorageEntry"},
		{"-Tp"}, // the whole tree: where "|" lines go after identities and groups
		{"-Tp", "-IR", "ip"},
		{"-Td", "IF-MIB::ifTestOwner", "IF-MIB::ifXEntry", "-IR", "sysUpTimeInstance", "coldStart"},
		{"-Td", "-IR", "ifTable", "ifIndex", "ifType", "vacmAccessEntry", "snmpTrapOID", "ifSpeed", "sysUpTime", "snmpMIB", "systemGroup", "zeroDotZero"},
		{"-Tz"},
		{"-To"},
		{"-Tl"},
		{"-Ts"},
		{"-Ta"},
		{"-TB", "sysD"},
		{"-TB", "."},
		{"-TB", "Entry$"},
		{"-Tp", "-IR", "noSuchName"},
		{"-IR", "-On", "sysDescr", ".1.3.6.1.2.1.1"},
	} {
		full := append([]string{"-M", dir, "-m", "ALL"}, args...)
		cmd := exec.Command(bin, full...)
		var wantOut, wantErr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
		_ = cmd.Run()
		var gotOut, gotErr bytes.Buffer
		translateMain(full, &gotOut, &gotErr)
		if gotOut.String() != wantOut.String() {
			t.Errorf("translate %s:\n%s\nsnmptranslate:\n%s", strings.Join(args, " "), head(gotOut.String()), head(wantOut.String()))
		}
		if gotErr.String() != wantErr.String() {
			t.Errorf("translate %s: stderr %q, snmptranslate %q", strings.Join(args, " "), gotErr.String(), wantErr.String())
		}
	}
}

func head(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "..."
	}
	return s
}

// TestMIBSettings checks how -m, -M, MIBS, MIBDIRS and snmp.conf combine.
func TestMIBSettings(t *testing.T) {
	conf := t.TempDir()
	os.WriteFile(conf+"/snmp.conf", []byte("mibdirs +/conf/dir\nmibs +CONF-MIB\n"), 0o644)
	t.Setenv("SNMPCONFPATH", conf)
	t.Setenv("HOME", "/home/u")
	t.Setenv("MIBS", "") // restored after the test
	t.Setenv("MIBDIRS", "")
	os.Unsetenv("MIBS")
	os.Unsetenv("MIBDIRS")
	p := mibSettings{dirs: "+/cli/dir", dirsSet: true, modules: "+CLI-MIB", modulesSet: true}.plan()
	if got := strings.Join(p.dirs, ":"); !strings.HasPrefix(got, "/cli/dir:/conf/dir:/home/u/.snmp/mibs:/usr/share/snmp/mibs") {
		t.Errorf("dirs %s", got)
	}
	if !p.custom || p.modules[0] != "SNMPv2-MIB" || p.modules[len(p.modules)-2] != "CONF-MIB" || p.modules[len(p.modules)-1] != "CLI-MIB" {
		t.Errorf("modules %v", p.modules)
	}
	t.Setenv("MIBDIRS", "/env/dir")
	t.Setenv("MIBS", "ALL")
	p = mibSettings{}.plan()
	if strings.Join(p.dirs, ":") != "/env/dir" || strings.Join(p.modules, ":") != "ALL" {
		t.Errorf("env: dirs %v modules %v", p.dirs, p.modules)
	}
	// Debian's "mibs :" alone keeps the compiled-in modules.
	os.WriteFile(conf+"/snmp.conf", []byte("mibs :\n"), 0o644)
	os.Unsetenv("MIBS")
	os.Unsetenv("MIBDIRS")
	if p := (mibSettings{}).plan(); p.custom {
		t.Errorf("mibs : loads modules: %+v", p)
	}
}

// TestMIBsAllKeepsCompiled: -m ALL over a directory that holds only a
// vendor module loads it on top of every compiled-in standard module.
func TestMIBsAllKeepsCompiled(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/vendor.my", []byte(`ACME-MIB DEFINITIONS ::= BEGIN
IMPORTS enterprises, OBJECT-TYPE, Integer32 FROM SNMPv2-SMI;
acme OBJECT IDENTIFIER ::= { enterprises 424242 }
acmeTemp OBJECT-TYPE SYNTAX Integer32 UNITS "degrees" MAX-ACCESS read-only STATUS current DESCRIPTION "t" ::= { acme 1 }
END
`), 0o644)
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	defer smi.Install(nil)
	var errw bytes.Buffer
	loadMIBs(mibSettings{modules: "ALL", modulesSet: true, dirs: dir, dirsSet: true}, &errw, false)
	for _, name := range []string{"ACME-MIB::acmeTemp", "SNMPv2-MIB::sysDescr", "IF-MIB::ifDescr", "SNMP-FRAMEWORK-MIB::snmpEngineID"} {
		if smi.FindNode(name) == nil {
			t.Errorf("%s not loaded", name)
		}
	}
	if n := smi.FindNode("acmeTemp"); n == nil || n.Units != "degrees" {
		t.Errorf("acmeTemp = %+v", n)
	}
	if errw.Len() > 0 {
		t.Errorf("stderr %q", errw.String())
	}
}
