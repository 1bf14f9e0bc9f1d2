package ucd

import (
	"context"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// fixTimeout bounds a fix command's run: it is killed after this long.
const fixTimeout = time.Minute

// prHandler serves prTable and lets prErrFix be set: 1 runs the row's
// procfix command, as Net-SNMP's snmpd does (which also accepts, and
// ignores, other integers).
type prHandler struct {
	*mib.Table
	m *MIB
}

// prFixRow returns the prTable row whose prErrFix vb sets.
func (h *prHandler) prFixRow(vb snmp.VarBind) (int, snmp.ErrorStatus) {
	rest := vb.Name[len(PrEntry):]
	if len(rest) != 2 || rest[0] != 102 || rest[1] < 1 || int(rest[1]) > len(h.m.cfg.Procs) {
		return 0, snmp.NotWritable // as snmpd, for other columns and rows
	}
	if vb.Value.Type != snmp.Integer {
		return 0, snmp.WrongType
	}
	return int(rest[1]) - 1, snmp.NoError
}

// TestSet implements mib.Setter.
func (h *prHandler) TestSet(_ *mib.Request, vb snmp.VarBind) snmp.ErrorStatus {
	_, st := h.prFixRow(vb)
	return st
}

// CommitSet implements mib.Setter.
func (h *prHandler) CommitSet(_ *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	for _, vb := range vbs {
		i, st := h.prFixRow(vb)
		if st != snmp.NoError {
			return snmp.CommitFailed
		}
		if p := h.m.cfg.Procs[i]; vb.Value.Int() == 1 && p.Fix != "" {
			h.m.fixes.run("procfix", p.Name, p.Fix, h.m.log())
		}
	}
	return snmp.NoError
}

func (m *MIB) log() *slog.Logger {
	if m.cfg.Logger != nil {
		return m.cfg.Logger
	}
	return slog.Default()
}

// fixRunner runs fix commands in the background, one at a time per
// row: a set that comes while the row's command still runs starts no
// second one.
type fixRunner struct {
	mu      sync.Mutex
	running map[string]bool
}

// run starts cmd with /bin/sh -c, without waiting for it.
func (f *fixRunner) run(kind, name, cmd string, log *slog.Logger) {
	key := kind + " " + name
	f.mu.Lock()
	if f.running[key] {
		f.mu.Unlock()
		log.Info("fix command still running, not started again", "directive", kind, "name", name, "command", cmd)
		return
	}
	if f.running == nil {
		f.running = map[string]bool{}
	}
	f.running[key] = true
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), fixTimeout)
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	done := func(err error) {
		cancel()
		f.mu.Lock()
		delete(f.running, key)
		f.mu.Unlock()
		if err != nil {
			log.Warn("fix command failed", "directive", kind, "name", name, "command", cmd, "err", err)
			return
		}
		log.Info("fix command ran", "directive", kind, "name", name, "command", cmd)
	}
	if err := c.Start(); err != nil {
		done(err)
		return
	}
	go func() { done(c.Wait()) }()
}
