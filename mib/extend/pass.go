package extend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// Pass serves a subtree from a program, as Net-SNMP's `pass` (the program
// runs once per request: PROG -g OID, PROG -n OID, PROG -s OID TYPE
// VALUE) or `pass_persist` (one process answers get/getnext/set requests
// on its standard input, PING/PONG checks it, and it is restarted when it
// dies or stops answering).
type Pass struct {
	Prefix  snmp.OID
	Program string
	Args    []string
	Persist bool
	// TimeLimit bounds one answer (0: DefaultTimeLimit).
	TimeLimit time.Duration
	Log       *slog.Logger

	mu   sync.Mutex // one persistent exchange at a time
	proc *persistProc
}

type persistProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (p *Pass) limit() time.Duration {
	if p.TimeLimit > 0 {
		return p.TimeLimit
	}
	return DefaultTimeLimit
}

func (p *Pass) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}

// Close stops a persistent program.
func (p *Pass) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
}

func (p *Pass) stopLocked() {
	if p.proc != nil {
		p.proc.in.Close()
		p.proc.cmd.Process.Kill()
		p.proc.cmd.Wait()
		p.proc = nil
	}
}

// ask sends the request lines and reads up to n answer lines (a single
// "NONE" or error word ends the answer early).
func (p *Pass) ask(mode string, oid snmp.OID, setArg string) ([]string, error) {
	if !p.Persist {
		args := append(append([]string{}, p.Args...), mode, "."+oid.String())
		if mode == "-s" {
			typ, val, _ := strings.Cut(setArg, " ")
			args = append(args, typ, val)
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.limit())
		defer cancel()
		cmd := exec.CommandContext(ctx, p.Program, args...)
		cmd.WaitDelay = time.Second
		out, err := cmd.Output()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pass %s: no answer within %v", p.Program, p.limit())
		}
		if err != nil && len(out) == 0 {
			return nil, err
		}
		return strings.Split(strings.TrimRight(string(out), "\n"), "\n"), nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for attempt := 0; attempt < 2; attempt++ {
		if p.proc == nil {
			if err := p.startLocked(); err != nil {
				return nil, err
			}
		}
		var req string
		switch mode {
		case "-g":
			req = "get\n." + oid.String() + "\n"
		case "-n":
			req = "getnext\n." + oid.String() + "\n"
		case "-s":
			req = "set\n." + oid.String() + "\n" + setArg + "\n"
		}
		lines, err := p.exchangeLocked(req, mode)
		if err == nil {
			return lines, nil
		}
		p.log().Warn("pass_persist: program failed; restarting it", "program", p.Program, "err", err)
		p.stopLocked()
	}
	return nil, fmt.Errorf("pass_persist %s: no answer", p.Program)
}

func (p *Pass) startLocked() error {
	cmd := exec.Command(p.Program, p.Args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pass_persist %s: %w", p.Program, err)
	}
	p.proc = &persistProc{cmd: cmd, in: in, out: bufio.NewReader(out)}
	lines, err := p.exchangeLocked("PING\n", "ping")
	if err != nil || len(lines) != 1 || lines[0] != "PONG" {
		p.stopLocked()
		return fmt.Errorf("pass_persist %s: no PONG to PING (%v %q)", p.Program, err, lines)
	}
	return nil
}

// exchangeLocked writes req and reads the answer of mode, within the
// time limit.
func (p *Pass) exchangeLocked(req, mode string) ([]string, error) {
	type answer struct {
		lines []string
		err   error
	}
	ch := make(chan answer, 1)
	pr := p.proc
	go func() {
		if _, err := io.WriteString(pr.in, req); err != nil {
			ch <- answer{err: err}
			return
		}
		var lines []string
		want := 3
		switch mode {
		case "ping", "-s":
			want = 1
		}
		for len(lines) < want {
			l, err := pr.out.ReadString('\n')
			if err != nil {
				ch <- answer{err: err}
				return
			}
			l = strings.TrimRight(l, "\r\n")
			lines = append(lines, l)
			if len(lines) == 1 && (l == "NONE" || l == "") {
				break
			}
		}
		ch <- answer{lines: lines}
	}()
	t := time.NewTimer(p.limit())
	defer t.Stop()
	select {
	case a := <-ch:
		return a.lines, a.err
	case <-t.C:
		return nil, fmt.Errorf("no answer within %v", p.limit())
	}
}

// parse turns OID, TYPE, VALUE lines into a varbind inside the subtree.
func (p *Pass) parse(lines []string) (snmp.VarBind, bool) {
	if len(lines) < 3 {
		return snmp.VarBind{}, false
	}
	oid, err := snmp.ParseOID(strings.TrimSpace(lines[0]))
	if err != nil || !oid.HasPrefix(p.Prefix) {
		return snmp.VarBind{}, false
	}
	v, ok := parseValue(strings.TrimSpace(lines[1]), lines[2])
	if !ok {
		p.log().Warn("pass: unknown type or bad value", "program", p.Program, "type", lines[1], "value", lines[2])
		return snmp.VarBind{}, false
	}
	return snmp.VarBind{Name: oid, Value: v}, true
}

