// Package localhost holds the small helpers that tests and experiments use
// to run agents on the loopback interface.
package localhost

import (
	"errors"
	"net"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// FreePort returns a port that was free on 127.0.0.1 for both UDP and TCP
// a moment ago.
func FreePort() (int, error) {
	for i := 0; i < 50; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", l.Addr().String())
		l.Close()
		if err == nil {
			u.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free port on 127.0.0.1")
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
