// Command tsnmp is tsnmp's command generator: Net-SNMP's snmpget,
// snmpgetnext, snmpbulkget, snmpwalk, snmpbulkwalk, snmpset and snmptable
// as subcommands, with the same options and the same output.
//
//	tsnmp get      [OPTIONS] AGENT OID [OID]...
//	tsnmp getnext  [OPTIONS] AGENT OID [OID]...
//	tsnmp bulkget  [OPTIONS] AGENT OID [OID]...     (-Cn<N> -Cr<N>)
//	tsnmp walk     [OPTIONS] AGENT [OID]            (-Cc -Ci -CI -Cp -CE<OID>)
//	tsnmp bulkwalk [OPTIONS] AGENT [OID]            (-Cn<N> -Cr<N> -Cc -Ci -CI -Cp)
//	tsnmp set      [OPTIONS] AGENT OID TYPE VALUE [OID TYPE VALUE]...
//	tsnmp table    [OPTIONS] AGENT TABLE-OID        (-Cb -Ci -CH -Ch -Cf<SEP> -Cw<N> -Cl -Cr<N> -CB)
//	tsnmp trap     [OPTIONS] RECEIVER TRAP-PARAMETERS (-Ci; see trap.go)
//	tsnmp inform   [OPTIONS] RECEIVER TRAP-PARAMETERS
//	tsnmp trapd    [OPTIONS]                         (notification receiver; see trapd.go)
//
// Installed under Net-SNMP's names (snmpget, snmpwalk, ...) it behaves as
// that tool. Common options: -v 1|2c|3 (default 3), -c COMMUNITY,
// -u USER, -l LEVEL, -a MD5|SHA|SHA-224|SHA-256|SHA-384|SHA-512, -A PASS,
// -x DES|AES|AES128|AES192|AES256|AES192C|AES256C, -X PASS, -e ENGINEID,
// -E ENGINEID, -n CONTEXT, -r RETRIES (default 5), -t SECONDS (default 1),
// -O OUTOPTS (n q Q v x a e t s S f U). Retransmission follows Net-SNMP: a
// fixed timeout per attempt. -Ta (or --adaptive) switches to the adaptive
// timer (RFC 6298 smoothed RTT with Karn's rule, starting at -t).
//
// With -v 3 and authentication, the user's keys localized to the agent's
// engine are kept in the cache directory ($XDG_CACHE_HOME/tsnmp, files
// 0600), so that later commands with the same user, protocols and
// passwords hash no password; --no-key-cache turns this off (see
// manager.KeyCache for the trade-off).
//
// AGENT is [udp:|tcp:|udp6:|tcp6:]host[:port], IPv6 as [::1]:1161; the
// default port is 161. Errors are reported under the Net-SNMP tool's name
// (e.g. "snmpget: Unknown user name") with Net-SNMP's exit codes: 0 on
// success, 1 for timeouts and errors, 2 for an error-status in a response.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/tsnmp/tsnmp/internal/xdg"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, filepath.Base(os.Args[0]), os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// commands maps subcommands to the Net-SNMP tool they stand for.
var commands = map[string]string{
	"get":      "snmpget",
	"getnext":  "snmpgetnext",
	"bulkget":  "snmpbulkget",
	"walk":     "snmpwalk",
	"bulkwalk": "snmpbulkwalk",
	"set":      "snmpset",
	"table":    "snmptable",
	"trap":     "snmptrap",
	"inform":   "snmpinform",
	"status":   "snmpstatus",
	"df":       "snmpdf",
	"netstat":  "snmpnetstat",
	"delta":    "snmpdelta",
	"usm":      "snmpusm",
	"vacm":     "snmpvacm",
}

var usages = map[string]string{
	"snmpget":      "AGENT OID [OID]...",
	"snmpgetnext":  "AGENT OID [OID]...",
	"snmpbulkget":  "AGENT OID [OID]...",
	"snmpwalk":     "AGENT [OID]",
	"snmpbulkwalk": "AGENT [OID]",
	"snmpset":      "AGENT OID TYPE VALUE [OID TYPE VALUE]...",
	"snmptable":    "AGENT TABLE-OID",
	"snmptrap":     "AGENT TRAP-PARAMETERS",
	"snmpinform":   "AGENT TRAP-PARAMETERS",
	"snmpstatus":   "AGENT",
	"snmpdf":       "AGENT",
	"snmpnetstat":  "AGENT",
	"snmpdelta":    "AGENT OID...",
	"snmpusm":      "AGENT COMMAND [ARGS]",
	"snmpvacm":     "AGENT COMMAND [ARGS]",
}

