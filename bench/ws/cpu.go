package ws

import (
	"bufio"
	"context"
	"debug/elf"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/ifmib"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	"github.com/tsnmp/tsnmp/webmgmt"
)

// Codecs measured by the coding experiment.
const (
	CodeBER      = "BER"
	CodeXML      = "XML"
	CodeSOAP     = "SOAP"
	CodeJSON     = "JSON"
	CodeGzipSOAP = "gzip(SOAP)"
	CodeGzipJSON = "gzip(JSON)"
	CodeZstdJSON = "zstd(JSON)"
)

// Codecs lists the codecs in report order.
var Codecs = []string{CodeBER, CodeXML, CodeSOAP, CodeJSON, CodeGzipSOAP, CodeGzipJSON, CodeZstdJSON}

// Messages holds one message carrying n ifTable objects in every
// encoding, and the coding operations the experiment times.
type Messages struct {
	N      int
	BER    []byte
	Docs   map[webmgmt.Format][]byte
	Result *webmgmt.Result
	msg    snmp.Message
	buf    []byte
}

// NewMessages reads the first n ifTable objects from the agent (through
// the same session API the HTTP handler uses) and encodes them.
func NewMessages(a *loopagent.Agent, n int) (*Messages, func(), error) {
	p := a.Agent.Policy()
	name, ctxName, ok := p.Communities.Lookup([]byte("public"), netip.MustParseAddr("127.0.0.1"))
	if !ok {
		return nil, nil, fmt.Errorf("community public unknown")
	}
	s, err := a.Agent.OpenSession(context.Background(), agent.Principal{SecurityModel: snmp.SecurityModelV2c,
		SecurityName: name, Level: snmp.NoAuthNoPriv, ContextName: ctxName}, time.Now())
	if err != nil {
		return nil, nil, err
	}
	res, err := webmgmt.ParsePath("ifTable")
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	r, herr := webmgmt.Collect(s, res, n)
	if herr != nil {
		s.Close()
		return nil, nil, herr
	}
	m := &Messages{N: n, Result: r, Docs: map[webmgmt.Format][]byte{}}
	m.msg = snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.Response, RequestID: 1}}
	for _, o := range r.Objects {
		m.msg.PDU.VarBinds = append(m.msg.PDU.VarBinds, snmp.VarBind{Name: o.OID, Value: o.Value})
	}
	m.BER = snmp.AppendMessage(nil, &m.msg)
	for _, f := range []webmgmt.Format{webmgmt.JSON, webmgmt.XML, webmgmt.SOAP} {
		m.Docs[f] = webmgmt.Encode(nil, f, r)
	}
	return m, s.Close, nil
}

// Op returns the operation timed for a codec: decoding the message and
// encoding it again (or, for compression, compressing the document).
func (m *Messages) Op(codec string) func() {
	var dec snmp.Message
	switch codec {
	case CodeBER:
		return func() {
			if err := dec.Unmarshal(m.BER); err != nil {
				panic(err)
			}
			m.buf = snmp.AppendMessage(m.buf[:0], &dec)
		}
	case CodeXML, CodeSOAP, CodeJSON:
		f := map[string]webmgmt.Format{CodeXML: webmgmt.XML, CodeSOAP: webmgmt.SOAP, CodeJSON: webmgmt.JSON}[codec]
		doc := m.Docs[f]
		return func() {
			if _, err := webmgmt.Decode(f, doc); err != nil {
				panic(err)
			}
			m.buf = webmgmt.Encode(m.buf[:0], f, m.Result)
		}
	case CodeGzipSOAP:
		return func() { m.buf = webmgmt.Compress(m.buf[:0], "gzip", m.Docs[webmgmt.SOAP]) }
	case CodeGzipJSON:
		return func() { m.buf = webmgmt.Compress(m.buf[:0], "gzip", m.Docs[webmgmt.JSON]) }
	case CodeZstdJSON:
		return func() { m.buf = webmgmt.Compress(m.buf[:0], "zstd", m.Docs[webmgmt.JSON]) }
	}
	panic("unknown codec " + codec)
}

// timeOp returns the time of one op: the lowest mean over five batches
// that together last at least d, so that preemption by other work on the
// machine does not count.
func timeOp(op func(), d time.Duration) float64 {
	op()
	best := 0.0
	for batch := 0; batch < 5; batch++ {
		n := 0
		start := time.Now()
		for time.Since(start) < d/5 || n < 3 {
			op()
			n++
		}
		if v := float64(time.Since(start).Nanoseconds()) / float64(n); best == 0 || v < best {
			best = v
		}
	}
	return best
}

