package main

import (
	"io"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
)

// extendedIndexOIDs are table instances whose indexes cover the kinds of
// INDEX objects -OX prints: integers, enumerations, counted and fixed
// strings with and without a DISPLAY-HINT, IMPLIED strings, IpAddress,
// InetAddress and OBJECT IDENTIFIER indexes.
var extendedIndexOIDs = []string{
	".1.3.6.1.2.1.2.2.1.2.1",             // IF-MIB ifDescr: Integer32
	".1.3.6.1.2.1.4.34.1.3.1.4.10.0.0.1", // ipAddressTable: enum, InetAddress
	".1.3.6.1.2.1.4.34.1.3.2.16.254.128.0.0.0.0.0.0.0.0.0.0.0.0.0.1",
	".1.3.6.1.6.3.16.1.4.1.4.4.117.115.101.114.0.3.1", // vacmAccessTable: strings, model, level
	".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114",     // vacmSecurityToGroupTable
	".1.3.6.1.6.3.12.1.2.1.2.116.101.115.116",         // snmpTargetAddrTable: IMPLIED SnmpAdminString
	".1.3.6.1.2.1.6.19.1.7.1.4.127.0.0.1.161.1.4.127.0.0.1.1024",
	".1.3.6.1.2.1.17.4.3.1.2.0.1.2.3.4.255",                        // dot1dTpFdbTable: MacAddress
	".1.3.6.1.2.1.4.20.1.2.10.0.0.1",                               // ipAddrTable: IpAddress
	".1.3.6.1.2.1.4.24.7.1.7.1.4.10.0.0.0.8.3.0.0.11.1.4.10.0.0.1", // inetCidrRouteTable: OID
	".1.3.6.1.2.1.92.1.3.1.1.2.4.117.115.101.114.3",                // nlmLogTable
	".1.3.6.1.2.1.31.1.2.1.3.1.2",                                  // ifStackTable
	".1.3.6.1.2.1.4.22.1.2.1.10.0.0.1",                             // ipNetToMediaTable
}

// TestExtendedIndexLikeSnmptranslate prints instances of the standard
// modules' tables with -OX as tsnmp get does and compares each with
// snmptranslate -OX.
func TestExtendedIndexLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	std := testenv.MIBDir(t)
	isolateMIBs(t)
	want := translateBatch(t, bin, []string{"-M", std, "-m", "ALL", "-OX"}, extendedIndexOIDs)
	loadMIBs(mibSettings{modules: "ALL", modulesSet: true, dirs: std, dirsSet: true}, io.Discard, false)
	var o format.Options
	o.ParseOptions("X")
	for i, s := range extendedIndexOIDs {
		if got := o.OID(parseOID(s)); got != want[i] {
			t.Errorf("-OX %s: tsnmp get prints\n  %s\nsnmptranslate\n  %s", s, got, want[i])
		}
	}
}

// TestExtendedIndexVendorLikeSnmptranslate does the same for vendor
// modules' tables, among them an IMPLIED DisplayString index whose bytes
// are not all printable (printed as they are after "STRING: ").
func TestExtendedIndexVendorLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	std := testenv.MIBDir(t)
	dirs := strings.Join(append(testenv.VendorMIBDirs(t), std), ":")
	isolateMIBs(t)
	modules := "CISCO-FC-TUNNEL-MIB:CISCO-VTP-MIB"
	oids := []string{
		".1.3.6.1.4.1.9.9.9999.1.1.2.1.1.3.97.98.99.2.1",   // IMPLIED DisplayString, unprintable bytes
		".1.3.6.1.4.1.9.9.9999.1.1.2.1.1.3.116.117.110.49", // IMPLIED DisplayString
		".1.3.6.1.4.1.9.9.46.1.3.1.1.4.1.100",              // vtpVlanState: two integers
	}
	want := translateBatch(t, bin, []string{"-M", dirs, "-m", modules, "-OX"}, oids)
	loadMIBs(mibSettings{modules: modules, modulesSet: true, dirs: dirs, dirsSet: true}, io.Discard, false)
	var o format.Options
	o.ParseOptions("X")
	for i, s := range oids {
		if got := o.OID(parseOID(s)); got != want[i] {
			t.Errorf("-OX %s: tsnmp get prints\n  %q\nsnmptranslate\n  %q", s, got, want[i])
		}
	}
}