// parseValue reads a value as pass programs print it.
func parseValue(typ, s string) (snmp.Value, bool) {
	s = strings.TrimSpace(s)
	num := func(bits int) (uint64, bool) {
		v, err := strconv.ParseUint(s, 10, bits)
		return v, err == nil
	}
	switch strings.ToLower(typ) {
	case "integer":
		v, err := strconv.ParseInt(s, 10, 32)
		return snmp.IntegerValue(v), err == nil
	case "gauge", "unsigned":
		v, ok := num(32)
		return snmp.Gauge32Value(uint32(v)), ok
	case "counter":
		v, ok := num(32)
		return snmp.Counter32Value(uint32(v)), ok
	case "counter64":
		v, ok := num(64)
		return snmp.Counter64Value(v), ok
	case "timeticks":
		v, ok := num(32)
		return snmp.TimeTicksValue(uint32(v)), ok
	case "string":
		return snmp.StringValue(s), true
	case "octet":
		b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
		return snmp.BytesValue(b), err == nil
	case "opaque":
		b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
		return snmp.OpaqueValue(b), err == nil
	case "ipaddress":
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is4() {
			return snmp.Value{}, false
		}
		return snmp.IPValue(a.As4()), true
	case "objectid":
		o, err := snmp.ParseOID(s)
		return snmp.OIDValue(o), err == nil
	}
	return snmp.Value{}, false
}

// Get implements mib.Handler.
func (p *Pass) Get(r *mib.Request, oid snmp.OID) snmp.Value {
	lines, err := p.ask("-g", oid, "")
	if err != nil {
		p.log().Warn("pass: no answer", "program", p.Program, "err", err)
		r.Fail(snmp.GenErr)
		return snmp.ExceptionValue(snmp.NoSuchObject)
	}
	vb, ok := p.parse(lines)
	if !ok || !vb.Name.Equal(oid) {
		return snmp.ExceptionValue(snmp.NoSuchInstance)
	}
	return vb.Value
}

// Next implements mib.Handler.
func (p *Pass) Next(r *mib.Request, oid snmp.OID) (snmp.VarBind, bool) {
	if oid.Compare(p.Prefix) < 0 {
		oid = p.Prefix
	}
	lines, err := p.ask("-n", oid, "")
	if err != nil {
		p.log().Warn("pass: no answer", "program", p.Program, "err", err)
		r.Fail(snmp.GenErr)
		return snmp.VarBind{}, false
	}
	vb, ok := p.parse(lines)
	if !ok || vb.Name.Compare(oid) <= 0 {
		return snmp.VarBind{}, false
	}
	return vb, true
}

// TestSet implements mib.Setter: the value must be one a pass program
// can be given; the program decides at commit, as in Net-SNMP.
func (p *Pass) TestSet(_ *mib.Request, vb snmp.VarBind) snmp.ErrorStatus {
	if _, ok := setArg(vb.Value); !ok {
		return snmp.WrongType
	}
	return snmp.NoError
}

// CommitSet implements mib.Setter.
func (p *Pass) CommitSet(_ *mib.Request, vbs []snmp.VarBind) snmp.ErrorStatus {
	for _, vb := range vbs {
		arg, _ := setArg(vb.Value)
		lines, err := p.ask("-s", vb.Name, arg)
		if err != nil {
			return snmp.CommitFailed
		}
		ans := ""
		if len(lines) > 0 {
			ans = strings.TrimSpace(lines[0])
		}
		switch ans {
		case "", "DONE":
		case "not-writable":
			return snmp.NotWritable
		case "wrong-type":
			return snmp.WrongType
		case "wrong-length":
			return snmp.WrongLength
		case "wrong-value":
			return snmp.WrongValue
		case "inconsistent-value":
			return snmp.InconsistentValue
		default:
			return snmp.CommitFailed
		}
	}
	return snmp.NoError
}

// setArg is "TYPE VALUE" as Net-SNMP passes a set to the program.
func setArg(v snmp.Value) (string, bool) {
	switch v.Type {
	case snmp.Integer:
		return "integer " + strconv.FormatInt(v.Int(), 10), true
	case snmp.Gauge32:
		return "gauge " + strconv.FormatUint(v.Num, 10), true
	case snmp.Counter32:
		return "counter " + strconv.FormatUint(v.Num, 10), true
	case snmp.TimeTicks:
		return "timeticks " + strconv.FormatUint(v.Num, 10), true
	case snmp.OctetString:
		return "string " + string(bytes.ReplaceAll(v.Bytes, []byte("\n"), []byte(" "))), true
	case snmp.IPAddress:
		if len(v.Bytes) == 4 {
			return "ipaddress " + netip.AddrFrom4([4]byte(v.Bytes)).String(), true
		}
	case snmp.ObjectIdentifier:
		return "objectid ." + v.OID.String(), true
	}
	return "", false
}
