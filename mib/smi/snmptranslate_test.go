package smi

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

// snmptranslate runs Net-SNMP's snmptranslate over the standard modules.
// It skips the test when the tool or modules are missing, except under CI.
func snmptranslate(t *testing.T) func(args ...string) string {
	t.Helper()
	bin := testenv.Need(t, "snmptranslate")
	dir, err := filepath.Abs(testenv.MIBDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-M", dir, "-m", "ALL"}, args...)...)
		cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS=", "SNMPCONFPATH="+t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("snmptranslate %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
}

// TestSnmptranslate compares Resolve and Format with Net-SNMP for a sample
// of names and instances.
func TestSnmptranslate(t *testing.T) {
	translate := snmptranslate(t)
	var names []string
	nodes := Nodes()
	for i := 0; i < len(nodes); i += len(nodes) / 30 {
		names = append(names, nodes[i].String())
	}
	names = append(names,
		"SNMPv2-MIB::sysDescr.0",
		"SNMPv2-MIB::sysUpTime.0",
		"IF-MIB::ifDescr.2",
		"IF-MIB::ifHCInOctets.3",
		"IF-MIB::ifAdminStatus.1",
		`SNMP-VIEW-BASED-ACM-MIB::vacmGroupName.3."user"`,
		`SNMP-VIEW-BASED-ACM-MIB::vacmAccessStatus."group"."ctx".3.noAuthNoPriv`,
		`SNMP-VIEW-BASED-ACM-MIB::vacmViewTreeFamilyMask."all".3.1.3.6`,
		`SNMP-USER-BASED-SM-MIB::usmUserStatus."engine"."user"`,
		`SNMP-TARGET-MIB::snmpTargetAddrTAddress.'target1'`,
		`SNMP-TARGET-MIB::snmpTargetParamsSecurityName.'p'`,
		`SNMP-NOTIFICATION-MIB::snmpNotifyTag.'n1'`,
		`SNMP-COMMUNITY-MIB::snmpCommunityName.'public'`,
		`IP-MIB::ipAddressIfIndex.ipv4."10.1.2.3"`,
		"IP-MIB::ipAdEntIfIndex.10.0.0.1",
		"RFC1213-MIB::ipRouteDest.10.0.0.1",
		"IP-FORWARD-MIB::ipCidrRouteIfIndex.10.0.0.0.255.0.0.0.0.10.0.0.1",
		"BRIDGE-MIB::dot1dTpFdbPort.97.98.99.100.101.102",
		"TCP-MIB::tcpConnState.10.0.0.1.80.10.0.0.2.1234",
		"HOST-RESOURCES-MIB::hrStorageDescr.1",
		"DISMAN-EVENT-MIB::mteTriggerComment.\"owner\".'trig'",
		"NOTIFICATION-LOG-MIB::nlmLogTime.\"log\".5",
		"SNMPv2-SMI::enterprises.8072.3",
		"SNMPv2-MIB::coldStart",
	)
	checked := 0
	for _, name := range names {
		oid, err := Resolve(name)
		if err != nil {
			t.Errorf("Resolve(%q): %v", name, err)
			continue
		}
		want := translate("-On", name)
		if got := Format(oid, true); got != want {
			t.Errorf("Resolve(%q) = %s, snmptranslate -On gives %s", name, got, want)
		}
		numeric := Format(oid, true)
		if got, want := Format(oid, false), translate(numeric); got != want {
			t.Errorf("Format(%s) = %s, snmptranslate gives %s", numeric, got, want)
		}
		if got, err := Resolve(Format(oid, false)); err != nil || !slices.Equal(got, oid) {
			t.Errorf("Resolve(Format(%s)) = %v, %v", numeric, got, err)
		}
		checked++
	}
	// Unqualified names, looked up in any module (-IR).
	for _, name := range []string{"snmpCommunityGroup", "ifDescr.1", "sysDescr.0", "ipAdEntAddr.10.0.0.1", `vacmGroupName.3."user"`, "mib-2", "org"} {
		oid, err := Resolve(name)
		if err != nil {
			t.Errorf("Resolve(%q): %v", name, err)
			continue
		}
		if got, want := Format(oid, true), translate("-IR", "-On", name); got != want {
			t.Errorf("Resolve(%q) = %s, snmptranslate -IR -On gives %s", name, got, want)
		}
		checked++
	}
	if checked < 50 {
		t.Errorf("compared only %d names", checked)
	}
}
