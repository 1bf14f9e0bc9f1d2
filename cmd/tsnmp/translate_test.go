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
		{"-Ob", ".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114", ".1.3.6.1.2.1.2.2.1.99.1", ".1.3.6.1.2.1.1.1.0", ".1.3.6.1.2.1.1", ".1.3.6.1.99.4"},
		{"-Obf", ".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114", ".1.3.6.1.2.1.2.2.1.99.1"},
		{"-Obs", ".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114", "-Td", "SNMPv2-MIB::sysORDescr.3"},
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

// TestMIBSettings checks that Debian's snmp.conf line "mibs :" alone
// keeps the compiled-in modules (TestMIBSettingsLikeNetSNMP compares the
// rest with Net-SNMP).
func TestMIBSettings(t *testing.T) {
	conf := t.TempDir()
	t.Setenv("SNMPCONFPATH", conf)
	t.Setenv("MIBS", "") // restored after the test
	t.Setenv("MIBDIRS", "")
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

// defvalModule has an object for each kind of DEFVAL and for the limits
// of Net-SNMP's reading of them: hexadecimal and binary numbers (in
// signed decimal, modulo 2^64), quoted text that is not a number, BITS,
// OIDs, an empty set, a string over a line break and one longer than the
// token buffer.
var defvalModule = `ACME-DEFVAL-MIB DEFINITIONS ::= BEGIN
IMPORTS enterprises, OBJECT-TYPE, Integer32 FROM SNMPv2-SMI
        DisplayString FROM SNMPv2-TC;
acmeDv OBJECT IDENTIFIER ::= { enterprises 424243 }
acmeInt OBJECT-TYPE SYNTAX Integer32 MAX-ACCESS read-write STATUS current DESCRIPTION "i" DEFVAL { -7 } ::= { acmeDv 1 }
acmeEnum OBJECT-TYPE SYNTAX INTEGER { on(1), off(2) } MAX-ACCESS read-write STATUS current DESCRIPTION "e" DEFVAL {off} ::= { acmeDv 2 }
acmeStr OBJECT-TYPE SYNTAX DisplayString MAX-ACCESS read-write STATUS current DESCRIPTION "s" DEFVAL { "two
lines" } ::= { acmeDv 3 }
acmeHex OBJECT-TYPE SYNTAX OCTET STRING MAX-ACCESS read-write STATUS current DESCRIPTION "h" DEFVAL { 'FFFFFFFFFFFFFFFF01'h } ::= { acmeDv 4 }
acmeHex2 OBJECT-TYPE SYNTAX OCTET STRING MAX-ACCESS read-write STATUS current DESCRIPTION "h" DEFVAL { 'C0A80001'H } ::= { acmeDv 5 }
acmeBin OBJECT-TYPE SYNTAX OCTET STRING MAX-ACCESS read-write STATUS current DESCRIPTION "b" DEFVAL { '0101'B } ::= { acmeDv 6 }
acmeNotHex OBJECT-TYPE SYNTAX OCTET STRING MAX-ACCESS read-write STATUS current DESCRIPTION "x" DEFVAL { '0x12'H } ::= { acmeDv 7 }
acmeOid OBJECT-TYPE SYNTAX OBJECT IDENTIFIER MAX-ACCESS read-write STATUS current DESCRIPTION "o" DEFVAL { { 1 3 6 1 } } ::= { acmeDv 8 }
acmeBits OBJECT-TYPE SYNTAX BITS { a(0), b(1) } MAX-ACCESS read-write STATUS current DESCRIPTION "bits" DEFVAL { { a, b } } ::= { acmeDv 9 }
acmeNone OBJECT-TYPE SYNTAX BITS { a(0), b(1) } MAX-ACCESS read-write STATUS current DESCRIPTION "none" DEFVAL { {} } ::= { acmeDv 10 }
acmeNoDescr OBJECT-TYPE SYNTAX Integer32 MAX-ACCESS read-write STATUS current DEFVAL { 5 } -- a comment
  ::= { acmeDv 11 }
acmeLong OBJECT-TYPE SYNTAX DisplayString MAX-ACCESS read-write STATUS current DESCRIPTION "long" DEFVAL { "` + strings.Repeat("a", 300) + `" } ::= { acmeDv 12 }
acmeBin2 OBJECT-TYPE SYNTAX OCTET STRING MAX-ACCESS read-write STATUS current DESCRIPTION "b" DEFVAL { '012'B } ::= { acmeDv 13 }
acmeLongHex OBJECT-TYPE SYNTAX OCTET STRING MAX-ACCESS read-write STATUS current DESCRIPTION "h" DEFVAL { '` + strings.Repeat("0123456789", 14) + `'H } ::= { acmeDv 14 }
acmeOidName OBJECT-TYPE SYNTAX OBJECT IDENTIFIER MAX-ACCESS read-write STATUS current DESCRIPTION "o" DEFVAL { acmeDv } ::= { acmeDv 15 }
END
`

// TestTranslateDefvalLikeSnmptranslate compares -Td for objects with a
// DEFVAL of each kind: standard modules' and a module made for the
// limits.
func TestTranslateDefvalLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dir := testenv.MIBDir(t)
	mine := t.TempDir()
	if err := os.WriteFile(mine+"/ACME-DEFVAL-MIB.txt", []byte(defvalModule), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	objs := []string{
		"SNMP-TARGET-MIB::snmpTargetAddrTimeout",          // 1500
		"SNMP-TARGET-MIB::snmpTargetAddrStorageType",      // nonVolatile
		"SNMP-TARGET-MIB::snmpTargetAddrTagList",          // ""
		"SNMP-NOTIFICATION-MIB::snmpNotifyFilterMask",     // ''H
		"DISMAN-SCRIPT-MIB::smRunStartTime",               // '0000000000000000'H
		"IP-FORWARD-MIB::ipForwardMask",                   // '00000000'H
		"IP-FORWARD-MIB::inetCidrRouteMetric1",            // -1
		"DISMAN-EVENT-MIB::mteTriggerValueID",             // zeroDotZero
		"DISMAN-EVENT-MIB::mteTriggerTest",                // { boolean }
		"DISMAN-EVENT-MIB::mteEventActions",               // {}
		"DISMAN-PING-MIB::pingCtlDataFill",                // '00'H
		"SNMP-VIEW-BASED-ACM-MIB::vacmAccessContextMatch", // exact
		"-IR",
	}
	for _, l := range strings.Split(defvalModule, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "OBJECT-TYPE" {
			objs = append(objs, f[0])
		}
	}
	full := append([]string{"-M", dir + ":" + mine, "-m", "ALL", "-Td"}, objs...)
	cmd := exec.Command(bin, full...)
	var wantOut, wantErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
	_ = cmd.Run()
	if n := strings.Count(wantOut.String(), "\n  DEFVAL\t"); n != len(objs)-1 {
		t.Fatalf("snmptranslate printed %d DEFVAL clauses for %d objects: %s", n, len(objs)-1, wantErr.String())
	}
	var gotOut, gotErr bytes.Buffer
	translateMain(full, &gotOut, &gotErr)
	if gotOut.String() != wantOut.String() {
		gl, wl := strings.Split(gotOut.String(), "\n"), strings.Split(wantOut.String(), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
				g, w := "", ""
				if i < len(gl) {
					g = gl[i]
				}
				if i < len(wl) {
					w = wl[i]
				}
				t.Fatalf("-Td line %d: tsnmp %q, snmptranslate %q", i+1, g, w)
			}
		}
	}
	if gotErr.String() != wantErr.String() {
		t.Errorf("stderr %q, snmptranslate %q", gotErr.String(), wantErr.String())
	}
}

