package agent

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/hostres"
	"github.com/tsnmp/tsnmp/mib/ifmib"
	"github.com/tsnmp/tsnmp/mib/ipmib"
	"github.com/tsnmp/tsnmp/mib/tcpudp"
	"github.com/tsnmp/tsnmp/mib/ucd"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// benchBulk answers one GetBulk of reps repetitions of the given columns
// under entry per op, as snmptable asks, and reports the varbinds per op.
func benchBulk(b *testing.B, tree *mib.Tree, entry snmp.OID, cols []uint32, reps int) {
	st, err := engine.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	a := &Agent{Tree: tree, State: st}
	a.SetPolicy(&Policy{Communities: testCommunities{"public": "ro"}, Access: testAccess{}, MaxBulkResponses: -1})
	var vbs []snmp.VarBind
	for _, c := range cols {
		vbs = append(vbs, snmp.VarBind{Name: append(entry.Clone(), c), Value: snmp.NullValue()})
	}
	req := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("public"),
		PDU: snmp.PDU{Type: snmp.GetBulkRequest, RequestID: 1, ErrorIndex: reps, VarBinds: vbs}})
	out := make([]byte, 0, 65536)
	var m snmp.Message
	if err := m.Unmarshal(a.ServeSNMP(benchRef, req, out)); err != nil || m.PDU.ErrorStatus != snmp.NoError {
		b.Fatalf("%v %v", err, m.PDU.ErrorStatus)
	}
	n := len(m.PDU.VarBinds)
	b.ReportAllocs()
	for b.Loop() {
		if a.ServeSNMP(benchRef, req, out) == nil {
			b.Fatal("no response")
		}
	}
	b.ReportMetric(float64(n), "varbinds/op")
}

// BenchmarkBulkTable5x1000 asks 5 columns of a 1,000-row ifTable-like
// table in one GetBulk (the response holds what fits in 65,507 octets).
func BenchmarkBulkTable5x1000(b *testing.B) {
	var tree mib.Tree
	table := rows(1000)
	entry := snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1}
	tree.Register(entry, &mib.Table{Entry: entry, Columns: []uint32{1, 2, 3, 4, 5, 6},
		Rows: func(*mib.Request) mib.Rows { return table }})
	benchBulk(b, &tree, entry, []uint32{1, 2, 3, 4, 5}, 1000)
}

// BenchmarkBulkHostTables asks hrStorageTable's and hrSWRunTable's
// columns, 50 repetitions each, from cached readings.
func BenchmarkBulkHostTables(b *testing.B) {
	var tree mib.Tree
	m := hostres.New(hostres.Config{CacheTTL: time.Hour})
	defer m.Close()
	m.Register(&tree)
	b.Run("hrStorageTable", func(b *testing.B) {
		benchBulk(b, &tree, hostres.HrStorageEntry, []uint32{2, 3, 4, 5, 6}, 50)
	})
	b.Run("hrSWRunTable", func(b *testing.B) {
		benchBulk(b, &tree, hostres.HrSWRunEntry, []uint32{1, 2, 4, 5, 6, 7}, 50)
	})
}

// BenchmarkWalkHostMIBs walks HOST-RESOURCES-MIB, UCD-SNMP-MIB and IP-MIB
// through the agent in GetBulk requests of 25 repetitions, as
// cmd/tsnmpd's BenchmarkWalkHostMIBs does over UDP, each walk 1.1 s after
// the last (outside the timer) so that every reading of the kernel is
// taken afresh, as there.
//
//	go test -run '^$' -bench WalkHostMIBs -benchtime 10x -cpuprofile cpu.out ./agent
func BenchmarkWalkHostMIBs(b *testing.B) {
	st, err := engine.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	all := int64(5)
	var tree mib.Tree
	h := hostres.New(hostres.Config{CacheTTL: time.Second})
	defer h.Close()
	h.Register(&tree)
	// As tsnmpd: prTable counts from hrSWRunTable's process listing.
	u := ucd.New(ucd.Config{CacheTTL: time.Second, Disks: []ucd.Disk{{Path: "/", MinKB: -1, MinPercent: 10}}, IncludeAllDisks: &all,
		Procs: []ucd.Proc{{Name: "sshd"}, {Name: "cron", Max: 2, Min: 1}}, Processes: h.Processes()})
	defer u.Close()
	u.Register(&tree)
	ipmib.New(ipmib.Config{CacheTTL: time.Second}).Register(&tree)
	a := &Agent{Tree: &tree, State: st}
	a.SetPolicy(&Policy{Communities: testCommunities{"public": "ro"}, Access: testAccess{}})
	roots := []snmp.OID{hostres.HostResources, ucd.UCDavis, ipmib.IP}
	benchFreshWalks(b, a, roots, 1100*time.Millisecond)
}