func runCoding(o *Options, a *loopagent.Agent) []CodingPoint {
	d := 100 * time.Millisecond
	if o.Quick {
		d = 2 * time.Millisecond
	}
	var out []CodingPoint
	for _, n := range o.Counts {
		n = min(n, o.Rows*22)
		m, done, err := NewMessages(a, n)
		if err != nil {
			continue
		}
		p := CodingPoint{Objects: n, NsPerOp: map[string]float64{}}
		for _, c := range Codecs {
			p.NsPerOp[c] = timeOp(m.Op(c), d)
		}
		done()
		out = append(out, p)
	}
	return out
}

// kernelTable is an in-process IF-MIB over the kernel's interfaces.
type kernelTable struct {
	m    *ifmib.MIB
	tree mib.Tree
	oids []snmp.OID
}

func newKernelTable(ttl time.Duration) *kernelTable {
	k := &kernelTable{m: ifmib.New(ifmib.Config{CacheTTL: ttl})}
	k.m.Register(&k.tree)
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	for oid := ifTableOID; ; {
		vb, ok := k.tree.Next(r, oid)
		if !ok || !vb.Name.HasPrefix(ifTableOID) {
			break
		}
		k.oids = append(k.oids, vb.Name.Clone())
		oid = vb.Name
	}
	return k
}

// objects returns n instances of the table, repeating it when n is
// larger than the table.
func (k *kernelTable) objects(n int) []snmp.OID {
	out := make([]snmp.OID, n)
	for i := range out {
		out[i] = k.oids[i%len(k.oids)]
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func runRetrieval(ctx context.Context, o *Options, rep *Report) ([]RetrievalPoint, error) {
	var fresh, cached *kernelTable
	open := func() {
		fresh = newKernelTable(time.Nanosecond)
		cached = newKernelTable(time.Hour)
	}
	rep.RetrievalSource = "this machine's interfaces"
	if o.ns != nil {
		if err := do(o.ns, open); err != nil {
			return nil, err
		}
		rep.RetrievalSource = fmt.Sprintf("a network namespace with lo and %d veth interfaces", o.Interfaces)
	}
	if fresh == nil {
		open()
	}
	defer fresh.m.Close()
	defer cached.m.Close()
	rep.RetrievalObjects = len(fresh.oids)
	if len(fresh.oids) == 0 {
		return nil, fmt.Errorf("the kernel reports no interfaces")
	}
	var out []RetrievalPoint
	for _, n := range o.Counts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := RetrievalPoint{Objects: n, DumpsPerObject: float64(n), DumpsPerRequest: 1, DumpsCached: 0}
		oids := fresh.objects(n)
		var per, req, hit []time.Duration
		for i := 0; i < o.Repeat; i++ {
			start := time.Now()
			for _, oid := range oids {
				r := mib.NewRequest(ctx, time.Now())
				fresh.tree.Get(r, oid)
				r.Release()
			}
			per = append(per, time.Since(start))
			start = time.Now()
			r := mib.NewRequest(ctx, time.Now())
			for _, oid := range oids {
				fresh.tree.Get(r, oid)
			}
			r.Release()
			req = append(req, time.Since(start))
			start = time.Now()
			r = mib.NewRequest(ctx, time.Now())
			for _, oid := range oids {
				cached.tree.Get(r, oid)
			}
			r.Release()
			hit = append(hit, time.Since(start))
		}
		p.PerObject, p.PerRequest, p.Cached = median(per), median(req), median(hit)
		out = append(out, p)
	}
	return out, nil
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// allocs returns the bytes and allocations of one op, averaged.
func allocs(op func(), runs int) (int64, int64) {
	runtime.GC()
	// Refill the pools the collection emptied: steady state is measured.
	for i := 0; i < 3; i++ {
		op()
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := 0; i < runs; i++ {
		op()
	}
	runtime.ReadMemStats(&m1)
	return int64(m1.TotalAlloc-m0.TotalAlloc) / int64(runs), int64(m1.Mallocs-m0.Mallocs) / int64(runs)
}

// ServeSNMPOp returns one GetBulk of n repetitions from ifTable handled
// by the agent (decode, access control, retrieval, encode).
func ServeSNMPOp(a *loopagent.Agent, n int) func() {
	msg := snmpRequest(SNMPGetBulk, 0, n, 1)
	ref := &transport.StateReference{Domain: transport.UDP, Remote: netip.MustParseAddrPort("127.0.0.1:40000")}
	out := make([]byte, 0, 65536)
	return func() {
		if r := a.Agent.ServeSNMP(ref, msg, out); r == nil {
			panic("no response")
		}
	}
}

// ServeHTTPOp returns one request for n ifTable objects in method's
// representation handled by the web-services handler.
func ServeHTTPOp(a *loopagent.Agent, method string, n int) func() {
	raw := httpRequest(method, "127.0.0.1", "ifTable", n)
	w := &discardWriter{h: http.Header{}}
	return func() {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(string(raw))))
		if err != nil {
			panic(err)
		}
		req.RemoteAddr = "127.0.0.1:40000"
		clear(w.h)
		a.Handler.ServeHTTP(w, req)
	}
}

func runMemory(o *Options, a *loopagent.Agent, rep *Report) {
	runs := 200
	if o.Quick {
		runs = 5
	}
	rows := []struct {
		what string
		op   func(n int) func()
	}{
		{"SNMP GetBulk (agent)", func(n int) func() { return ServeSNMPOp(a, n) }},
	}
	for _, m := range []string{SOAP, SOAPGzip, XML, JSON, JSONGzip, JSONZstd} {
		rows = append(rows, struct {
			what string
			op   func(n int) func()
		}{m + " (HTTP handler)", func(n int) func() { return ServeHTTPOp(a, m, n) }})
	}
	for _, r := range rows {
		mr := MemoryRow{What: r.what, BytesPerRequest: map[int]int64{}, AllocsPerRequest: map[int]int64{}}
		for _, n := range o.RTTCounts {
			n = min(n, o.Rows*22)
			mr.BytesPerRequest[n], mr.AllocsPerRequest[n] = allocs(r.op(n), runs)
		}
		rep.Memory = append(rep.Memory, mr)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.Static.HeapInUse = ms.HeapInuse
	bins := []string{}
	if p, err := exec.LookPath("snmpd"); err == nil {
		bins = append(bins, p)
	} else if _, err := os.Stat("/usr/sbin/snmpd"); err == nil {
		bins = append(bins, "/usr/sbin/snmpd")
	}
	if len(bins) > 0 {
		bins = append(bins, netsnmpLibs(bins[0])...)
	}
	if o.TsnmpdBinary != "" {
		bins = append([]string{o.TsnmpdBinary}, bins...)
	}
	for _, b := range bins {
		if sz, err := elfSizes(b); err == nil {
			rep.Static.Binaries = append(rep.Static.Binaries, sz)
		}
	}
	if o.TsnmpdBinary != "" {
		measureRSS(o, rep)
	}
}

// netsnmpLibs returns the Net-SNMP libraries bin links.
func netsnmpLibs(bin string) []string {
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		return nil
	}
	var libs []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && strings.Contains(f[0], "netsnmp") {
			libs = append(libs, f[2])
		}
	}
	return libs
}

