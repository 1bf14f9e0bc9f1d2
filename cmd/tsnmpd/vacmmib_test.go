package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestVACMTables walks SNMP-VIEW-BASED-ACM-MIB's tables of tsnmpd and of
// snmpd configured with the same group, view and access lines: the rows
// of the configured names read the same.
func TestVACMTables(t *testing.T) {
	testenv.Need(t, "snmpwalk")
	conf := "createUser admin SHA authpass1 AES privpass1\n" +
		"group gadmin usm admin\ngroup gops usm ops\n" +
		"view vall included .1\nview vsys included .1.3.6.1.2.1.1\nview vsys excluded .1.3.6.1.2.1.1.9\nview vif included .1.3.6.1.2.1.2.2.1.2 ff:a0\n" +
		"access gadmin \"\" usm priv exact vall vall vall\naccess gops \"\" usm auth prefix vsys none vif\n"
	snmpd := snmpdtest.Start(t, conf)
	bin := buildDaemon(t)
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	cfg := filepath.Join(t.TempDir(), "snmpd.conf")
	os.WriteFile(cfg, []byte(conf), 0o600)
	startDaemon(t, bin, nil, "--state-dir", t.TempDir(), "--listen", listen, "--snmpd-conf", cfg)
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBDIRS", snmpdtest.MIBDir(t))
	walk := func(addr string) string {
		var lines []string
		for _, tb := range []string{"vacmContextTable", "vacmSecurityToGroupTable", "vacmAccessTable", "vacmViewTreeFamilyTable"} {
			r := snmpdtest.Tool(t, "snmpwalk", "-OQ", "-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", "-r", "1", "-t", "2", addr, tb)
			if r.Code != 0 {
				t.Errorf("snmpwalk %s %s: %q %q", addr, tb, r.Stdout, r.Stderr)
			}
			for _, l := range strings.Split(r.Stdout, "\n") {
				if tb == "vacmContextTable" || strings.Contains(l, `"gadmin"`) || strings.Contains(l, `"gops"`) || strings.Contains(l, `"vall"`) || strings.Contains(l, `"vsys"`) || strings.Contains(l, `"vif"`) {
					lines = append(lines, l)
				}
			}
		}
		return strings.Join(lines, "\n")
	}
	want, got := walk(snmpd.Addr("udp")), walk(listen)
	if want != got || strings.Count(got, "\n") < 20 {
		t.Errorf("VACM tables:\nsnmpd:\n%s\ntsnmpd:\n%s", want, got)
	}
}