// app is one run of a tool.
type app struct {
	tool string
	o    *options
	out  *bufio.Writer
	errw io.Writer
	sess *manager.Session
	peer string
	// name is the agent as the command line gave it, which messages
	// name (peer is where it leads: snmp.conf's defaultPort, defTarget,
	// a host file's transport).
	name string
	ctx  context.Context
	// detail is the text Net-SNMP's library leaves behind after resolving
	// an unqualified name ("Sub-id not found: (top) -> sysDescr"), which
	// its tools append to later error messages.
	detail string
}

// peerName is the agent as messages name it.
func (a *app) peerName() string {
	if a.name != "" {
		return a.name
	}
	return a.peer
}

// withDetail appends the pending detail the way Net-SNMP's perror does.
func (a *app) withDetail(msg string) string {
	if a.detail == "" {
		return msg
	}
	return msg + " (" + a.detail + ")"
}

// errorf writes to standard error after flushing standard output, so the
// two interleave as Net-SNMP's do.
func (a *app) errorf(format string, args ...any) {
	a.out.Flush()
	fmt.Fprintf(a.errw, format, args...)
}

func run(ctx context.Context, argv0 string, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && subcommands[args[0]] != nil { // tsnmp bench (bench.go)
		return subcommands[args[0]](ctx, args[1:], stdout, stderr)
	}
	if argv0 == "snmptranslate" {
		return translateMain(args, stdout, stderr) // translate.go
	}
	if len(args) > 0 && args[0] == "translate" {
		return translateMain(args[1:], stdout, stderr) // translate.go
	}
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "--help":
			return helpMain(args[1:], stdout, stderr) // help.go
		case "--version", "-V", "version":
			fmt.Fprintf(stdout, "tsnmp %s\n", versionString())
			return 0
		case "completion":
			return completionMain(args[1:], stdout, stderr)
		}
	}
	if len(args) > 0 && args[0] == "trapd" {
		return trapdMain(ctx, args[1:], stdout, stderr) // trapd.go
	}
	tool := argv0
	if _, ok := usages[tool]; !ok && len(args) > 0 && args[0] == "cert" {
		return certMain(args[1:], stdout, stderr)
	}
	if _, ok := usages[tool]; !ok {
		if len(args) == 0 || commands[args[0]] == "" {
			if len(args) > 0 {
				fmt.Fprintf(stderr, "tsnmp: unknown command %q\n\n", args[0])
			}
			printOverview(stderr) // help.go
			return 1
		}
		tool = commands[args[0]]
		args = args[1:]
	}
	stderr = &lockedWriter{w: stderr} // -d dumps from the reading goroutine
	a := &app{tool: tool, out: bufio.NewWriter(stdout), errw: stderr, ctx: ctx}
	defer a.out.Flush()
	nextWord := map[string]string{"snmptable": "wcfr", "snmpwalk": "E", "snmpdelta": "pPvFL", "snmpnetstat": "!fpwI"}[tool]
	permute := tool != "snmpset" && tool != "snmptrap" && tool != "snmpinform"
	o, err := parseArgsTool(args, permute, nextWord)
	if err != nil {
		a.errorf("%s\n", err)
		a.usage()
		return 1
	}
	a.o = o
	conf := readConf() // conf.go
	if len(o.args) > 0 {
		conf = append(conf, readHostConf(o.args[0], conf)...)
	}
	conf = append(conf, confOptions(o.confOpts)...)
	o.applyConf(conf, stderr)
	if o.debug {
		o.cfg.Logger = newDebugLogger(stderr, o.debugTokens) // debug.go
		o.mibs.log = o.cfg.Logger
		for _, l := range conf {
			v := l.val
			if strings.Contains(l.key, "passphrase") || strings.Contains(l.key, "key") {
				v = "(not shown)"
			}
			o.cfg.Logger.Debug(fmt.Sprintf("snmp.conf: %s:%d: %s %s", l.file, l.line, l.key, v))
		}
	}
	loadMIBs(o.mibs, stderr, false) // mibs.go
	if o.version {
		fmt.Fprintf(a.out, "tsnmp %s\n", versionString())
		return 0
	}
	if o.help {
		if c := findHelp(a.tool); c != nil {
			printCommandHelp(a.out, c) // help.go
		} else {
			a.usage()
		}
		return 0
	}
	if len(o.args) == 0 {
		a.errorf("No hostname specified.\n")
		a.usage()
		return 1
	}
	app := "snmp"
	if tool == "snmptrap" || tool == "snmpinform" {
		app = "snmptrap"
	}
	a.name = o.args[0]
	a.peer = o.target(o.args[0], app) // conf.go: host file, alias, defDomain, defTarget, defaultPort
	operands := o.args[1:]
	if o.dump {
		network := "udp"
		if t, err := manager.ParseTarget(a.peer); err == nil {
			network = t.Network
		}
		if i := strings.IndexByte(a.peer, ':'); i > 0 {
			switch p := strings.ToLower(a.peer[:i]); p {
			case "tls", "dtls", "ssh":
				network = p
			}
		}
		o.cfg.Trace = func(sent bool, msg []byte, local, remote net.Addr) {
			dumpPacket(stderr, network, sent, msg, local, remote)
		}
	}
	if o.cfg.Version != snmp.V3 && !o.communitySet {
		a.errorf("No community name specified.\n")
		a.usage()
		return 1
	}
	switch a.tool {
	case "snmpget", "snmpgetnext", "snmpbulkget":
		if len(operands) == 0 {
			a.errorf("Missing object name\n")
			a.usage()
			return 1
		}
	case "snmpset":
		if len(operands) == 0 {
			a.errorf("Missing object name\n")
			a.usage()
			return 1
		}
	case "snmptable":
		if len(operands) != 1 {
			a.errorf("Must have exactly one table name\n")
			a.usage()
			return 1
		}
	case "snmpwalk", "snmpbulkwalk":
		if len(operands) > 1 {
			a.errorf("Too many arguments\n")
			a.usage()
			return 1
		}
	}
	// Parse operands before contacting the agent, as Net-SNMP does.
	var cmd func([]string) int
	switch a.tool {
	case "snmpget":
		cmd = func(ops []string) int { return a.get(ops, snmp.GetRequest) }
	case "snmpgetnext":
		cmd = func(ops []string) int { return a.get(ops, snmp.GetNextRequest) }
	case "snmpbulkget":
		cmd = a.bulkget
	case "snmpwalk":
		cmd = func(ops []string) int { return a.walk(ops, false) }
	case "snmpbulkwalk":
		cmd = func(ops []string) int { return a.walk(ops, true) }
	case "snmpset":
		cmd = a.set
	case "snmptable":
		cmd = a.table
	case "snmptrap", "snmpinform":
		cmd = a.trap // trap.go
	case "snmpstatus":
		cmd = a.status // smalltools.go
	case "snmpdf":
		cmd = a.df
	case "snmpnetstat":
		cmd = a.netstat // netstat.go
	case "snmpdelta":
		cmd = a.delta // delta.go
	case "snmpusm":
		cmd = a.usm // usm.go
	case "snmpvacm":
		cmd = a.vacm // vacm.go
	}
	return cmd(operands)
}

