package ipmib

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestCountersShared checks that IP-MIB's scalars, ipSystemStatsTable and
// the ICMP group serve one reading of /proc/net/snmp, snmp6 and netstat
// for the cache time, whichever asks first, and all the next reading
// after it.
func TestCountersShared(t *testing.T) {
	dir := t.TempDir()
	net := filepath.Join(dir, "proc/thread-self/net")
	if err := os.MkdirAll(net, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(n int) {
		t.Helper()
		v := func(s string) string { return strings.ReplaceAll(s, "N", itoa(n)) }
		files := map[string]string{
			"snmp": v("Ip: Forwarding DefaultTTL InReceives OutRequests\nIp: 1 64 N1 N2\n" +
				"Icmp: InMsgs InErrors OutMsgs OutErrors InEchos OutEchoReps\nIcmp: N3 0 N4 0 N5 N6\n"),
			"netstat": v("IpExt: InNoRoutes InOctets OutOctets\nIpExt: 0 N7 N8\n"),
			"snmp6":   v("Ip6InReceives N9\nIcmp6InMsgs N10\nIcmp6InType128 N11\n"),
		}
		for name, s := range files {
			if err := os.WriteFile(filepath.Join(net, name), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const ttl = time.Hour // the test's requests give the time
	m := New(Config{CacheTTL: ttl, FS: procfs.FS{Root: dir}})
	var tree mib.Tree
	m.Register(&tree)
	t0 := time.Now()
	get := func(at time.Duration, oid snmp.OID) uint64 {
		t.Helper()
		r := mib.NewRequest(context.Background(), t0.Add(at))
		defer r.Release()
		v := tree.Get(r, oid)
		if v.Type != snmp.Counter32 && v.Type != snmp.Counter64 {
			t.Fatalf("%v: %v", oid, v)
		}
		return v.Num
	}
	ipInReceives := IP.Append(3, 0)
	sysInReceives4 := IpSystemStatsEntry.Append(4, 1) // HC
	sysInOctets4 := IpSystemStatsEntry.Append(6, 1)   // HC, from netstat
	sysInReceives6 := IpSystemStatsEntry.Append(4, 2) // HC, from snmp6
	icmpInMsgs := ICMP.Append(1, 0)
	icmp6InMsgs := IcmpStatsEntry.Append(2, 2)
	echo4 := IcmpMsgStatsEntry.Append(3, 1, 8)
	echo6 := IcmpMsgStatsEntry.Append(3, 2, 128)

	write(1)
	if got := get(0, ipInReceives); got != 11 {
		t.Fatalf("ipInReceives %d, want 11", got)
	}
	if got := get(0, icmp6InMsgs); got != 110 {
		t.Fatalf("icmpStatsInMsgs.ipv6 %d, want 110", got)
	}
	// The files change; within the cache time every object, also those
	// of tables not asked yet, serves the first reading of snmp and
	// snmp6; netstat, first read now, is the new one.
	write(2)
	for _, c := range []struct {
		oid  snmp.OID
		want uint64
	}{
		{icmpInMsgs, 13}, {sysInReceives4, 11}, {sysInOctets4, 27}, {sysInReceives6, 19},
		{icmp6InMsgs, 110}, {echo4, 15}, {echo6, 111}, {ipInReceives, 11},
	} {
		if got := get(ttl/2, c.oid); got != c.want {
			t.Errorf("within the cache time, %v = %d, want %d (the first reading)", c.oid, got, c.want)
		}
	}
	// After it, all serve the next reading.
	for _, c := range []struct {
		oid  snmp.OID
		want uint64
	}{
		{sysInOctets4, 27}, {icmpInMsgs, 23}, {sysInReceives4, 21}, {sysInReceives6, 29},
		{icmp6InMsgs, 210}, {echo4, 25}, {echo6, 211}, {ipInReceives, 21},
	} {
		if got := get(ttl+time.Second, c.oid); got != c.want {
			t.Errorf("after the cache time, %v = %d, want %d (the second reading)", c.oid, got, c.want)
		}
	}
}

// TestSysctlsReadAgain checks that the scalars' files, kept open, serve
// the value they hold at each reading after the cache time, and that a
// file missing at first is read once it is there.
func TestSysctlsReadAgain(t *testing.T) {
	dir := t.TempDir()
	write := func(name, v string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(sysctlFiles[0], "1")
	write(sysctlFiles[1], "64")
	write(sysctlFiles[2], "0") // no hop_limit yet
	write(sysctlFiles[4], "30")
	const ttl = time.Hour
	m := New(Config{CacheTTL: ttl, FS: procfs.FS{Root: dir}})
	var tree mib.Tree
	m.Register(&tree)
	t0 := time.Now()
	get := func(at time.Duration, sub uint32) int64 {
		t.Helper()
		r := mib.NewRequest(context.Background(), t0.Add(at))
		defer r.Release()
		v := tree.Get(r, IP.Append(sub, 0))
		if v.Type != snmp.Integer {
			t.Fatalf("ip.%d: %v", sub, v)
		}
		return v.Int()
	}
	if f, ttl, hop := get(0, 1), get(0, 2), get(0, 26); f != 1 || ttl != 64 || hop != 0 {
		t.Fatalf("ipForwarding %d, ipDefaultTTL %d, ipv6IpDefaultHopLimit %d; want 1, 64, 0", f, ttl, hop)
	}
	// ipReasmTimeout: an Integer32 of seconds, the sysctl, not the
	// kernel's count of datagrams whose reassembly timed out.
	if got := get(0, 13); got != 30 {
		t.Errorf("ipReasmTimeout %d, want 30 (ipfrag_time)", got)
	}
	write(sysctlFiles[0], "0")
	write(sysctlFiles[1], "128")
	write(sysctlFiles[3], "255")
	write(sysctlFiles[4], "45")
	if got := get(ttl/2, 2); got != 64 {
		t.Errorf("ipDefaultTTL %d within the cache time, want 64", got)
	}
	if f, ttl, hop := get(ttl+time.Second, 1), get(ttl+time.Second, 2), get(ttl+time.Second, 26); f != 2 || ttl != 128 || hop != 255 {
		t.Errorf("after the cache time: ipForwarding %d, ipDefaultTTL %d, ipv6IpDefaultHopLimit %d; want 2 (notForwarding), 128, 255", f, ttl, hop)
	}
	if got := get(ttl+time.Second, 13); got != 45 {
		t.Errorf("after the cache time: ipReasmTimeout %d, want 45", got)
	}
}

// TestStats6Positions checks that the counters read from a link's array
// through positions are those names gives them, for every layout.
func TestStats6Positions(t *testing.T) {
	for _, lay := range []stats6Layout{layout37, layout38, layout615} {
		st := make([]uint64, len(lay))
		for i := range st {
			st[i] = uint64(1000 + i)
		}
		byName := lay.names(st)
		pos := lay.positions()
		n := 0
		for _, f := range v6From {
			var got uint64
			if p := pos[f.stat]; p > 0 {
				got = st[p-1]
			}
			if got != byName[f.name] {
				t.Errorf("%d counters: %s %d, want %d", len(lay), f.name, got, byName[f.name])
			}
			if got != 0 {
				n++
			}
		}
		if n < 20 {
			t.Errorf("%d counters: %d found", len(lay), n)
		}
	}
}
