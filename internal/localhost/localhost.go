// Package localhost holds the small helpers that tests and experiments use
// to run agents on the loopback interface.
package localhost

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// FreePort returns a port that was free on 127.0.0.1 for both UDP and TCP
// a moment ago. It is taken below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), from which every client socket and
// every bind to port 0 draw theirs: a port from that range can be taken
// by any connection between this call and the caller's bind, a port below
// it only by another explicit bind.
func FreePort() (int, error) {
	lo, hi := 10000, ephemeralLow()
	for i := 0; i < 200; i++ {
		port := 0 // no room below the ephemeral range: let the kernel choose
		if hi-lo >= 1000 {
			port = lo + rand.IntN(hi-lo)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		port = l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", l.Addr().String())
		l.Close()
		if err == nil {
			u.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free port on 127.0.0.1")
}

// ephemeralLow returns the first port of the kernel's ephemeral range, or
// 32768 (Linux's default) when it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}

// WaitSNMP waits up to tries × 150 ms until an SNMPv2c get of
// sysUpTime.0 (community public) to addr over UDP gets any answer.
func WaitSNMP(addr string, tries int) error {
	m := snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: 1,
		VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}, Value: snmp.NullValue()}}}}
	req := snmp.AppendMessage(nil, &m)
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 4096)
	for i := 0; i < tries; i++ {
		c.Write(req)
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.Read(buf); err == nil {
			return nil
		}
		// Until the agent binds, the kernel refuses at once.
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("no SNMP answer on " + addr)
}