// TestTranslateNetsnmpQuotedLimit checks the DESCRIPTION text -Td prints against
// Net-SNMP's parser rule without snmptranslate: carriage returns are
// dropped first, then only the first 4095 bytes are kept.
func TestTranslateNetsnmpQuotedLimit(t *testing.T) {
	long := strings.Repeat("a\r\n", 3000) // 9000 bytes, 6000 without CR
	got := netsnmpQuoted(long)
	if want := strings.Repeat("a\n", 2047) + "a"; got != want {
		t.Errorf("netsnmpQuoted of %d bytes: got %d bytes ending %q, want %d bytes", len(long), len(got), tail(got), len(want))
	}
	for _, s := range []string{"", "short", strings.Repeat("x", descriptionMax)} {
		if got := netsnmpQuoted(s); got != s {
			t.Errorf("netsnmpQuoted changed a %d-byte text to %d bytes", len(s), len(got))
		}
	}
	if got := netsnmpQuoted(strings.Repeat("x", descriptionMax+1)); len(got) != descriptionMax {
		t.Errorf("netsnmpQuoted kept %d of %d bytes, want %d", len(got), descriptionMax+1, descriptionMax)
	}
}

// TestTranslateEmptyDescriptionLikeSnmptranslate compares -Td for
// definitions whose DESCRIPTION is there but empty (of every macro, and
// a MODULE-IDENTITY whose REVISION has a text), for SMIv1 objects
// without one, and for objects of textual conventions with and without
// a DISPLAY-HINT of their own (testdata/mibs-descr).
func TestTranslateEmptyDescriptionLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dir := testenv.MIBDir(t)
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	full := []string{"-M", dir + ":testdata/mibs-descr", "-m", "ALL", "-Td",
		"ACME-EMPTY-DESCR-MIB::acmeEmptyDescrMIB", "ACME-EMPTY-DESCR-MIB::acmeEdIdentity",
		"ACME-EMPTY-DESCR-MIB::acmeEdEmpty", "ACME-EMPTY-DESCR-MIB::acmeEdText",
		"ACME-EMPTY-DESCR-MIB::acmeEdNotification", "ACME-EMPTY-DESCR-MIB::acmeEdGroup",
		"ACME-EMPTY-DESCR-MIB::acmeEdNotifGroup", "ACME-EMPTY-DESCR-MIB::acmeEdName", "ACME-EMPTY-DESCR-MIB::acmeEdHex",
		"ACME-V1-DESCR-MIB::acmeV1None", "ACME-V1-DESCR-MIB::acmeV1Empty", "ACME-V1-DESCR-MIB::acmeV1Trap",
	}
	cmd := exec.Command(bin, full...)
	var wantOut, wantErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
	_ = cmd.Run()
	if n := strings.Count(wantOut.String(), "  DESCRIPTION\t\"\"\n"); n != 8 {
		t.Fatalf("snmptranslate printed %d empty DESCRIPTIONs, want 8: %s", n, head(wantErr.String()))
	}
	// The second run reads the modules from the cache entry the first
	// wrote.
	for _, run := range []string{"loaded", "cached"} {
		var gotOut, gotErr bytes.Buffer
		translateMain(full, &gotOut, &gotErr)
		if gotOut.String() != wantOut.String() {
			t.Errorf("%s: -Td differs from snmptranslate:\n%s", run, firstDiff(gotOut.String(), wantOut.String()))
		}
		if gotErr.String() != wantErr.String() {
			t.Errorf("%s: stderr %q, snmptranslate %q", run, gotErr.String(), wantErr.String())
		}
	}
}