// benchFreshWalks times walks of roots through a, each gap after the
// last (outside the timer), so that the readings a cache keeps less than
// gap are taken afresh for every walk.
func benchFreshWalks(b *testing.B, a *Agent, roots []snmp.OID, gap time.Duration) {
	// The first walk opens what the readings keep open: not timed.
	n := walkBulk(b, a, roots, nil)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		time.Sleep(gap)
		b.StartTimer()
		n = walkBulk(b, a, roots, nil)
	}
	b.ReportMetric(float64(n), "varbinds/walk")
}

// walkBulk walks roots through a in GetBulk requests of 25 repetitions
// over SNMPv2c and returns the varbinds the walk returned; record, when
// not nil, is given each request.
func walkBulk(b testing.TB, a *Agent, roots []snmp.OID, record func(req []byte)) int {
	out := make([]byte, 0, 65536)
	var req []byte
	var m snmp.Message
	return walkRoots(roots, func(pdu *snmp.PDU) []snmp.VarBind {
		req = snmp.AppendMessage(req[:0], &snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: *pdu})
		if record != nil {
			record(slices.Clone(req))
		}
		if err := m.Unmarshal(a.ServeSNMP(benchRef, req, out)); err != nil {
			b.Fatal(err)
		}
		return m.PDU.VarBinds
	})
}

// walkBulkV3 is walkBulk over SNMPv3 with authentication and privacy,
// as benchUser, through mgr (v3Manager's).
func walkBulkV3(b testing.TB, a *Agent, mgr *usm.USM, roots []snmp.OID) int {
	out := make([]byte, 0, 65536)
	var scoped, req []byte
	var sp snmp.ScopedPDU
	id := int32(100)
	return walkRoots(roots, func(pdu *snmp.PDU) []snmp.VarBind {
		id++
		scoped = snmp.AppendScopedPDU(scoped[:0], &snmp.ScopedPDU{ContextEngineID: a.State.EngineID, PDU: *pdu})
		hdr := snmp.V3Message{MsgID: id, MaxSize: 65507, Flags: snmp.FlagAuth | snmp.FlagPriv | snmp.FlagReportable}
		var err error
		if req, err = mgr.GenerateRequest(req[:0], &hdr, a.State.EngineID, "bench", scoped); err != nil {
			b.Fatal(err)
		}
		in, err := mgr.ProcessIncoming(nil, a.ServeSNMP(benchRef, req, out), nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := sp.Unmarshal(in.ScopedPDU); err != nil {
			b.Fatal(err)
		}
		if sp.PDU.Type != snmp.Response {
			b.Fatalf("a %v, not a response", sp.PDU.Type)
		}
		return sp.PDU.VarBinds
	})
}

// walkRoots walks roots in GetBulk requests of 25 repetitions, each sent
// by bulk, which returns the response's varbinds, and returns the
// varbinds the walk returned.
func walkRoots(roots []snmp.OID, bulk func(*snmp.PDU) []snmp.VarBind) int {
	n := 0
	pdu := snmp.PDU{Type: snmp.GetBulkRequest, RequestID: 1, ErrorIndex: 25, VarBinds: make([]snmp.VarBind, 1)}
	for _, root := range roots {
		cur := root
		for done := false; !done; {
			pdu.VarBinds[0] = snmp.VarBind{Name: cur, Value: snmp.NullValue()}
			vbs := bulk(&pdu)
			done = len(vbs) == 0
			for _, vb := range vbs {
				if vb.Value.Type.IsException() || !vb.Name.HasPrefix(root) {
					done = true
					break
				}
				n++
				cur = vb.Name
			}
			cur = cur.Clone()
		}
	}
	return n
}

// BenchmarkWalkAllHostMIBsFresh walks what tsnmp bench hostmib's full
// walk asks (IF-MIB's interfaces group and ifXTable, IP-MIB, ICMP,
// TCP-MIB, UDP-MIB, HOST-RESOURCES-MIB and UCD-SNMP-MIB) through the
// agent, every reading of the kernel taken afresh for each walk, the scan
// of the processes' open files behind the TCP and UDP process columns
// included: the caches keep readings 30 ms and the walks are 40 ms apart
// (outside the timer), which makes a profile of the readings quick to
// take. TSNMP_BENCH_GAP sets another pause between the walks (the caches
// still keep 30 ms): with 20s, what a walk costs after the processor's
// caches went cold, as a polled agent's do.
//
//	go test -run '^$' -bench WalkAllHostMIBsFresh -benchtime 300x -cpuprofile cpu.out ./agent
//	TSNMP_BENCH_GAP=20s go test -run '^$' -bench WalkAllHostMIBsFresh -benchtime 5x ./agent
func BenchmarkWalkAllHostMIBsFresh(b *testing.B) {
	gap := 40 * time.Millisecond
	if s := os.Getenv("TSNMP_BENCH_GAP"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			b.Fatalf("TSNMP_BENCH_GAP=%q: want a duration such as 20s", s)
		}
		gap = d
	}
	a, roots := freshHostAgent(b, 30*time.Millisecond, ucd.Config{})
	benchFreshWalks(b, a, roots, gap)
}

