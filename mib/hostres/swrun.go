package hostres

import (
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/snmp"
)

// procSnap is one pass over /proc: every process with its stat and
// command line.
type procSnap struct {
	ps    []procfs.Process
	index []uint32 // PIDs, the rows' one-element indexes
	procs *procfs.Processes
}

// processes returns the request's rows of hrSWRunTable and hrSWRunPerfTable,
// built once per listing of the processes.
func (m *MIB) processes(r *mib.Request) *procSnap {
	return m.swRunD.Get(r, m.procs, m.newProcSnap)
}

func (m *MIB) newProcSnap(ps []procfs.Process) *procSnap {
	s := &procSnap{ps: ps, index: make([]uint32, len(ps)), procs: m.procs}
	for i := range ps {
		s.index[i] = ps[i].PID
	}
	return s
}

// cmdline returns the command line of row i for hrSWRunPath and
// hrSWRunParameters: read again, once per listing, for the rows whose
// path or parameters a request asks for, so that a command line a
// program rewrites in place (setproctitle) is served fresh.
func (s *procSnap) cmdline(i int) []byte {
	return s.procs.Cmdline(&s.ps[i])
}

func (s *procSnap) Len() int             { return len(s.ps) }
func (s *procSnap) Index(i int) snmp.OID { return snmp.OID(s.index[i : i+1 : i+1]) }

// hrSWRunType and hrSWRunStatus values.
const (
	swOS          = 2
	swApplication = 4

	runRunning     = 1
	runRunnable    = 2
	runNotRunnable = 3
	runInvalid     = 4
)

// runStatus maps a /proc state letter to hrSWRunStatus as Net-SNMP does
// for the letters it knows (R running; S, sleeping, runnable; D and T
// notRunnable; a zombie, Z, invalid: "not loaded"), and the letters of
// newer kernels to their kin, where Net-SNMP says invalid of every live
// one: I (an idle kernel thread, sleeping as S) runnable; t (stopped by a
// tracer, as T) and P (a parked kernel thread) notRunnable. X (dead) is
// invalid.
func runStatus(state byte) int64 {
	switch state {
	case 'R':
		return runRunning
	case 'S', 'I':
		return runRunnable
	case 'D', 'T', 't', 'P':
		return runNotRunnable
	}
	return runInvalid
}

// splitCmdline gives hrSWRunPath and hrSWRunParameters.
var splitCmdline = procfs.SplitCmdline

type swRunRows struct{ *procSnap }

func (s swRunRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	p := &s.ps[i]
	switch col {
	case 1:
		return snmp.IntegerValue(int64(p.PID)), true
	case 2:
		return snmp.StringValue(p.Comm[:min(len(p.Comm), 64)]), true
	case 3:
		return snmp.OIDValue(zeroDotZero), true
	case 4:
		path, _ := splitCmdline(s.cmdline(i))
		return snmp.BytesValue(path), true
	case 5:
		_, params := splitCmdline(s.cmdline(i))
		return snmp.BytesValue(params), true
	case 6:
		if len(p.Cmdline) == 0 {
			return snmp.IntegerValue(swOS), true
		}
		return snmp.IntegerValue(swApplication), true
	case 7:
		return snmp.IntegerValue(runStatus(p.State)), true
	}
	return snmp.Value{}, false
}

type swRunPerfRows struct{ *procSnap }

func (s swRunPerfRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	p := &s.ps[i]
	switch col {
	case 1: // centiseconds
		return snmp.IntegerValue(int64(min((p.UTime+p.STime)*100/procfs.ClockTick, 1<<31-1))), true
	case 2: // kB
		return snmp.IntegerValue(int64(min(p.RSS*procfs.PageKB, 1<<31-1))), true
	}
	return snmp.Value{}, false
}
