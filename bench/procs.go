package bench

import (
	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/localhost"
)

// The processes, captures and tables of package harness, under the names
// experiments and tests use.
type (
	Proc    = harness.Proc
	Capture = harness.Capture
	Packet  = harness.Packet
	Table   = harness.Table
)

// FreePort returns a port free for UDP and TCP on 127.0.0.1.
func FreePort() (int, error) { return localhost.FreePort() }

// StartTsnmpd starts the tsnmpd binary with a Net-SNMP style configuration
// file on 127.0.0.1:port (UDP and TCP).
func StartTsnmpd(bin, conf, stateDir string, port int, extra ...string) (*Proc, error) {
	return harness.StartTsnmpd(nil, bin, conf, stateDir, port, extra...)
}

// StartSnmpd starts Net-SNMP's snmpd with only conf, its persistent state
// in dir, on 127.0.0.1:port (UDP and TCP).
func StartSnmpd(conf, dir string, port int) (*Proc, error) {
	return harness.StartSnmpd(nil, conf, dir, port)
}