// freshHostAgent returns an agent serving every host MIB (IF-MIB,
// HOST-RESOURCES-MIB, UCD-SNMP-MIB as uc configures it, IP-MIB, TCP-MIB
// and UDP-MIB) to community "public" and to benchUser, its readings kept ttl, the scan
// of the processes' open files too, and the roots of tsnmp bench
// hostmib's full walk.
func freshHostAgent(tb testing.TB, ttl time.Duration, uc ucd.Config) (*Agent, []snmp.OID) {
	st, err := engine.Open(tb.TempDir(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	var tree mib.Tree
	ifmib.New(ifmib.Config{CacheTTL: ttl}).Register(&tree)
	h := hostres.New(hostres.Config{CacheTTL: ttl})
	tb.Cleanup(func() { h.Close() })
	h.Register(&tree)
	uc.CacheTTL, uc.Processes = ttl, h.Processes()
	u := ucd.New(uc)
	tb.Cleanup(func() { u.Close() })
	u.Register(&tree)
	ip := ipmib.New(ipmib.Config{CacheTTL: ttl})
	ip.Register(&tree)
	tcpudp.New(tcpudp.Config{CacheTTL: ttl, OwnerTTL: ttl, NetStats: ip.NetStats()}).Register(&tree)
	a := &Agent{Tree: &tree, State: st}
	setTestPolicy(a)
	return a, []snmp.OID{{1, 3, 6, 1, 2, 1, 2}, ipmib.IP, {1, 3, 6, 1, 2, 1, 5}, {1, 3, 6, 1, 2, 1, 6}, {1, 3, 6, 1, 2, 1, 7},
		hostres.HostResources, {1, 3, 6, 1, 2, 1, 31, 1}, ucd.UCDavis}
}

// BenchmarkWalkHostMIBsCached replays, per op, the GetBulk requests
// (25 repetitions) of a walk of IP-MIB, ICMP, TCP-MIB, UDP-MIB,
// HOST-RESOURCES-MIB and UCD-SNMP-MIB through the agent, from readings
// kept an hour: the agent's handlers, decoding and encoding alone, without
// the kernel's readings or a transport.
func BenchmarkWalkHostMIBsCached(b *testing.B) {
	st, err := engine.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	all := int64(5)
	var tree mib.Tree
	h := hostres.New(hostres.Config{CacheTTL: time.Hour})
	defer h.Close()
	h.Register(&tree)
	u := ucd.New(ucd.Config{CacheTTL: time.Hour, Disks: []ucd.Disk{{Path: "/", MinKB: -1, MinPercent: 10}}, IncludeAllDisks: &all,
		Procs: []ucd.Proc{{Name: "sshd"}, {Name: "cron", Max: 2, Min: 1}}, Processes: h.Processes()})
	defer u.Close()
	u.Register(&tree)
	ip := ipmib.New(ipmib.Config{CacheTTL: time.Hour})
	ip.Register(&tree)
	tcpudp.New(tcpudp.Config{CacheTTL: time.Hour, NetStats: ip.NetStats()}).Register(&tree)
	a := &Agent{Tree: &tree, State: st}
	a.SetPolicy(&Policy{Communities: testCommunities{"public": "ro"}, Access: testAccess{}})
	roots := []snmp.OID{ipmib.IP, {1, 3, 6, 1, 2, 1, 5}, {1, 3, 6, 1, 2, 1, 6}, {1, 3, 6, 1, 2, 1, 7}, hostres.HostResources, ucd.UCDavis}
	out := make([]byte, 0, 65536)
	var reqs [][]byte
	vbs := walkBulk(b, a, roots, func(req []byte) { reqs = append(reqs, req) })
	b.ReportAllocs()
	for b.Loop() {
		for _, req := range reqs {
			if a.ServeSNMP(benchRef, req, out) == nil {
				b.Fatal("no response")
			}
		}
	}
	b.ReportMetric(float64(len(reqs)), "requests/walk")
	b.ReportMetric(float64(vbs), "varbinds/walk")
}