func (a *app) usage() {
	a.errorf("USAGE: %s [OPTIONS] %s\n", a.tool, usages[a.tool])
	if c := findHelp(a.tool); c != nil {
		a.errorf("  Run \"tsnmp %s --help\" for the options.\n", c.name)
	} else {
		a.errorf("  Run \"%s -h\" for the options.\n", a.tool)
	}
}

// open checks the security configuration and opens the session.
func (a *app) open() bool {
	if manager.IsSSHTarget(a.peer) {
		return a.openSSH()
	}
	if manager.IsSecureTarget(a.peer) {
		return a.openSecure()
	}
	cfg := a.o.cfg
	if a.o.secModel == "tsm" && cfg.Version == snmp.V3 {
		a.errorf("%s: defSecurityModel tsm needs a tls:, dtls: or ssh: agent address, not %s\n", a.tool, a.peer)
		return false
	}
	if cfg.Version == snmp.V3 {
		if cfg.User == "" {
			a.errorf("%s: %s\n", a.tool, a.withDetail("No securityName specified"))
			return false
		}
		authKey := len(cfg.AuthKey) > 0 || len(cfg.AuthLocalKey) > 0
		privKey := len(cfg.PrivKey) > 0 || len(cfg.PrivLocalKey) > 0
		if cfg.Level >= snmp.AuthNoPriv && !authKey && len(cfg.AuthPassword) < 8 {
			a.errorf("Error: passphrase chosen is below the length requirements of the USM (min=8).\n")
			a.errorf("%s:  (The supplied password length is too short.)\n", a.tool)
			a.errorf("Error generating a key (Ku) from the supplied authentication pass phrase. \n")
			return false
		}
		if cfg.Level == snmp.AuthPriv && !privKey {
			if cfg.PrivPassword == "" {
				cfg.PrivPassword = cfg.AuthPassword
			}
			if len(cfg.PrivPassword) < 8 {
				a.errorf("Error: passphrase chosen is below the length requirements of the USM (min=8).\n")
				a.errorf("%s:  (The supplied password length is too short.)\n", a.tool)
				a.errorf("Error generating a key (Ku) from the supplied privacy pass phrase. \n")
				return false
			}
		}
		if cfg.Level >= snmp.AuthNoPriv && !a.o.noKeyCache {
			if dir, err := xdg.CacheDir(); err == nil {
				cfg.KeyCache = &manager.KeyCache{Dir: dir}
			}
		}
	}
	t, err := manager.ParseTarget(a.peer)
	if err != nil {
		a.errorf("%s: Unknown host (%s)\n", a.tool, a.peer)
		return false
	}
	if t.Stream() {
		cfg.LocalAddr = "" // clientaddr is for UDP, as in Net-SNMP
	}
	s, err := manager.DialTarget(a.ctx, t, cfg)
	if err != nil {
		var dnsErr *net.DNSError
		switch {
		case errors.As(err, &dnsErr):
			a.errorf("%s: Unknown host (%s)\n", a.tool, a.peer)
		case errors.Is(err, syscall.ECONNREFUSED):
			a.errorf("%s: Unknown host (%s) (Connection refused)\n", a.tool, a.peer)
		default:
			a.errorf("%s: Unknown host (%s) (%v)\n", a.tool, a.peer, unwrapOp(err))
		}
		return false
	}
	a.sess = s
	return true
}

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// requestError prints a failed exchange as Net-SNMP does; dot tells
// whether the tool ends the timeout message with a period.
func (a *app) requestError(err error, dot bool) {
	var re *manager.ReportError
	switch {
	case errors.Is(err, manager.ErrTimeout):
		if dot {
			a.errorf("Timeout: No Response from %s.\n", a.peerName())
		} else {
			a.errorf("Timeout: No Response from %s\n", a.peerName())
		}
	case errors.As(err, &re):
		a.errorf("%s: %s\n", a.tool, a.withDetail(re.Error()))
	case errors.Is(err, context.Canceled):
		a.errorf("%s: interrupted\n", a.tool)
	default:
		a.errorf("%s: %s\n", a.tool, a.withDetail(err.Error()))
	}
}

