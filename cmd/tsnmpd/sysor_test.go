package main

import (
	"testing"

	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/mib/ucd"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestSysORIDs checks that every sysORID names the MODULE-IDENTITY,
// compliance statement or group of a module the agent implements, as the modules
// define it: an ID one arc off (a sibling module, a group) would tell
// managers the agent implements something else.
func TestSysORIDs(t *testing.T) {
	want := map[string]string{} // OID -> definition
	for _, name := range []string{
		"SNMPv2-MIB::snmpMIB",
		"IF-MIB::ifMIB",
		"SNMP-FRAMEWORK-MIB::snmpFrameworkMIBCompliance",
		"SNMP-MPD-MIB::snmpMPDCompliance",
		"SNMP-USER-BASED-SM-MIB::usmMIBCompliance",
		// VACM is listed by its basic group, as Net-SNMP lists it.
		"SNMP-VIEW-BASED-ACM-MIB::vacmBasicGroup",
		"HOST-RESOURCES-MIB::hostResourcesMibModule",
		"IP-MIB::ipMIB",
		"IP-FORWARD-MIB::ipForward",
		"TCP-MIB::tcpMIB",
		"UDP-MIB::udpMIB",
	} {
		oid, err := smi.Resolve(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want[snmp.OID(oid).String()] = name
	}
	// UCD-SNMP-MIB and UCD-DISKIO-MIB are not among the compiled-in
	// modules: ucdavis is { enterprises 2021 }, ucdDiskIOMIB is
	// { ucdExperimental 15 } with ucdExperimental { ucdavis 13 }.
	want["1.3.6.1.4.1.2021"] = "UCD-SNMP-MIB::ucdavis"
	want["1.3.6.1.4.1.2021.13.15"] = "UCD-DISKIO-MIB::ucdDiskIOMIB"
	listed := map[string]bool{}
	for _, or := range sysORs {
		id := or.ID.String()
		if _, ok := want[id]; !ok {
			t.Errorf("sysORID %s (%q) is none of the module identities the agent implements", id, or.Descr)
		}
		listed[id] = true
	}
	for id, name := range want {
		if !listed[id] {
			t.Errorf("sysORTable lacks %s (%s)", name, id)
		}
	}
	if ucd.DiskIOModuleID.String() != "1.3.6.1.4.1.2021.13.15" || ucd.UCDavis.String() != "1.3.6.1.4.1.2021" {
		t.Errorf("UCD module identities %v, %v", ucd.UCDavis, ucd.DiskIOModuleID)
	}
}
