package ws

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/internal/pcap"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/ifmib"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/webmgmt"
)

// Header sizes used when IP-level bytes are computed rather than
// captured: IPv4 without options, UDP, and TCP with the timestamp option
// Linux sends on every segment.
const (
	ipv4Header = 20
	udpHeader  = 8
	tcpHeader  = 32
)

// settle is how long an exchange waits after the response for the last
// acknowledgement to leave, so that it falls inside the exchange.
const settle = 60 * time.Millisecond

// tableOIDs returns the first n instances of an ifTable of rows rows in
// walk order (column by column).
func tableOIDs(rows, n int) []snmp.OID {
	var oids []snmp.OID
	for col := uint32(1); col <= 22 && len(oids) < n; col++ {
		for r := 1; r <= rows && len(oids) < n; r++ {
			oids = append(oids, append(ifmib.IfEntry.Clone(), col, uint32(r)))
		}
	}
	return oids
}

var ifTableOID = snmp.OID{1, 3, 6, 1, 2, 1, 2, 2}

// snmpRequest returns a v2c Get for oids, or a GetBulk of n repetitions
// from the start of ifTable.
func snmpRequest(method string, rows, n int, id int32) []byte {
	m := snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{RequestID: id}}
	if method == SNMPGet {
		m.PDU.Type = snmp.GetRequest
		for _, o := range tableOIDs(rows, n) {
			m.PDU.VarBinds = append(m.PDU.VarBinds, snmp.VarBind{Name: o, Value: snmp.NullValue()})
		}
	} else {
		m.PDU.Type = snmp.GetBulkRequest
		m.PDU.ErrorStatus, m.PDU.ErrorIndex = 0, n // non-repeaters, max-repetitions
		m.PDU.VarBinds = []snmp.VarBind{{Name: ifTableOID, Value: snmp.NullValue()}}
	}
	return snmp.AppendMessage(nil, &m)
}

