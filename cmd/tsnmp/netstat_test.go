package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager/snmpdtest"
)

// TestNetstatOneInterface compares tsnmp netstat -CI IFACE with
// snmpnetstat's against Net-SNMP's snmpd: the interface table cut to one
// interface (by ifDescr; its columns as wide as the whole table's
// counts make them), with -Cb, -Co and -Cd, an interface that does not
// exist (the header alone), and -CI with -Cw (the interface's traffic
// every second under its name; an unknown name is an error).
func TestNetstatOneInterface(t *testing.T) {
	snmpnetstat := snmpdtest.Require(t, "snmpnetstat")
	a := snmpdtest.Start(t, communities)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	for _, opts := range [][]string{{"-CI", "lo"}, {"-CIlo", "-Cb"}, {"-Ci", "-CI", "lo", "-Cd"}, {"-Co", "-CI", "lo"}, {"-CI", "nosuch0"}} {
		args := append(append([]string{}, opts...), "-v2c", "-c", "public", a.Addr("udp"))
		want := snmpdtest.Tool(t, "snmpnetstat", args...)
		got := runTsnmp(t, "snmpnetstat", args...)
		if !closeOutput(want.Stdout, got.Stdout) || want.Code != got.Code || want.Stderr != got.Stderr || !strings.Contains(want.Stdout, "Name") {
			t.Errorf("%q:\nNet-SNMP %d:\n%s%s\ntsnmp %d:\n%s%s", opts, want.Code, want.Stdout, want.Stderr, got.Code, got.Stdout, got.Stderr)
		}
		if opts[len(opts)-1] == "lo" && strings.Count(got.Stdout, "\n") != 2 {
			t.Errorf("%q: want the header and lo's line:\n%s", opts, got.Stdout)
		}
	}

	digits := regexp.MustCompile(`\d+`)
	row := regexp.MustCompile(`^ *N+ +N+ +N+ +N+ +N+ +N+ +N+( +N+)?$`)
	conf := t.TempDir()
	for _, opts := range [][]string{{"-CI", "lo", "-Cw", "1"}, {"-Cd", "-CIlo", "-Cw1"}, {"-CI", "nosuch0", "-Cw", "1"}} {
		args := append(append([]string{}, opts...), "-v2c", "-c", "public", a.Addr("udp"))
		// Long enough for two samples at least on a loaded machine.
		ctx, cancel := context.WithTimeout(context.Background(), 3600*time.Millisecond)
		net := exec.CommandContext(ctx, snmpnetstat, args...)
		ts := exec.CommandContext(ctx, os.Args[0], append([]string{"netstat"}, args...)...)
		env := append(os.Environ(), "SNMPCONFPATH="+conf, "MIBS=", "MIBDIRS=", "XDG_CACHE_HOME="+t.TempDir(), "HOME="+t.TempDir())
		net.Env, ts.Env = env, append(env, "TSNMP_TEST_MAIN=1")
		var nw, tw, ne, te bytes.Buffer
		net.Stdout, ts.Stdout, net.Stderr, ts.Stderr = &nw, &tw, &ne, &te
		if err := net.Start(); err != nil {
			t.Fatal(err)
		}
		if err := ts.Start(); err != nil {
			t.Fatal(err)
		}
		nerr, terr := net.Wait(), ts.Wait()
		cancel()
		if opts[1] == "nosuch0" {
			if ne.String() != "nosuch0: unknown interface\n" || te.String() != ne.String() || nw.Len() != 0 || tw.Len() != 0 ||
				nerr == nil || terr == nil || net.ProcessState.ExitCode() != 1 || ts.ProcessState.ExitCode() != 1 {
				t.Errorf("%q: Net-SNMP %v %q %q, tsnmp %v %q %q", opts, nerr, nw.String(), ne.String(), terr, tw.String(), te.String())
			}
			continue
		}
		wl, gl := strings.Split(nw.String(), "\n"), strings.Split(tw.String(), "\n")
		if len(wl) < 4 || len(gl) < 4 {
			t.Errorf("%q: want the header and a sample at least:\nNet-SNMP:\n%s\ntsnmp:\n%s", opts, nw.String(), tw.String())
			continue
		}
		ok := strings.Join(wl[:2], "\n") == strings.Join(gl[:2], "\n") && strings.Contains(wl[0], " lo ")
		for _, l := range append(wl[2:len(wl)-1], gl[2:len(gl)-1]...) {
			if !row.MatchString(digits.ReplaceAllStringFunc(l, func(d string) string { return strings.Repeat("N", len(d)) })) {
				ok = false
			}
		}
		if !ok {
			t.Errorf("%q:\nNet-SNMP:\n%s\ntsnmp:\n%s", opts, nw.String(), tw.String())
		}
	}
}
