package ucd

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestRecorded serves the MIB from recorded /proc files.
func TestRecorded(t *testing.T) {
	fs := procfs.FS{Root: "testdata"}
	h := procfs.NewCPUHistory(fs, time.Hour)
	defer h.Close()
	m := New(Config{FS: fs, CPU: h, Procs: []Proc{{Name: "tsnmp-none", Min: 1}}})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	got := mibtest.Walk(&tree, UCDavis)
	for oid, want := range map[string]string{
		"1.3.6.1.4.1.2021.4.5.0":          "24684084",              // memTotalReal
		"1.3.6.1.4.1.2021.4.6.0":          "24097380",              // memAvailReal: MemAvailable
		"1.3.6.1.4.1.2021.4.11.0":         "24097380",              // memTotalFree
		"1.3.6.1.4.1.2021.4.14.0":         "84716",                 // memBuffer
		"1.3.6.1.4.1.2021.4.15.0":         "1843644",               // memCached: Cached + SReclaimable
		"1.3.6.1.4.1.2021.4.100.0":        "1",                     // memSwapError: no swap
		"1.3.6.1.4.1.2021.10.1.3.1":       "hex:392e3837",          // laLoad "9.87"
		"1.3.6.1.4.1.2021.10.1.5.3":       "294",                   // laLoadInt
		"1.3.6.1.4.1.2021.10.1.6.1":       "opaque:9f7804411deb85", // 9.87 as a float
		"1.3.6.1.4.1.2021.11.50.0":        "54362",                 // ssCpuRawUser
		"1.3.6.1.4.1.2021.11.59.0":        "1893588",               // ssRawInterrupts
		"1.3.6.1.4.1.2021.11.57.0":        "6140296",               // ssIORawSent: pgpgout * 2
		"1.3.6.1.4.1.2021.11.67.0":        "2",                     // ssCpuNumCpus
		"1.3.6.1.4.1.2021.2.1.5.1":        "0",                     // prCount
		"1.3.6.1.4.1.2021.2.1.100.1":      "1",                     // prErrorFlag
		"1.3.6.1.4.1.2021.13.15.1.1.2.9":  "hex:766461",            // diskIODevice vda
		"1.3.6.1.4.1.2021.13.15.1.1.12.9": "1730798592",            // diskIONReadX: sectors * 512
		"1.3.6.1.4.1.2021.13.15.1.1.14.9": "15816000",              // diskIOBusyTime in µs
	} {
		if got[oid] != want {
			t.Errorf("%s = %q, want %q", oid, got[oid], want)
		}
	}
	// One sample: no averages yet.
	if _, ok := got["1.3.6.1.4.1.2021.11.9.0"]; ok {
		t.Error("ssCpuUser served without a minute of samples")
	}
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	if v := tree.Get(r, snmp.MustParseOID("1.3.6.1.4.1.2021.11.9.0")); v.Type != snmp.NoSuchInstance {
		t.Errorf("ssCpuUser = %v", v)
	}
	// Two samples a minute apart: 25% user time.
	s0, _ := fs.ReadSample(time.Now())
	s1 := s0
	s1.At = s0.At.Add(time.Minute)
	s1.Stat.All.User += 1500
	s1.Stat.All.Idle += 4500
	s1.Stat.Ctxt += 6000
	h.Add(s1)
	h2 := procfs.NewCPUHistory(procfs.FS{Root: "/nonexistent"}, time.Hour)
	defer h2.Close()
	h2.Add(s0)
	h2.Add(s1)
	m.cpu = h2
	for oid, want := range map[string]int64{"1.3.6.1.4.1.2021.11.9.0": 25, "1.3.6.1.4.1.2021.11.11.0": 75, "1.3.6.1.4.1.2021.11.8.0": 100} {
		if v := tree.Get(r, snmp.MustParseOID(oid)); v.Type != snmp.Integer || v.Int() != want {
			t.Errorf("%s = %v, want %d", oid, v, want)
		}
	}
	// A GetBulk through the tables answers from one reading.
	vbs := tree.List(r, UCDavis, nil, 500)
	if len(vbs) < 100 {
		t.Errorf("GetBulk gave %d varbinds", len(vbs))
	}
}