// TestTranslateExtendedIndexLikeSnmptranslate runs tsnmp translate -OX
// (with -Os and -Of too) on the same instances as snmptranslate.
func TestTranslateExtendedIndexLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	std := testenv.MIBDir(t)
	isolateMIBs(t)
	for _, style := range []string{"-OX", "-OXs", "-OXf"} {
		want := translateBatch(t, bin, []string{"-M", std, "-m", "ALL", style}, extendedIndexOIDs)
		var out, errs strings.Builder
		args := append([]string{"-M", std, "-m", "ALL", style}, extendedIndexOIDs...)
		if code := translateMain(args, &out, &errs); code != 0 {
			t.Fatalf("tsnmp translate %s: exit %d: %s", style, code, errs.String())
		}
		// snmptranslate, and tsnmp, leave a blank line between OIDs.
		var got []string
		for l := range strings.SplitSeq(out.String(), "\n") {
			if l != "" {
				got = append(got, l)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("tsnmp translate %s printed %d lines for %d OIDs:\n%s", style, len(got), len(want), out.String())
		}
		for i, s := range extendedIndexOIDs {
			if got[i] != want[i] {
				t.Errorf("translate %s %s: tsnmp prints\n  %s\nsnmptranslate\n  %s", style, s, got[i], want[i])
			}
		}
	}
}

// ucdOIDs are OIDs -Ou prints with and without a prefix cut: below
// mib-2 and private, mib-2 itself, other subtrees of internet, the
// other roots, instances and arcs no module names.
var ucdOIDs = []string{
	".1.3.6.1.2.1.1.1.0",
	".1.3.6.1.2.1.2.2.1.2.1",
	".1.3.6.1.2.1",
	".1.3.6.1.2.1.99999",
	".1.3.6.1.2",
	".1.3.6.1.3",
	".1.3.6.1.4.1",
	".1.3.6.1.4.1.2021.10.1.3.1",
	".1.3.6.1.4.1.99999.1",
	".1.3.6.1.6.3.1.1.4.1.0",
	".1.3.6.1.6.3.16.1.2.1.3.3.4.117.115.101.114",
	".1.3",
	".2.5",
	".0.0",
}

// TestUCDStyleLikeSnmptranslate prints OIDs with -Ou as tsnmp get and
// tsnmp translate do and compares them with snmptranslate -Ou.
func TestUCDStyleLikeSnmptranslate(t *testing.T) {
	bin := testenv.Need(t, "snmptranslate")
	std := testenv.MIBDir(t)
	isolateMIBs(t)
	want := translateBatch(t, bin, []string{"-M", std, "-m", "ALL", "-Ou"}, ucdOIDs)
	loadMIBs(mibSettings{modules: "ALL", modulesSet: true, dirs: std, dirsSet: true}, io.Discard, false)
	var o format.Options
	o.ParseOptions("u")
	for i, s := range ucdOIDs {
		if got := o.OID(parseOID(s)); got != want[i] {
			t.Errorf("-Ou %s: tsnmp get prints\n  %s\nsnmptranslate\n  %s", s, got, want[i])
		}
		if got := formatStyle(parseOID(s), 'u'); got != want[i] {
			t.Errorf("-Ou %s: tsnmp translate prints\n  %s\nsnmptranslate\n  %s", s, got, want[i])
		}
	}
}

// isolateMIBs gives a test its own cache and snmp.conf directories and
// no MIBS or MIBDIRS, and puts the compiled-in modules back after it.
func isolateMIBs(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	t.Cleanup(func() { smi.Install(nil) })
}
