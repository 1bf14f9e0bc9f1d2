package ws

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/localhost"
	"github.com/tsnmp/tsnmp/internal/netns"
)

// interfacesNetns creates a network namespace holding at least n Ethernet
// (veth) interfaces, up, so that the kernel's ifTable has the rows the
// paper's agents had. It needs root; the caller deletes it.
func interfacesNetns(n int) (*netns.NS, int, error) {
	ns, err := netns.New("tsnmp-ws")
	if err != nil {
		return nil, 0, err
	}
	pairs := (n + 1) / 2
	if err := ns.AddVeths("eth", 0, pairs); err != nil {
		ns.Delete()
		return nil, 0, err
	}
	return ns, 2 * pairs, nil
}

// do runs fn in ns, or here when ns is nil.
func do(ns *netns.NS, fn func()) error {
	if ns == nil {
		fn()
		return nil
	}
	return ns.Do(func() error { fn(); return nil })
}

// snmpdConf is what the agents measured as processes serve.
const snmpdConf = "rocommunity public 127.0.0.1\n"

// startSnmpd starts Net-SNMP's snmpd serving snmpdConf on loopback (of
// ns, when not nil); stop ends it and removes its files.
func startSnmpd(ns *netns.NS) (p *harness.Proc, stop func(), err error) {
	return startAgent(func(conf, dir string, port int) (*harness.Proc, error) {
		return harness.StartSnmpd(ns, conf, dir, port)
	})
}

// startTsnmpd starts a tsnmpd binary serving snmpdConf on loopback;
// stop ends it and removes its files.
func startTsnmpd(bin string) (p *harness.Proc, stop func(), err error) {
	return startAgent(func(conf, dir string, port int) (*harness.Proc, error) {
		return harness.StartTsnmpd(nil, bin, conf, filepath.Join(dir, "state"), port)
	})
}

// startAgent writes snmpdConf into a new directory and calls start with
// it, the directory and a free port.
func startAgent(start func(conf, dir string, port int) (*harness.Proc, error)) (*harness.Proc, func(), error) {
	dir, err := os.MkdirTemp("", "ws-agent")
	if err != nil {
		return nil, nil, err
	}
	conf := filepath.Join(dir, "snmpd.conf")
	port, err := localhost.FreePort()
	var p *harness.Proc
	if err == nil {
		err = os.WriteFile(conf, []byte(snmpdConf), 0o600)
	}
	if err == nil {
		p, err = start(conf, dir, port)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return p, func() { p.Stop(); os.RemoveAll(dir) }, nil
}

// startCapture captures, with tcpdump on lo, the IPv4 packets to and from
// the given ports; the returned function removes its files.
func startCapture(ports ...int) (*harness.Capture, func(), error) {
	dir, err := os.MkdirTemp("", "ws-capture")
	if err != nil {
		return nil, nil, err
	}
	filter := "ip and ("
	for i, p := range ports {
		if i > 0 {
			filter += " or "
		}
		filter += fmt.Sprintf("port %d", p)
	}
	c, err := harness.StartCapture(nil, dir, filter+")")
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return c, func() { os.RemoveAll(dir) }, nil
}
