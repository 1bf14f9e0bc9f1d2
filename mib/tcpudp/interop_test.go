package tcpudp

import (
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/mibtest"
)

// TestInteropNetSNMP compares TCP-MIB and UDP-MIB with Net-SNMP snmpd's
// in a network namespace holding TCP listeners and connections and UDP
// endpoints of both families, opened by this test.
func TestInteropNetSNMP(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-tcpudp")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	if err := ns.IPBatch("link add va type veth peer name vb\nlink set va up\nlink set vb up\naddr add 192.0.2.1/24 dev va\naddr add 2001:db8::1/64 dev va nodad\n"); err != nil {
		t.Fatal(err)
	}
	var closers []interface{ Close() error }
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
		}
		u, err := net.Dial("udp", "192.0.2.1:5353") // a connected endpoint
		if err != nil {
			return err
		}
		closers = append(closers, u)
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
		udp + "5.1.": {}, udp + "7.1.": {},
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
	n := mibtest.Compare(t, ours, theirs, rules)
	if n < 40 {
		t.Errorf("compared %d values, want at least 40", n)
	}
	if t.Failed() {
		t.Logf("snmpd log:\n%s", snmpd.Log)
	}
}
