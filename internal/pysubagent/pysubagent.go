// Package pysubagent holds subagent.py, a small AgentX subagent (RFC
// 2741) in Python that speaks network byte order, for tsnmpd's tests and
// `tsnmp bench agentx`: both run it under python3 beside tsnmpd and
// beside Net-SNMP's snmpd. It registers 1.3.6.1.4.1.99998 and serves
// a writable INTEGER at .1.0 and a table of ROWS rows (columns 2 and 3),
// 2*ROWS+1 objects in all; it prints "registered" once registered.
//
//	python3 subagent.py SOCKET [ROWS]
package pysubagent

import (
	_ "embed"
	"os"
	"path/filepath"

	"github.com/tsnmp/tsnmp/snmp"
)

//go:embed subagent.py
var script []byte

// Prefix is the subtree the subagent registers.
var Prefix = snmp.OID{1, 3, 6, 1, 4, 1, 99998}

// Write writes the script into dir and returns its path.
func Write(dir string) (string, error) {
	path := filepath.Join(dir, "subagent.py")
	return path, os.WriteFile(path, script, 0o644)
}

// Objects is how many objects the subagent serves with rows table rows.
func Objects(rows int) int { return 2*rows + 1 }