func elfSizes(path string) (Binary, error) {
	f, err := elf.Open(path)
	if err != nil {
		return Binary{}, err
	}
	defer f.Close()
	b := Binary{Path: path}
	for _, s := range f.Sections {
		switch {
		case s.Name == ".text" || s.Name == ".plt" || s.Name == ".init" || s.Name == ".fini":
			b.Text += s.Size
		case s.Name == ".rodata" || s.Name == ".data" || s.Name == ".noptrdata" || s.Name == ".data.rel.ro" || s.Name == ".typelink" || s.Name == ".gopclntab":
			b.Data += s.Size
		case s.Name == ".bss" || s.Name == ".noptrbss":
			b.BSS += s.Size
		}
	}
	return b, nil
}

// rss returns a process's resident set size in bytes.
func rss(pid int) uint64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// measureRSS runs tsnmpd and snmpd as processes, walks each one's
// ifTable and records their resident size.
func measureRSS(o *Options, rep *Report) {
	walk := func(addr string) {
		if t, err := snmpTarget("walk", addr); err == nil {
			t.do(50)
			t.close()
		}
	}
	if p, stop, err := startTsnmpd(o.TsnmpdBinary); err == nil {
		walk(p.Addr)
		setRSS(rep, o.TsnmpdBinary, rss(p.Pid()))
		stop()
	} else {
		rep.Notes = append(rep.Notes, "tsnmpd's resident size not measured: "+err.Error())
	}
	if !o.NoNetSNMP {
		if p, stop, err := startSnmpd(nil); err == nil {
			walk(p.Addr)
			for _, b := range rep.Static.Binaries {
				if strings.HasSuffix(b.Path, "/snmpd") {
					setRSS(rep, b.Path, rss(p.Pid()))
				}
			}
			stop()
		}
	}
}

func setRSS(rep *Report, path string, v uint64) {
	for i := range rep.Static.Binaries {
		if rep.Static.Binaries[i].Path == path {
			rep.Static.Binaries[i].RSSAfterWalk = v
		}
	}
}