// TestSetLaConfig sets laConfig, which the load directive did not give.
func TestSetLaConfig(t *testing.T) {
	fs := procfs.FS{Root: "testdata"}
	h := procfs.NewCPUHistory(fs, time.Hour)
	defer h.Close()
	for _, configured := range []bool{false, true} {
		cfg := Config{FS: fs, CPU: h}
		if configured {
			cfg.Load = &[3]float64{12, 10, 5}
		}
		m := New(cfg)
		var tree mib.Tree
		m.Register(&tree)
		r := mib.NewRequest(context.Background(), time.Now())
		set := func(oid string, v snmp.Value) snmp.ErrorStatus {
			vb := snmp.VarBind{Name: snmp.MustParseOID(oid), Value: v}
			s, ok := tree.Setter(vb.Name)
			if !ok {
				return snmp.NotWritable
			}
			if st := s.TestSet(r, vb); st != snmp.NoError {
				return st
			}
			return s.CommitSet(r, []snmp.VarBind{vb})
		}
		want := snmp.NoError
		if configured {
			want = snmp.NotWritable
		}
		if st := set("1.3.6.1.4.1.2021.10.1.4.3", snmp.StringValue("2.5")); st != want {
			t.Errorf("configured %v: set laConfig.3 = %v, want %v", configured, st, want)
		}
		for _, c := range []struct {
			oid string
			v   snmp.Value
			st  snmp.ErrorStatus
		}{
			{"1.3.6.1.4.1.2021.10.1.4.1", snmp.IntegerValue(2), snmp.WrongType},
			{"1.3.6.1.4.1.2021.10.1.4.1", snmp.StringValue("123456789"), snmp.WrongLength},
			{"1.3.6.1.4.1.2021.10.1.4.1", snmp.StringValue("-1"), snmp.WrongValue},
			{"1.3.6.1.4.1.2021.10.1.3.1", snmp.StringValue("1"), snmp.NotWritable},
			{"1.3.6.1.4.1.2021.10.1.4.4", snmp.StringValue("1"), snmp.NoCreation},
		} {
			if st := set(c.oid, c.v); st != c.st {
				t.Errorf("set %s = %v: %v, want %v", c.oid, c.v, st, c.st)
			}
		}
		got := mibtest.Walk(&tree, LaEntry)
		wantCfg, wantFlag := "hex:322e3530", "1" // "2.50"; load 2.94 > 2.5
		if configured {
			wantCfg, wantFlag = "hex:352e3030", "0" // "5.00"
		}
		if got["1.3.6.1.4.1.2021.10.1.4.3"] != wantCfg || got["1.3.6.1.4.1.2021.10.1.100.3"] != wantFlag {
			t.Errorf("configured %v: laConfig.3 %s laErrorFlag.3 %s", configured, got["1.3.6.1.4.1.2021.10.1.4.3"], got["1.3.6.1.4.1.2021.10.1.100.3"])
		}
		r.Release()
		m.Close()
	}
}

// TestProcRegexp counts processes by a regular expression over their
// command line (path, a space, parameters), as Net-SNMP built with PCRE
// does; Debian's snmpd is built without it, so this test has no peer.
func TestProcRegexp(t *testing.T) {
	name := fmt.Sprintf("tsnmpre%d", os.Getpid()%1000000)
	startNamed(t, name, 2) // runs "DIR/NAME 60"
	ps := procfs.NewProcesses(procfs.Host, time.Second)
	m := New(Config{Processes: ps, Procs: []Proc{
		{Name: "by-path", Max: 0, Min: 1, Regexp: regexp.MustCompile("/" + name + " 60$")},
		{Name: "too-many", Max: 1, Min: 0, Regexp: regexp.MustCompile("^/.*/" + name + " ")},
		{Name: "absent", Max: 0, Min: 1, Regexp: regexp.MustCompile("/" + name + " 61$")},
		{Name: name, Max: 0, Min: 1}, // by task name, beside the others
	}})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	got := mibtest.Walk(&tree, PrEntry)
	const pr = "1.3.6.1.4.1.2021.2.1."
	hex := func(s string) string { return "hex:" + fmt.Sprintf("%x", s) }
	for k, want := range map[string]string{
		pr + "2.1": hex("by-path"), pr + "5.1": "2", pr + "100.1": "0",
		pr + "5.2": "2", pr + "100.2": "1", pr + "101.2": hex("Too many too-many running (# = 2)"),
		pr + "5.3": "0", pr + "100.3": "1", pr + "101.3": hex("No absent process running"),
		pr + "5.4": "2",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
}

// TestFileTable serves a file's size in kB and its error flag, and keeps
// the size last read once the file is gone, as Net-SNMP does.
func TestFileTable(t *testing.T) {
	f := t.TempDir() + "/watched"
	if err := os.WriteFile(f, make([]byte, 5000), 0o600); err != nil {
		t.Fatal(err)
	}
	m := New(Config{Files: []File{{Path: f, MaxKB: 3}, {Path: f + ".none", MaxKB: -1}}, CacheTTL: time.Nanosecond})
	defer m.Close()
	var tree mib.Tree
	m.Register(&tree)
	const fe = "1.3.6.1.4.1.2021.15.1."
	check := func(want map[string]string) {
		t.Helper()
		got := mibtest.Walk(&tree, FileEntry)
		for k, v := range want {
			if got[fe+k] != v {
				t.Errorf("%s = %q, want %q", fe+k, got[fe+k], v)
			}
		}
	}
	check(map[string]string{"3.1": "4", "4.1": "3", "100.1": "1", "3.2": "0", "4.2": "-1", "100.2": "0",
		"101.1": "hex:" + fmt.Sprintf("%x", f+": size exceeds 3kb (= 4kb)")})
	os.Remove(f)
	time.Sleep(time.Millisecond)
	check(map[string]string{"3.1": "4", "100.1": "1"})
}