// parseOID resolves a name or numeric OID; failures are printed.
func (a *app) parseOID(s string) (snmp.OID, bool) {
	// An instance index is read as Net-SNMP's tools read it: checked
	// against the INDEX objects' ranges unless -Ir.
	ro := smi.ResolveOptions{Random: true, Strict: true, CNumbers: true, NoRangeCheck: a.o.noRangeCheck,
		Warn: func(m string) { a.errorf("%s\n", m) }}
	if !a.o.noHints {
		ro.ParseHint = format.ParseOctetHint
	}
	oid, err := smi.ResolveWith(s, ro)
	if err != nil {
		var re *smi.ResolveError
		switch {
		case errors.As(err, &re) && re.Detail == "" && a.detail != "":
			a.errorf("%s: Unknown Object Identifier (%s)\n", re.Input, a.detail)
		case errors.As(err, &re):
			a.errorf("%s\n", err)
		default:
			a.errorf("%s: %v\n", s, err)
		}
		return nil, false
	}
	if !strings.Contains(s, "::") && s != "" && (s[0] < '0' || s[0] > '9') && s[0] != '.' {
		first, _, _ := strings.Cut(s, ".")
		if first != "iso" && first != "ccitt" && first != "joint-iso-ccitt" {
			a.detail = "Sub-id not found: (top) -> " + first
		}
	}
	return snmp.OID(oid), true
}