// soapEnvelope is a Get request in the style of the paper's Figure 8.
func soapEnvelope(resource string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" xmlns:SOAP-ENC="http://schemas.xmlsoap.org/soap/encoding/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:tsnmp="` + webmgmt.SOAPNamespace + `">
<SOAP-ENV:Body>
<tsnmp:Get><resource>` + resource + `</resource><community xsi:type="xsd:string">public</community></tsnmp:Get>
</SOAP-ENV:Body>
</SOAP-ENV:Envelope>
`
}

// httpRequest returns the raw HTTP/1.1 request a minimal client sends for
// method and n objects of resource.
func httpRequest(method, host, resource string, n int) []byte {
	var b strings.Builder
	enc := ""
	switch {
	case strings.HasSuffix(method, "+gzip"):
		enc = "gzip"
	case strings.HasSuffix(method, "+zstd"):
		enc = "zstd"
	}
	if strings.HasPrefix(method, SOAP) {
		body := soapEnvelope(resource)
		fmt.Fprintf(&b, "POST /soap?max=%d HTTP/1.1\r\nHost: %s\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: \"%s#Get\"\r\nContent-Length: %d\r\n", n, host, webmgmt.SOAPNamespace, len(body))
		if enc != "" {
			fmt.Fprintf(&b, "Accept-Encoding: %s\r\n", enc)
		}
		b.WriteString("\r\n" + body)
		return []byte(b.String())
	}
	f := "json"
	if strings.HasPrefix(method, XML) {
		f = "xml"
	}
	fmt.Fprintf(&b, "GET /mib/%s?max=%d&format=%s HTTP/1.1\r\nHost: %s\r\nAuthorization: SNMP-Community public\r\n", resource, n, f, host)
	if enc != "" {
		fmt.Fprintf(&b, "Accept-Encoding: %s\r\n", enc)
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

func formatOf(method string) webmgmt.Format {
	switch {
	case strings.HasPrefix(method, SOAP):
		return webmgmt.SOAP
	case strings.HasPrefix(method, XML):
		return webmgmt.XML
	}
	return webmgmt.JSON
}

// exchange is one measured request-response.
type exchange struct {
	method  string
	objects int
	tcp     bool
	port    int
	t0, t1  time.Time // the exchange
	tA, tZ  time.Time // connection setup to release (TCP)
	app     int
	segs    int // TCP segments both ways (TCP_INFO), or datagrams
	zlib    int // SNMP: request and response each compressed with zlib
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func tcpSegs(c *net.TCPConn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var info *unix.TCPInfo
	var ierr error
	if err := rc.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.SOL_TCP, unix.TCP_INFO) }); err != nil {
		return 0, err
	}
	if ierr != nil {
		return 0, ierr
	}
	return int(info.Segs_in) + int(info.Segs_out), nil
}

// decodeBody undoes the content coding of a response body.
func decodeBody(coding string, b []byte) ([]byte, error) {
	switch coding {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	case "zstd":
		zr, err := zstd.NewReader(nil)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		return zr.DecodeAll(b, nil)
	}
	return b, nil
}

// readHTTP reads one response and checks that it carries n objects.
func readHTTP(br *bufio.Reader, method string, n int) error {
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: status %d: %s", method, resp.StatusCode, body)
	}
	if body, err = decodeBody(resp.Header.Get("Content-Encoding"), body); err != nil {
		return err
	}
	vbs, err := webmgmt.Decode(formatOf(method), body)
	if err != nil {
		return err
	}
	if len(vbs) != n {
		return fmt.Errorf("%s: %d objects, want %d", method, len(vbs), n)
	}
	return nil
}

// httpExchange sends req on a new connection (set up before the
// exchange starts and released after it ends).
func httpExchange(addr string, method string, n int, req []byte) (ex exchange, err error) {
	ex = exchange{method: method, objects: n, tcp: true}
	ex.tA = time.Now()
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		return ex, err
	}
	defer func() {
		c.Close()
		time.Sleep(10 * time.Millisecond)
		ex.tZ = time.Now()
	}()
	tc := c.(*net.TCPConn)
	ex.port = c.LocalAddr().(*net.TCPAddr).Port
	s0, err := tcpSegs(tc)
	if err != nil {
		return ex, err
	}
	ex.t0 = time.Now()
	if _, err := c.Write(req); err != nil {
		return ex, err
	}
	cr := &countingReader{r: c}
	if err := readHTTP(bufio.NewReader(cr), method, n); err != nil {
		return ex, err
	}
	time.Sleep(settle)
	ex.t1 = time.Now()
	s1, err := tcpSegs(tc)
	if err != nil {
		return ex, err
	}
	ex.app, ex.segs = len(req)+cr.n, s1-s0
	return ex, nil
}

// zlibLen is the size of b compressed with zlib at the default level, as
// the paper compressed SNMP messages to compare them fairly.
func zlibLen(b []byte) int {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Len()
}

// countVarBinds checks an SNMP response.
func countVarBinds(resp []byte, n int) error {
	var m snmp.Message
	if err := m.Unmarshal(resp); err != nil {
		return err
	}
	if m.PDU.ErrorStatus != snmp.NoError || len(m.PDU.VarBinds) != n {
		return fmt.Errorf("response: %v, %d varbinds, want %d", m.PDU.ErrorStatus, len(m.PDU.VarBinds), n)
	}
	return nil
}

func udpExchange(addr, method string, rows, n int) (exchange, error) {
	ex := exchange{method: method, objects: n}
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return ex, err
	}
	c, err := net.DialUDP("udp4", nil, ua)
	if err != nil {
		return ex, err
	}
	defer c.Close()
	ex.port = c.LocalAddr().(*net.UDPAddr).Port
	req := snmpRequest(method, rows, n, 1)
	buf := make([]byte, 65536)
	ex.t0 = time.Now()
	if _, err := c.Write(req); err != nil {
		return ex, err
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	k, err := c.Read(buf)
	if err != nil {
		return ex, err
	}
	time.Sleep(5 * time.Millisecond)
	ex.t1 = time.Now()
	if err := countVarBinds(buf[:k], n); err != nil {
		return ex, fmt.Errorf("%s of %d: %w", method, n, err)
	}
	ex.app, ex.segs = len(req)+k, 2
	ex.zlib = zlibLen(req) + zlibLen(buf[:k])
	return ex, nil
}

func runBandwidth(ctx context.Context, a *loopagent.Agent, o *Options, rep *Report) error {
	httpAddr := strings.TrimPrefix(a.HTTPURL, "http://")
	_, hp, _ := net.SplitHostPort(httpAddr)
	hport, _ := strconv.Atoi(hp)
	var capture *harness.Capture
	if !o.NoCapture {
		var err error
		var remove func()
		if capture, remove, err = startCapture(hport, a.Port()); err == nil {
			defer remove()
			err = capture.WaitActive(func() { udpExchange(a.SNMPAddr, SNMPGet, o.Rows, 1) })
			if err != nil {
				capture.Stop()
				capture = nil
			}
		}
		if err != nil {
			rep.Notes = append(rep.Notes, "no capture ("+err.Error()+"): IP-level bytes computed from segment counts")
		}
	}
	var exs []exchange
	max := o.Rows * 22
	for _, n := range o.Counts {
		if err := ctx.Err(); err != nil {
			return err
		}
		n = min(n, max)
		for _, m := range Methods {
			var ex exchange
			var err error
			if strings.HasPrefix(m, "SNMP") {
				ex, err = udpExchange(a.SNMPAddr, m, o.Rows, n)
			} else {
				ex, err = httpExchange(httpAddr, m, n, httpRequest(m, httpAddr, "ifTable", n))
			}
			if err != nil {
				if capture != nil {
					capture.Stop()
				}
				return err
			}
			exs = append(exs, ex)
		}
	}
	var pkts []pcap.Packet
	if capture != nil {
		var err error
		if pkts, err = capture.Stop(); err != nil {
			return err
		}
		rep.IPMethod = "tcpdump on lo"
	} else {
		rep.IPMethod = fmt.Sprintf("computed: application bytes + %d per UDP datagram, + %d per TCP segment (TCP_INFO counts)", ipv4Header+udpHeader, ipv4Header+tcpHeader)
	}
	byPort := map[int][]pcap.Packet{}
	for _, p := range pkts {
		for _, port := range []int{int(p.SrcPort), int(p.DstPort)} {
			if port != hport && port != a.Port() {
				byPort[port] = append(byPort[port], p)
			}
		}
	}
	points := map[int]*BandwidthPoint{}
	for _, ex := range exs {
		p := points[ex.objects]
		if p == nil {
			p = &BandwidthPoint{Objects: ex.objects, Bytes: map[string]Bytes{}}
			points[ex.objects] = p
			rep.Bandwidth = append(rep.Bandwidth, BandwidthPoint{})
		}
		b := Bytes{App: ex.app, Zlib: ex.zlib}
		if capture != nil {
			app := 0
			for _, pk := range byPort[ex.port] {
				if (pk.Proto == 6) != ex.tcp {
					continue
				}
				switch {
				case !pk.Time.Before(ex.t0) && !pk.Time.After(ex.t1) && pk.Flags&(pcap.FlagSYN|pcap.FlagFIN) == 0:
					b.IP += pk.IPLen
					b.Packets++
					app += pk.Payload
				case ex.tcp && !pk.Time.Before(ex.tA) && !pk.Time.After(ex.tZ):
					b.Conn += pk.IPLen
				}
			}
			if app != ex.app {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s %d objects: capture saw %d payload bytes, the client counted %d", ex.method, ex.objects, app, ex.app))
			}
		} else {
			per := ipv4Header + udpHeader
			if ex.tcp {
				per = ipv4Header + tcpHeader
			}
			b.IP, b.Packets = ex.app+ex.segs*per, ex.segs
		}
		p.Bytes[ex.method] = b
	}
	i := 0
	seen := map[int]bool{}
	for _, ex := range exs {
		if !seen[ex.objects] {
			seen[ex.objects] = true
			rep.Bandwidth[i] = *points[ex.objects]
			i++
		}
	}
	rep.Bandwidth = rep.Bandwidth[:i]
	return nil
}

// rttTarget is one way of retrieving n objects, timed over a kept
// connection or socket.
type rttTarget struct {
	name string
	// do performs one retrieval of n objects and returns its delay.
	do    func(n int) (time.Duration, error)
	max   int // largest n it serves; 0: any
	close func()
}

func snmpTarget(name, addr string) (*rttTarget, error) {
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return nil, err
	}
	c, err := net.DialUDP("udp4", nil, ua)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 65536)
	id := int32(0)
	t := &rttTarget{name: name, close: func() { c.Close() }}
	t.do = func(n int) (time.Duration, error) {
		id++
		req := snmpRequest(SNMPGetBulk, 0, n, id)
		start := time.Now()
		if _, err := c.Write(req); err != nil {
			return 0, err
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			k, err := c.Read(buf)
			if err != nil {
				return 0, err
			}
			var m snmp.Message
			if m.Unmarshal(buf[:k]) == nil && m.PDU.RequestID == id {
				d := time.Since(start)
				if len(m.PDU.VarBinds) != n || m.PDU.VarBinds[n-1].Value.Type.IsException() {
					return 0, fmt.Errorf("%s: %d varbinds for %d repetitions", name, len(m.PDU.VarBinds), n)
				}
				return d, nil
			}
		}
	}
	// The objects from ifTable to the end of the agent's MIB bound n.
	t.max = available(c, buf)
	return t, nil
}

// available counts the objects a GetBulk from ifTable can return before
// the end of the MIB view.
func available(c *net.UDPConn, buf []byte) int {
	req := snmpRequest(SNMPGetBulk, 0, 2000, 1<<30)
	if _, err := c.Write(req); err != nil {
		return 0
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	k, err := c.Read(buf)
	if err != nil {
		return 0
	}
	var m snmp.Message
	if m.Unmarshal(buf[:k]) != nil {
		return 0
	}
	n := 0
	for _, vb := range m.PDU.VarBinds {
		if vb.Value.Type.IsException() {
			break
		}
		n++
	}
	if n == 2000 || m.PDU.ErrorStatus == snmp.TooBig {
		return 0 // at least that many: no bound
	}
	return n
}

func httpTarget(name, addr, method, resource string, max int) (*rttTarget, error) {
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(c)
	t := &rttTarget{name: name, max: max, close: func() { c.Close() }}
	t.do = func(n int) (time.Duration, error) {
		req := httpRequest(method, addr, resource, n)
		start := time.Now()
		if _, err := c.Write(req); err != nil {
			return 0, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil || resp.StatusCode != 200 {
			return 0, fmt.Errorf("%s: %d %v %s", name, resp.StatusCode, err, body)
		}
		return d, nil
	}
	return t, nil
}

func runRTT(ctx context.Context, a *loopagent.Agent, o *Options, rep *Report) error {
	httpAddr := strings.TrimPrefix(a.HTTPURL, "http://")
	var targets []*rttTarget
	defer func() {
		for _, t := range targets {
			t.close()
		}
	}()
	add := func(t *rttTarget, err error) error {
		if err != nil {
			return err
		}
		targets = append(targets, t)
		return nil
	}
	max := o.Rows * 22
	if err := add(snmpTarget("tsnmp SNMP GetBulk", a.SNMPAddr)); err != nil {
		return err
	}
	for _, m := range []string{SOAP, SOAPGzip, JSON, JSONGzip} {
		if err := add(httpTarget("tsnmp "+m, httpAddr, m, "ifTable", max)); err != nil {
			return err
		}
	}
	// The same agent code over the kernel's interfaces (of the
	// namespace, when there is one), with the 1 s cache and with a cache
	// too short to ever hit, and Net-SNMP over the same interfaces.
	kernel := "kernel ifTable"
	for _, k := range []struct {
		name string
		ttl  time.Duration
	}{{"1 s cache", time.Second}, {"no cache", time.Nanosecond}} {
		ka, err := loopagent.Start(loopagent.Options{NoTLS: true, IfCacheTTL: k.ttl})
		if err != nil {
			return err
		}
		defer ka.Close()
		if o.ns != nil {
			// The first dump opens the netlink socket, in the namespace.
			if err := o.ns.Do(func() error {
				r := mib.NewRequest(ctx, time.Now())
				ka.Agent.Tree.Get(r, append(ifmib.IfNumber.Clone(), 0))
				r.Release()
				return nil
			}); err != nil {
				return err
			}
		}
		rows := countKernelRows(ka)
		kernel = fmt.Sprintf("kernel ifTable of %d interfaces", rows)
		if err := add(snmpTarget(fmt.Sprintf("tsnmp SNMP GetBulk (%s, %s)", kernel, k.name), ka.SNMPAddr)); err != nil {
			return err
		}
		if err := add(httpTarget(fmt.Sprintf("tsnmp JSON (%s, %s)", kernel, k.name), strings.TrimPrefix(ka.HTTPURL, "http://"), JSON, "ifTable", rows*22)); err != nil {
			return err
		}
	}
	if !o.NoNetSNMP {
		if p, stop, err := startSnmpd(o.ns); err != nil {
			rep.Notes = append(rep.Notes, "Net-SNMP snmpd not measured: "+err.Error())
		} else {
			defer stop()
			var t *rttTarget
			var terr error
			if err := do(o.ns, func() { t, terr = snmpTarget("Net-SNMP snmpd GetBulk ("+kernel+")", p.Addr) }); err != nil {
				return err
			}
			if err := add(t, terr); err != nil {
				return err
			}
		}
	}
	for _, t := range targets {
		rep.RTTMethods = append(rep.RTTMethods, t.name)
		if t.max > 0 && t.max < o.RTTCounts[len(o.RTTCounts)-1] {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s returns at most %d objects to one request from ifTable on (the end of its MIB view, or its GetBulk limit)", t.name, t.max))
		}
	}
	for _, n := range o.RTTCounts {
		p := RTTPoint{Objects: n, Delay: map[string]time.Duration{}}
		for _, t := range targets {
			if t.max > 0 && n > t.max {
				continue
			}
			best := time.Duration(0)
			for i := 0; i <= o.Repeat; i++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				d, err := t.do(n)
				if err != nil {
					return err
				}
				if i > 0 && (best == 0 || d < best) { // the first is a warm-up
					best = d
				}
			}
			p.Delay[t.name] = best
		}
		rep.RoundTrip = append(rep.RoundTrip, p)
	}
	return nil
}

// countKernelRows returns the number of interfaces the kernel agent has.
func countKernelRows(a *loopagent.Agent) int {
	c := &http.Client{Timeout: 5 * time.Second}
	req, _ := http.NewRequest("GET", a.HTTPURL+"/mib/ifNumber.0", nil)
	req.Header.Set("Authorization", "SNMP-Community public")
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	vbs, err := webmgmt.Decode(webmgmt.JSON, b)
	if err != nil || len(vbs) != 1 {
		return 0
	}
	return int(vbs[0].Value.Num)
}
