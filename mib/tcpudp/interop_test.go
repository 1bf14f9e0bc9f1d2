package tcpudp

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// TestInteropNetSNMP compares TCP-MIB and UDP-MIB with Net-SNMP snmpd's
// in a network namespace holding TCP listeners and connections and UDP
// endpoints of both families, opened by this test.
func TestInteropNetSNMP(t *testing.T) {
	ns := mibtest.NetNS(t, "tsnmp-tcpudp", "link add va type veth peer name vb\nlink set va up\nlink set vb up\naddr add 192.0.2.1/24 dev va\naddr add 2001:db8::1/64 dev va nodad\n")
	var closers []interface{ Close() error }
	var connPort int // the connected endpoint's local port
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	if err := ns.Do(func() error {
		for _, a := range []string{"192.0.2.1:8080", "[::]:8081", "[2001:db8::1]:8082", "127.0.0.1:8083"} {
			l, err := net.Listen("tcp", a)
			if err != nil {
				return err
			}
			closers = append(closers, l)
			to := l.Addr().String()
			if a == "[::]:8081" { // an IPv4 client of a dual-stack listener
				to = "192.0.2.1:8081"
			}
			// The address's local route comes once the kernel has seen the
			// veth's carrier, which it learns asynchronously: retry a
			// while.
			var c net.Conn
			for try := 0; ; try++ {
				if c, err = net.Dial("tcp", to); err == nil || try == 50 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				return err
			}
			s, err := l.Accept()
			if err != nil {
				return err
			}
			closers = append(closers, c, s)
		}
		var v6 net.PacketConn
		for _, a := range []string{"0.0.0.0:5353", "[2001:db8::1]:5354", "127.0.0.1:5355", "[::]:5356"} {
			network := "udp"
			if a == "0.0.0.0:5353" {
				network = "udp4" // "udp" would take a dual-stack IPv6 socket
			}
			u, err := net.ListenPacket(network, a)
			if err != nil {
				return err
			}
			closers = append(closers, u)
			if a == "[2001:db8::1]:5354" {
				v6 = u
			}
		}
		u, err := net.Dial("udp", "192.0.2.1:5353") // a connected endpoint
		if err != nil {
			return err
		}
		closers = append(closers, u)
		connPort = u.LocalAddr().(*net.UDPAddr).Port
		// IPv6 datagrams, which Linux counts apart from IPv4's and
		// udpInDatagrams, udpOutDatagrams and udpNoPorts count too, more
		// than the counters' tolerances below: to an endpoint of this
		// test, which reads each (Linux counts a datagram in when it is
		// read), and to a port nobody has.
		to, err := net.Dial("udp6", "[2001:db8::1]:5354")
		if err != nil {
			return err
		}
		defer to.Close()
		buf := make([]byte, 64)
		v6.SetReadDeadline(time.Now().Add(10 * time.Second))
		for range 300 {
			if _, err := to.Write([]byte("tsnmp")); err != nil {
				return err
			}
			if _, _, err := v6.ReadFrom(buf); err != nil {
				return err
			}
		}
		refused, err := net.Dial("udp6", "[2001:db8::1]:5399")
		if err != nil {
			return err
		}
		defer refused.Close()
		for range 40 {
			refused.Write([]byte("tsnmp")) // every other write fails: the port unreachable of the one before
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	snmpd := mibtest.StartSnmpd(t, ns.Name, "")
	theirs := snmpd.Walk(t, "1.3.6.1.2.1.6")
	for k, v := range snmpd.Walk(t, "1.3.6.1.2.1.7") {
		theirs[k] = v
	}
	var ours map[string]string
	if err := ns.Do(func() error {
		m := New(Config{})
		var tree mib.Tree
		m.Register(&tree)
		ours = mibtest.Walk(&tree, TCP)
		for k, v := range mibtest.Walk(&tree, UDP) {
			ours[k] = v
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// snmpd's and the walks' own sockets differ: drop rows on ports of
	// neither this test nor of snmpd (16161).
	keep := map[string]bool{}
	for _, p := range []int{8080, 8081, 8082, 8083, 5353, 5354, 5355, 5356, 16161} {
		keep[strconv.Itoa(p)] = true
	}
	t.Logf("%d and %d instances", len(ours), len(theirs))
	const tcp, udp = "1.3.6.1.2.1.6.", "1.3.6.1.2.1.7."
	rules := map[string]mibtest.Rule{
		tcp + "1.": {}, tcp + "2.": {}, tcp + "3.": {}, tcp + "4.": {},
		tcp + "5.": {Tol: 5}, tcp + "6.": {Tol: 5}, tcp + "7.": {Tol: 5}, tcp + "8.": {Tol: 5}, tcp + "9.": {},
		tcp + "10.": {Tol: 50}, tcp + "11.": {Tol: 50}, tcp + "12.": {Tol: 5}, tcp + "14.": {Tol: 5}, tcp + "15.": {Tol: 5},
		tcp + "13.1.": {}, tcp + "19.1.": {}, tcp + "20.1.": {},
		udp + "1.": {Tol: 200}, udp + "2.": {Tol: 5}, udp + "3.": {Tol: 5}, udp + "4.": {Tol: 200},
		// The 64-bit counters count what the 32-bit ones do, and move
		// as much between the walks.
		tcp + "17.": {Tol: 50}, tcp + "18.": {Tol: 50}, // tcpHCInSegs, tcpHCOutSegs
		udp + "8.": {Tol: 200}, udp + "9.": {Tol: 200}, // udpHCInDatagrams, udpHCOutDatagrams
		udp + "5.1.": {}, udp + "7.1.": {},
	}
	// The connected endpoint is no listener of the legacy udpTable (RFC
	// 4113 made udpEndpointTable to represent it), in either agent.
	for _, m := range []map[string]string{ours, theirs} {
		if k := udp + "5.1.1.192.0.2.1." + strconv.Itoa(connPort); m[k] != "" {
			t.Errorf("udpTable lists the connected endpoint: %s = %s", k, m[k])
		}
	}
	mibtest.DropRows(ours, theirs, keep, tcp+"13.1.", tcp+"19.1.", tcp+"20.1.", udp+"5.1.", udp+"7.1.")
	pid := strconv.Itoa(os.Getpid())
	for k, want := range map[string]string{
		tcp + "20.1.4.2.16.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8081": pid, // the dual-stack listener
		tcp + "20.1.4.1.4.192.0.2.1.8080":                        pid,
		tcp + "13.1.1.192.0.2.1.8080.0.0.0.0.0":                  "2", // listen
		udp + "5.1.2.0.0.0.0.5353":                               "5353",
	} {
		if ours[k] != want {
			t.Errorf("%s = %q, want %q", k, ours[k], want)
		}
	}
	// Net-SNMP 5.9 serves neither tcpHCInSegs and tcpHCOutSegs nor
	// udpHCInDatagrams and udpHCOutDatagrams. A 64-bit counter counts
	// what its 32-bit counterpart does and equals it below 2^32 (the
	// namespace is new): compare tsnmp's with its own 32-bit counter
	// from the same reading exactly, and with Net-SNMP's 32-bit counter
	// within that counter's tolerance.
	for hc, c32 := range map[string]string{tcp + "17.0": tcp + "10.0", tcp + "18.0": tcp + "11.0", udp + "8.0": udp + "1.0", udp + "9.0": udp + "4.0"} {
		if ours[hc] != ours[c32] {
			t.Errorf("%s = %q, its 32-bit counterpart %s = %q: want equal below 2^32", hc, ours[hc], c32, ours[c32])
		}
		if _, ok := theirs[hc]; ok {
			t.Errorf("%s: Net-SNMP serves it now: compare it with tsnmp's directly", hc)
		} else if v, ok := theirs[c32]; ok {
			theirs[hc] = v
		}
	}
	res := mibtest.Compare(t, ours, theirs, rules)
	// The sockets this test opened are rows of both walks: each listener
	// (tcpListenerTable, tcpConnTable), each connection's two ends
	// (tcpConnectionTable), each UDP endpoint (udpEndpointTable,
	// udpTable).
	const any4, any6 = "1.4.0.0.0.0", "2.16.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0"
	res.Require(t, "tcpListenerTable",
		tcp+"20.1.4.1.4.192.0.2.1.8080", tcp+"20.1.4."+any6+".8081",
		tcp+"20.1.4.2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1.8082", tcp+"20.1.4.1.4.127.0.0.1.8083")
	res.Require(t, "tcpConnTable", tcp+"13.1.1.192.0.2.1.8080.0.0.0.0.0", tcp+"13.1.1.127.0.0.1.8083.0.0.0.0.0")
	// udpEndpointTable's index ends in the socket's inode
	// (udpEndpointInstance), so rows are found by their addresses.
	endpoints := res.Rows(udp + "7.1.")
	for _, want := range []string{any4 + ".5353." + any4 + ".0.", "2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1.5354." + any6 + ".0.",
		"1.4.127.0.0.1.5355." + any4 + ".0.", any6 + ".5356." + any6 + ".0."} {
		found := false
		for idx := range endpoints {
			found = found || strings.HasPrefix(idx, want)
		}
		if !found {
			t.Errorf("udpEndpointTable: no row %s* compared on both sides", want)
		}
	}
	res.Require(t, "udpTable", udp+"5.1.2.0.0.0.0.5353", udp+"5.1.2.127.0.0.1.5355")
	conns := 0
	for idx := range res.Rows(tcp + "19.1.") {
		for _, p := range []string{".8080.", ".8081.", ".8082.", ".8083."} {
			if strings.Contains(idx+".", p) {
				conns++
			}
		}
	}
	if conns < 8 { // both ends of the four connections
		t.Errorf("tcpConnectionTable: %d rows of this test's connections compared on both sides, want 8", conns)
	}
	connected := 0
	for idx := range endpoints {
		if strings.HasPrefix(idx, "1.4.192.0.2.1.") && strings.Contains(idx, ".1.4.192.0.2.1.5353.") {
			connected++
		}
	}
	if connected != 1 {
		t.Errorf("udpEndpointTable: %d rows for the connected endpoint compared on both sides, want 1", connected)
	}
	if n := res.N(); n < 40 {
		t.Errorf("compared %d values, want at least 40", n)
	}
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}
