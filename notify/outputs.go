package notify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// Outputs takes accepted notifications off a Receiver's queue and logs,
// hands and forwards them. Handler programs run on a queue of their own,
// so a slow one delays neither reception nor the log.
type Outputs struct {
	// Text receives snmptrapd's text format (or Format1/Format2).
	Text io.Writer
	// JSON receives one JSON object per line.
	JSON             io.Writer
	Format1, Format2 string
	Handlers         []Handler
	Forwards         []Forward
	// HandlerQueue bounds the notifications waiting for handler programs
	// (default 1000); HandlerTimeout bounds one run (default 30 s).
	HandlerQueue   int
	HandlerTimeout time.Duration
	Log            *slog.Logger

	Stats OutputStats

	rules atomic.Pointer[OutputRules] // set by SetRules; nil: the fields above
}

// OutputRules are the parts of Outputs a reload replaces as a whole.
type OutputRules struct {
	Format1, Format2 string
	Handlers         []Handler
	Forwards         []Forward
}

// SetRules replaces the formats, handlers and forwards at once, while
// Run goes on: a notification uses either the old rules or the new ones,
// never a mix.
func (o *Outputs) SetRules(r OutputRules) { o.rules.Store(&r) }

// current returns the rules in force.
func (o *Outputs) current() *OutputRules {
	if r := o.rules.Load(); r != nil {
		return r
	}
	return &OutputRules{Format1: o.Format1, Format2: o.Format2, Handlers: o.Handlers, Forwards: o.Forwards}
}

// OutputStats count what the outputs did.
type OutputStats struct {
	Logged         atomic.Uint64
	Handled        atomic.Uint64 // handler programs run
	HandlerErrors  atomic.Uint64 // runs that failed or timed out
	HandlerDropped atomic.Uint64 // notifications the handler queue had no room for
	Forwarded      atomic.Uint64
	ForwardErrors  atomic.Uint64
}

type handlerJob struct {
	cmd   string
	input []byte
}

// Run processes notifications until q is closed and the handler queue
// has drained.
func (o *Outputs) Run(q <-chan *Notification) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.HandlerQueue <= 0 {
		o.HandlerQueue = 1000
	}
	if o.HandlerTimeout <= 0 {
		o.HandlerTimeout = 30 * time.Second
	}
	jobs := make(chan handlerJob, o.HandlerQueue)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for j := range jobs {
			o.runHandler(j)
		}
	}()
	fwd := map[string]*manager.Session{}
	defer func() {
		for _, s := range fwd {
			s.Close()
		}
	}()
	var buf []byte
	names := nameCache{}
	lastFlush := time.Now()
	defer o.flush()
	for n := range q {
		rules := o.current()
		if n.Types&Log != 0 {
			if o.Text != nil {
				buf = rules.appendText(buf[:0], n, names)
				if _, err := o.Text.Write(buf); err != nil {
					o.Log.Warn("notification log not written", "err", err)
				}
			}
			if o.JSON != nil {
				buf = AppendJSON(buf[:0], n)
				if _, err := o.JSON.Write(buf); err != nil {
					o.Log.Warn("notification JSON not written", "err", err)
				}
			}
			o.Stats.Logged.Add(1)
		}
		if n.Types&Execute != 0 {
			for _, h := range match(rules.Handlers, n.TrapOID(), func(h Handler) snmp.OID { return h.OID }) {
				select {
				case jobs <- handlerJob{cmd: h.Command, input: AppendHandlerInput(nil, n)}:
				default:
					if d := o.Stats.HandlerDropped.Add(1); d&(d-1) == 0 {
						o.Log.Warn("handler queue full: notifications not handed to programs", "dropped", d)
					}
				}
			}
		}
		if n.Types&Net != 0 {
			for _, f := range match(rules.Forwards, n.TrapOID(), func(f Forward) snmp.OID { return f.OID }) {
				o.forward(fwd, f, n)
			}
		}
		// Buffered outputs are written out once the queue is empty, and
		// at least every maxFlushDelay while it is not.
		if len(q) == 0 || time.Since(lastFlush) >= maxFlushDelay {
			o.flush()
			lastFlush = time.Now()
		}
	}
	close(jobs)
	wg.Wait()
}

// Flusher is an output that buffers what is written to it (Outputs.Text
// or JSON): Run flushes it whenever no notification is waiting, at least
// every maxFlushDelay, and when it returns.
type Flusher interface {
	Flush() error
}