// errorStrings are Net-SNMP's texts for error-status values.
var errorStrings = [...]string{
	"(noError) No Error",
	"(tooBig) Response message would have been too large.",
	"(noSuchName) There is no such variable name in this MIB.",
	"(badValue) The value given has the wrong type or length.",
	"(readOnly) The two parties used do not have access to use the specified SNMP PDU.",
	"(genError) A general failure occured",
	"noAccess",
	"wrongType (The set datatype does not match the data type the agent expects)",
	"wrongLength (The set value has an illegal length from what the agent expects)",
	"wrongEncoding",
	"wrongValue (The set value is illegal or unsupported in some way)",
	"noCreation (That table does not support row creation or that object can not ever be created)",
	"inconsistentValue (The set value is illegal or unsupported in some way)",
	"resourceUnavailable (This is likely a out-of-memory failure within the agent)",
	"commitFailed",
	"undoFailed",
	"authorizationError (access denied to that object)",
	"notWritable (That object does not support modification)",
	"inconsistentName (That object can not currently be created)",
}

func errorString(s snmp.ErrorStatus) string {
	if s >= 0 && int(s) < len(errorStrings) {
		return errorStrings[s]
	}
	return "Unknown Error"
}

// packetError prints an error-status response; dot selects "Error in
// packet." (walks, set, bulkget) or "Error in packet" (get, getnext).
func (a *app) packetError(se *manager.StatusError, dot bool) {
	if dot {
		a.errorf("Error in packet.\nReason: %s\n", errorString(se.Status))
	} else {
		a.errorf("Error in packet\nReason: %s\n", errorString(se.Status))
	}
	if se.Index != 0 {
		a.errorf("Failed object: ")
		if name, ok := se.FailedObject(); ok {
			a.errorf("%s\n", a.o.out.OID(name))
		}
		a.errorf("\n")
	}
}

func (a *app) printVarBind(vb snmp.VarBind) {
	a.out.WriteString(a.o.out.VarBind(vb))
	a.out.WriteByte('\n')
}

// appFlags are the parsed -C options of a tool.
type appFlags struct {
	set map[byte]bool
	num map[byte]int
	str map[byte]string
}

// parseAppOpts parses the -C arguments: letters in nums take a number
// that follows directly, letters in strs take the rest of the argument,
// other letters in flags are switches. Unknown letters are errors.
func (a *app) parseAppOpts(flags, nums, strs string) (*appFlags, bool) {
	f := &appFlags{set: map[byte]bool{}, num: map[byte]int{}, str: map[byte]string{}}
	for _, arg := range a.o.appOpts {
		for i := 0; i < len(arg); i++ {
			c := arg[i]
			switch {
			case strings.IndexByte(nums, c) >= 0:
				j := i + 1
				for j < len(arg) && arg[j] >= '0' && arg[j] <= '9' {
					j++
				}
				n, err := strconv.Atoi(arg[i+1 : j])
				if err != nil {
					a.errorf("No number given -- error.\n")
					return nil, false
				}
				f.num[c], f.set[c] = n, true
				i = j - 1
			case strings.IndexByte(strs, c) >= 0:
				f.str[c], f.set[c] = arg[i+1:], true
				i = len(arg)
			case strings.IndexByte(flags, c) >= 0:
				f.set[c] = true
			default:
				a.errorf("Unknown flag passed to -C: %c\n", c)
				return nil, false
			}
		}
	}
	return f, true
}
