package main

import (
	"io"
	"slices"
	"testing"
)

// TestSnmpdFlags: snmpd's command lines, as Debian's unit and init
// scripts write them, map onto tsnmpd's options.
func TestSnmpdFlags(t *testing.T) {
	o, err := parseFlags([]string{"-LOw", "-u", "Debian-snmp", "-g", "Debian-snmp", "-I", "-smux,mteTrigger,mteTriggerConf", "-f", "-p", "/run/snmpd.pid",
		"-C", "-c", "/etc/snmp/snmpd.conf", "--sysLocation=lab 2", "-x", "/run/agentx", "udp:161", "udp6:[::1]:161"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.logFile != "-" || o.user != "Debian-snmp" || o.group != "Debian-snmp" || o.pidFile != "/run/snmpd.pid" || o.snmpdConf != "/etc/snmp/snmpd.conf" ||
		o.agentXSocket != "/run/agentx" || !slices.Equal(o.listen, []string{"udp:161", "udp6:[::1]:161"}) || !slices.Equal(o.confLines, []string{"sysLocation lab 2"}) || len(o.notes) != 1 {
		t.Errorf("options %+v", o)
	}
	for _, c := range []struct {
		args []string
		ok   func(*options) bool
	}{
		{[]string{"-Lf", "/var/log/x.log"}, func(o *options) bool { return o.logFile == "/var/log/x.log" }},
		{[]string{"-Lf/var/log/y.log"}, func(o *options) bool { return o.logFile == "/var/log/y.log" }},
		{[]string{"-Ls", "d"}, func(o *options) bool { return o.syslog == "d" }},
		{[]string{"-LS6d"}, func(o *options) bool { return o.syslog == "d" }},
		{[]string{"-Le", "-a"}, func(o *options) bool { return o.logFile == "" && o.logLevel == "debug" }},
		{[]string{"-Dusm,snmp"}, func(o *options) bool { return o.logLevel == "debug" }},
		{[]string{"-fC", "--state-dir", "/x", "--listen=tcp:1161"}, func(o *options) bool { return o.stateDir == "/x" && slices.Equal(o.listen, []string{"tcp:1161"}) }},
		{[]string{"--strict", "-c", "a.conf", "--", "1161"}, func(o *options) bool { return o.strict && slices.Equal(o.listen, []string{"1161"}) }},
	} {
		o, err := parseFlags(c.args, io.Discard)
		if err != nil || !c.ok(o) {
			t.Errorf("%q: %+v, %v", c.args, o, err)
		}
	}
	for _, bad := range [][]string{{"-X"}, {"-Q"}, {"-Lz"}, {"-c"}, {"--nosuch"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