// maxFlushDelay bounds how long a logged notification may wait in a
// buffered output while more keep coming.
const maxFlushDelay = 100 * time.Millisecond

func (o *Outputs) flush() {
	for _, w := range []io.Writer{o.Text, o.JSON} {
		if f, ok := w.(Flusher); ok {
			if err := f.Flush(); err != nil {
				o.Log.Warn("notification log not written", "err", err)
			}
		}
	}
}

// match returns the entries whose OID is the notification's, else those
// with no OID ("default").
func match[T any](list []T, trap snmp.OID, oid func(T) snmp.OID) []T {
	var exact, def []T
	for _, e := range list {
		switch o := oid(e); {
		case o == nil:
			def = append(def, e)
		case trap != nil && o.Equal(trap):
			exact = append(exact, e)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return def
}

func (o *Outputs) runHandler(j handlerJob) {
	ctx, cancel := context.WithTimeout(context.Background(), o.HandlerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", j.cmd)
	cmd.Stdin = bytes.NewReader(j.input)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	o.Stats.Handled.Add(1)
	if err := cmd.Run(); err != nil {
		o.Stats.HandlerErrors.Add(1)
		o.Log.Warn("traphandle program failed", "program", j.cmd, "err", err, "output", strings.TrimSpace(out.String()))
	}
}

// forward re-sends a notification to another receiver as it came: the
// same version and community; SNMPv3 notifications go on as SNMPv2c
// traps with the community "public", as Net-SNMP's forward does without
// a configured session.
func (o *Outputs) forward(sessions map[string]*manager.Session, f Forward, n *Notification) {
	s := sessions[f.Destination]
	v, comm := n.Version, n.Security.Name
	if v == snmp.V3 {
		v, comm = snmp.V2c, "public"
	}
	if s == nil || s.Err() != nil || s.Config().Version != v || s.Config().Community != comm {
		if s != nil {
			s.Close()
		}
		var err error
		s, err = manager.Dial(context.Background(), TargetSpec(f.Destination), manager.Config{Version: v, Community: comm, Timeout: 5 * time.Second, PollerWait: true})
		if err != nil {
			o.Stats.ForwardErrors.Add(1)
			o.Log.Warn("forward failed", "destination", f.Destination, "err", err)
			return
		}
		sessions[f.Destination] = s
	}
	pdu := snmp.PDU{Type: snmp.SNMPv2Trap, VarBinds: n.VarBinds}
	if n.Type == snmp.Trap {
		pdu = snmp.PDU{Type: snmp.Trap, Enterprise: n.Enterprise, AgentAddr: n.AgentAddr, GenericTrap: n.GenericTrap,
			SpecificTrap: n.SpecificTrap, Timestamp: n.Timestamp, VarBinds: n.VarBinds}
	}
	if err := s.Notify(context.Background(), &pdu); err != nil {
		o.Stats.ForwardErrors.Add(1)
		o.Log.Warn("forward failed", "destination", f.Destination, "err", err)
		return
	}
	o.Stats.Forwarded.Add(1)
}

// AppendText appends n in the configured text format: Format1 for SNMPv1
// traps, Format2 for the others, snmptrapd's default when empty.
func (o *Outputs) AppendText(b []byte, n *Notification) []byte {
	return o.current().appendText(b, n, nil)
}

func (r *OutputRules) appendText(b []byte, n *Notification, names nameCache) []byte {
	f := r.Format2
	if n.Type == snmp.Trap {
		f = r.Format1
	}
	if f == "" {
		return names.appendText(b, n)
	}
	return AppendFormat(b, f, n)
}

// AppendFormat appends n formatted by an snmptrapd format string. The
// %-codes: %a the sender's address (a Trap-PDU's agent-addr), %A its host
// name, %b the transport address, %B the sender's host name, %N the
// enterprise, %q the specific trap, %w the generic trap number, %W its
// description, %P the security information, %t the time in seconds since
// 1970, %T the notification's uptime in seconds (%#T formatted), %v the
// varbinds separated by tabs, %y %m %l %h %j %k the year, month, day,
// hour, minute and second of reception, %% a percent sign; a width and a
// precision ("%.2m") pad as in C. \n, \t and \\ are escapes.
func AppendFormat(b []byte, f string, n *Notification) []byte {
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '\\' && i+1 < len(f) {
			i++
			switch f[i] {
			case 'n':
				b = append(b, '\n')
			case 't':
				b = append(b, '\t')
			case 'r':
				b = append(b, '\r')
			default:
				b = append(b, f[i])
			}
			continue
		}
		if c != '%' || i+1 >= len(f) {
			b = append(b, c)
			continue
		}
		// %[-][#][width][.precision]code
		j := i + 1
		left, alt := false, false
		for j < len(f) && (f[j] == '-' || f[j] == '#') {
			left, alt = left || f[j] == '-', alt || f[j] == '#'
			j++
		}
		width, prec := 0, -1
		for j < len(f) && f[j] >= '0' && f[j] <= '9' {
			width = width*10 + int(f[j]-'0')
			j++
		}
		if j < len(f) && f[j] == '.' {
			prec = 0
			j++
			for j < len(f) && f[j] >= '0' && f[j] <= '9' {
				prec = prec*10 + int(f[j]-'0')
				j++
			}
		}
		if j >= len(f) {
			b = append(b, f[i:]...)
			break
		}
		i = j
		num := func(v int) string {
			s := strconv.Itoa(v)
			for prec > len(s) {
				s = "0" + s
			}
			return s
		}
		var s string
		t := n.Time
		switch f[j] {
		case '%':
			s = "%"
		case 'y':
			s = num(t.Year())
		case 'm':
			s = num(int(t.Month()))
		case 'l':
			s = num(t.Day())
		case 'h':
			s = num(t.Hour())
		case 'j':
			s = num(t.Minute())
		case 'k':
			s = num(t.Second())
		case 't':
			s = num(int(t.Unix()))
		case 'T':
			up := n.uptime()
			if alt {
				s = Uptime(up)
			} else {
				s = num(int(up / 100))
			}
		case 'a':
			s = n.senderAddr().String()
		case 'A':
			s = HostName(n.senderAddr())
		case 'b':
			s = n.TransportString()
		case 'B':
			s = n.hostName()
		case 'N':
			if n.Type == snmp.Trap {
				s = printOpts.OID(n.Enterprise)
			} else if t := n.TrapOID(); t != nil {
				s = printOpts.OID(t)
			}
		case 'q':
			s = num(n.SpecificTrap)
		case 'w':
			s = num(n.GenericTrap)
		case 'W':
			if n.Type == snmp.Trap {
				s = genericName(n.GenericTrap)
			} else if t := n.TrapOID(); t != nil {
				s = printOpts.OID(t)
			}
		case 'P':
			s = n.securityInfo()
		case 'v':
			var vb []string
			for _, v := range n.VarBinds {
				vb = append(vb, printOpts.VarBind(v))
			}
			s = strings.Join(vb, "\t")
		default:
			s = f[i-1 : j+1]
		}
		if prec >= 0 && f[j] != 'y' && f[j] != 'm' && f[j] != 'l' && f[j] != 'h' && f[j] != 'j' && f[j] != 'k' &&
			f[j] != 't' && f[j] != 'q' && f[j] != 'w' && (f[j] != 'T' || alt) && len(s) > prec {
			s = s[:prec]
		}
		for len(s) < width {
			if left {
				s += " "
			} else {
				s = " " + s
			}
		}
		b = append(b, s...)
	}
	return b
}

func (n *Notification) uptime() uint32 {
	if n.Type == snmp.Trap {
		return n.Timestamp
	}
	if len(n.VarBinds) > 0 && n.VarBinds[0].Value.Type == snmp.TimeTicks {
		return uint32(n.VarBinds[0].Value.Num)
	}
	return 0
}

func (n *Notification) senderAddr() netip.Addr {
	if n.Type == snmp.Trap {
		return netip.AddrFrom4(n.AgentAddr)
	}
	return n.Remote.Addr().Unmap()
}

func (n *Notification) securityInfo() string {
	kind := map[snmp.PDUType]string{snmp.Trap: "TRAP", snmp.SNMPv2Trap: "TRAP2", snmp.InformRequest: "INFORM"}[n.Type]
	if n.Version == snmp.V3 {
		return fmt.Sprintf("%s, SNMP v3, user %s, context %s", kind, n.Security.Name, n.Security.Context)
	}
	return fmt.Sprintf("%s, SNMP v%s, community %s", kind, n.Version, n.Security.Name)
}
