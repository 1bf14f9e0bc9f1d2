package main

import (
	"testing"

	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestOutputOptionsIndexesAndHex compares snmpwalk's -Ob (indexes as
// numbers), -OX (indexes in brackets), -OT (hex strings with their text)
// and -O0 (hex DISPLAY-HINT digits in pairs), alone and combined with the
// name options, with tsnmp's, against Net-SNMP's snmpd: integer, enum,
// string with and without DISPLAY-HINT, InetAddress, IpAddress,
// NetworkAddress and OBJECT IDENTIFIER indexes. tsnmp ignored these
// options before.
func TestOutputOptionsIndexesAndHex(t *testing.T) {
	a := snmpdtest.Start(t, communities+"extend hello /bin/echo hello world\n")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	for _, o := range []string{"-Ob", "-OX", "-OT", "-O0", "-OXf", "-Obf", "-OXs", "-ObX", "-OTq", "-OXS"} {
		for _, table := range []string{"vacmAccessContextMatch", "vacmViewTreeFamilyMask", "ifPhysAddress", "ipAddressIfIndex",
			"atPhysAddress", "ipCidrRouteIfIndex", "snmpEngineID", "sysORID", "nsExtendOutLine"} {
			same(t, "snmpwalk", o, "-v2c", "-c", "public", a.Addr("udp"), table)
		}
	}
	same(t, "snmpget", "-OX", "-v2c", "-c", "public", a.Addr("udp"), "sysDescr.0", `nsExtendStatus."hello"`)
}