// TestTranslateAnonymousLikeSnmptranslate compares the names Net-SNMP
// gives arcs that OID values give only as numbers ("anonymous#N") over
// modules read in an order other than the one they are linked in
// (testdata/mibs-anon): ACME-ANON-A is read first and names ACME-ANON-B
// in a MODULE-COMPLIANCE between its definitions, ACME-ANON-B names
// ACME-ANON-C in an AGENT-CAPABILITIES; Net-SNMP numbers the arcs as it
// parses, so A's first arcs come before B's and C's, its later ones
// after them.
func TestTranslateAnonymousLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	dir := testenv.MIBDir(t)
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer smi.Install(nil)
	for _, args := range [][]string{
		{"-Tp", "-IR", "enterprises"},
		{"-Tz"},
		{"-TB", "^anonymous"},
		{"-Td", "ACME-ANON-A::acmeAnonA2", "ACME-ANON-A::acmeAnonA3", "ACME-ANON-B::acmeAnonB1", "ACME-ANON-C::acmeAnonC2"},
		{"-Td", ".1.3.6.1.4.1.424262.7", ".1.3.6.1.4.1.424261", ".1.3.6.1.4.1.424262.7.5.6"},
		// Below a definition: the node and the arcs the tree reaches.
		{"-Td", ".1.3.6.1.4.1.424262.7.1.5", ".1.3.6.1.4.1.424260.1.2.3.4", "SNMPv2-MIB::sysDescr.0", ".1.3.6.1.2.1.1.1.0.5", ".1", ".1.3.6.1.99.5", "SNMPv2-SMI::org", "SNMPv2-MIB::sysORID"},
		{"-On", "ACME-ANON-A::acmeAnonA2", "ACME-ANON-B::acmeAnonB2", "ACME-ANON-C::acmeAnonCGroup"},
		{".1.3.6.1.4.1.424262.7", ".1.3.6.1.4.1.424260.1.2", ".1.3.6.1.4.1.424261.6.1.0", ".1.3.6.1.4.1.424263.2.4"},
	} {
		full := append([]string{"-M", dir + ":testdata/mibs-anon", "-m", "ALL"}, args...)
		cmd := exec.Command(bin, full...)
		var wantOut, wantErr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
		_ = cmd.Run()
		if !strings.Contains(wantOut.String(), "42426") && !strings.Contains(wantOut.String(), "acmeAnon") {
			t.Fatalf("snmptranslate %s printed nothing of the test modules: %s", strings.Join(args, " "), head(wantErr.String()))
		}
		var gotOut, gotErr bytes.Buffer
		translateMain(full, &gotOut, &gotErr)
		if gotOut.String() != wantOut.String() {
			t.Errorf("translate %s differs from snmptranslate:\n%s", strings.Join(args, " "), firstDiff(gotOut.String(), wantOut.String()))
		}
		if gotErr.String() != wantErr.String() {
			t.Errorf("translate %s: stderr %q, snmptranslate %q", strings.Join(args, " "), gotErr.String(), wantErr.String())
		}
	}
}
