package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/tsnmp/tsnmp/mib/smi"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// versionString is the version, or the module version or VCS revision
// the binary was built from.
func versionString() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return version
}

// opt is one option in the help: its form and what it does.
type opt struct{ flag, text string }

// cmdHelp describes a subcommand. The help, the manual pages
// (dist/man/tsnmp*.1) and the shell completion are all made from these.
type cmdHelp struct {
	name, tool string // subcommand and the Net-SNMP tool it stands for
	args       string
	summary    string
	descr      string
	appOpts    []opt // its -C options, or its own options
	common     bool  // takes the common options
}

var helpCommands = []cmdHelp{
	{name: "get", tool: "snmpget", args: "AGENT OID...", common: true,
		summary: "get the values of objects",
		descr:   "Sends one Get request for the OIDs and prints the variables of the response. When the agent answers an error for one variable, that variable is removed and the request sent again (unless -Cf).",
		appOpts: []opt{{"-Cf", "do not send the request again without the failed variable"}}},
	{name: "getnext", tool: "snmpgetnext", args: "AGENT OID...", common: true,
		summary: "get the objects that follow OIDs",
		descr:   "Sends one GetNext request and prints the variables of the response: the first object after each OID.",
		appOpts: []opt{{"-Cf", "do not send the request again without the failed variable"}}},
	{name: "bulkget", tool: "snmpbulkget", args: "AGENT OID...", common: true,
		summary: "get many following objects in one GetBulk request",
		descr:   "Sends one GetBulk request (SNMPv2c or SNMPv3): the first non-repeaters OIDs are read once, the others up to max-repetitions times.",
		appOpts: []opt{{"-Cn<NUM>", "non-repeaters (default 0)"}, {"-Cr<NUM>", "max-repetitions (default 10)"}}},
	{name: "walk", tool: "snmpwalk", args: "AGENT [OID]", common: true,
		summary: "get every object of a subtree with GetNext",
		descr:   "Walks the subtree of OID (default: the MIB-2 and enterprise objects, from .1.3.6.1.2.1) with GetNext requests and prints each variable.",
		appOpts: []opt{{"-Cc", "do not check that returned OIDs increase"}, {"-Ci", "include the given OID itself (a Get first)"},
			{"-CI", "do not get the OID itself when the subtree is empty"}, {"-Cp", "print the number of variables found"},
			{"-CE OID", "end the walk before OID"}}},
	{name: "bulkwalk", tool: "snmpbulkwalk", args: "AGENT [OID]", common: true,
		summary: "get every object of a subtree with GetBulk",
		descr:   "Walks the subtree of OID with GetBulk requests (SNMPv2c or SNMPv3) and prints each variable.",
		appOpts: []opt{{"-Cn<NUM>", "non-repeaters (default 0)"}, {"-Cr<NUM>", "max-repetitions (default 10)"},
			{"-Cc", "do not check that returned OIDs increase"}, {"-Ci", "include the given OID itself"},
			{"-CI", "do not get the OID itself when the subtree is empty"}, {"-Cp", "print the number of variables found"}}},
	{name: "set", tool: "snmpset", args: "AGENT OID TYPE VALUE [OID TYPE VALUE]...", common: true,
		summary: "set the values of objects",
		descr: "Sends one Set request. TYPE is one of: = (the type the MIB gives), i (INTEGER, or an enumeration label), " +
			"u (Unsigned32), t (TimeTicks), a (IpAddress), o (OBJECT IDENTIFIER), s (string), x (hex string), " +
			"d (decimal string), b (BITS: bit numbers or labels), n (NULL), U (unsigned 64-bit), I (signed 64-bit), " +
			"F (float), D (double), c (Counter32), C (Counter64). Options end at the first operand, so VALUE may start with '-'. " +
			"As snmpset does, values are checked against the MIB before anything is sent: the type, enumeration labels, " +
			"ranges and sizes (\"Value out of range\"; -Ir sends them unchecked), and an s value is read in the form of " +
			"the object's DISPLAY-HINT where it fits it (a MacAddress as 0:1a:2b:3c:4d:5e, a DateAndTime as " +
			"2026-11-26,13:30:0.0,+1:0; -Ih takes it as plain text)."},
	{name: "table", tool: "snmptable", args: "AGENT TABLE-OID", common: true,
		summary: "print a conceptual table",
		descr:   "Reads a table with GetBulk (GetNext with -v1 or -CB) and prints it in columns, as snmptable does.",
		appOpts: []opt{{"-Cb", "brief column headers (without the common prefix)"}, {"-Ci", "print the index of each row"},
			{"-CH", "no column headers"}, {"-Ch", "only the column headers"}, {"-Cf SEP", "separate fields with SEP instead of aligning them"},
			{"-Cw WIDTH", "break lines longer than WIDTH"}, {"-Cl", "left-justify the fields"},
			{"-Cr NUM", "max-repetitions of each GetBulk"}, {"-CB", "use GetNext instead of GetBulk"}}},
	{name: "trap", tool: "snmptrap", args: "RECEIVER TRAP-PARAMETERS", common: true,
		summary: "send a trap",
		descr: "SNMPv1: RECEIVER ENTERPRISE-OID AGENT-ADDR GENERIC-TRAP SPECIFIC-TRAP UPTIME [OID TYPE VALUE]...; " +
			"SNMPv2c and SNMPv3: RECEIVER UPTIME TRAP-OID [OID TYPE VALUE]... An empty UPTIME or AGENT-ADDR means the local one.",
		appOpts: []opt{{"-Ci", "send an inform (wait for the acknowledgement)"}}},
	{name: "inform", tool: "snmpinform", args: "RECEIVER UPTIME TRAP-OID [OID TYPE VALUE]...", common: true,
		summary: "send an inform and wait for its acknowledgement",
		descr:   "Sends an SNMPv2c or SNMPv3 inform and waits for the receiver's response, sending it again on timeout."},
	{name: "translate", tool: "snmptranslate", args: "OID...",
		summary: "translate between names and OIDs, and describe MIB objects",
		descr:   "Works on the MIB modules loaded (with -m and -M as for the other commands); prints what snmptranslate prints.",
		appOpts: []opt{{"-m MODULES", "MIB modules to load"}, {"-M DIRS", "MIB directories"},
			{"-On", "print OIDs numerically"}, {"-Of", "print the full path of names"}, {"-Os", "print the last name only"},
			{"-OS", "print the module and the last name (default)"}, {"-Ou", "print OIDs as Net-SNMP's UCD style"},
			{"-IR", "find a name in any module (random access)"}, {"-Td", "print the full definition of the objects"},
			{"-Tp", "print the tree below the objects (the whole tree without OID)"}, {"-Ta", "print the tree as OBJECT IDENTIFIER assignments"},
			{"-TB REGEX", "list the names matching REGEX"}, {"-Tz", "list every name and OID"},
			{"-To", "list every OID"}, {"-Tl", "list every OID with names and numbers"}, {"-Ts", "list every OID by names"}}},
	{name: "trapd", tool: "snmptrapd", args: "[OPTIONS] [LISTEN-ADDRESS]...",
		summary: "receive and log traps and informs (see tsnmp-trapd(8), tsnmp trapd --help)"},
	{name: "status", tool: "snmpstatus", args: "AGENT", common: true,
		summary: "print an agent's system information and interface counts",
		descr:   "Gets sysDescr, sysUpTime and the interface table and prints them on two lines as snmpstatus does.",
	},
	{name: "df", tool: "snmpdf", args: "AGENT", common: true,
		summary: "print the agent's disk space",
		descr:   "Reads HOST-RESOURCES-MIB's hrStorageTable (or UCD-SNMP-MIB's dskTable with -Cu) and prints the space of each file system as snmpdf does.",
		appOpts: []opt{{"-Cu", "use UCD-SNMP-MIB's dskTable"}, {"-Ch", "print sizes in powers of 1024 (K, M, G)"}, {"-CH", "print sizes in powers of 1000"}}},
	{name: "netstat", tool: "snmpnetstat", args: "AGENT", common: true,
		summary: "print the agent's network connections",
		descr:   "Reads the TCP connection and listener tables and the UDP endpoint table (IPv4 and IPv6), or with -Cr the routing table, with -Ci the interfaces and with -Cs the protocol statistics, and prints them as snmpnetstat does.",
		appOpts: []opt{{"-Ca", "also list the listening TCP sockets"}, {"-Cn", "print addresses and ports as numbers"},
			{"-Cv", "do not cut long names"}, {"-Cfinet, -Cfinet6", "only IPv4 or IPv6"}, {"-Cp PROTO", "only TCP or UDP (tcp, udp); with -Cs one protocol's statistics"},
			{"-Cr", "print the routing table (inetCidrRouteTable) instead"},
			{"-Ci", "print the interfaces (ifTable, ipAddrTable) instead; -Cb adds byte counts, -Co shows only them, -Cd adds drops"},
			{"-Cw SECONDS", "print the traffic of all interfaces every SECONDS, as the change since the line before, until interrupted"},
			{"-CI IFACE", "only the interface IFACE (its ifDescr or ifName; with -Cw also its ifAlias), with -Ci or -Cw"},
			{"-Cs", "print the statistics of TCP, UDP, IP, IPv6, ICMP and ICMPv6 instead (-Css leaves out zeros; -Cp PROTO for one: tcp, udp, ip, ip6, icmp, icmp6)"}}},
	{name: "delta", tool: "snmpdelta", args: "AGENT OID...", common: true,
		summary: "print how much counters grow, every period",
		descr:   "Polls the OIDs every period (aligned on the hour as snmpdelta aligns it) and prints the growth of each since the last poll; runs until interrupted.",
		appOpts: []opt{{"-Cp SECONDS", "the period (default 1)"}, {"-Cs", "print timestamps"}, {"-Ck", "keep seconds in timestamps"},
			{"-Ct", "rates per second, timed by the agent's sysUpTime"}, {"-CT", "table form: one line per poll"},
			{"-Cm", "print the maximum so far"}, {"-Cv NUM", "variables per request (default 60)"},
			{"-CP NUM", "report every NUM periods the average and the peak (from the hour's first such report period)"},
			{"-CF FILE", "poll the objects named in FILE (one a line; # comments) before those of the command line"},
			{"-CS", "add a Sum line: the sum of the others (-CL NAME names it)"},
			{"-Cl", "append each object's lines to the file AGENT-OBJECT instead of printing them"}}},
	{name: "usm", tool: "snmpusm", args: "AGENT COMMAND [ARGS]", common: true,
		summary: "manage users in an agent's usmUserTable",
		descr: "COMMAND is create USER [CLONEFROM-USER], delete USER, activate USER, deactivate USER, " +
			"cloneFrom USER CLONEFROM-USER, passwd OLD-PASSPHRASE NEW-PASSPHRASE [USER] (the caller's own keys without USER), " +
			"or changekey [USER] (new random keys agreed by Diffie-Hellman, RFC 2786; the caller's own without USER; the new keys are printed). " +
			"Keys are changed with usmUserAuthKeyChange and usmUserPrivKeyChange (RFC 3414 section 5), localized with the session's -a and -x.",
		appOpts: []opt{{"-CE ENGINEID", "the usmUserEngineID of the row (default the agent's)"}, {"-Cp STRING", "set usmUserPublic"},
			{"-Cw", "create with createAndWait (the user stays inactive)"}, {"-Ca", "change only the authentication key"},
			{"-Cx", "change only the privacy key"}, {"-Ck", "take localized keys (0x...) instead of passphrases"}}},
	{name: "vacm", tool: "snmpvacm", args: "AGENT COMMAND [ARGS]", common: true,
		summary: "create and delete rows of an agent's VACM tables",
		descr: "COMMAND is createSec2Group MODEL SECURITYNAME GROUPNAME, deleteSec2Group MODEL SECURITYNAME, " +
			"createView NAME SUBTREE [MASK], deleteView NAME SUBTREE, " +
			"createAccess GROUPNAME [CONTEXTPREFIX] MODEL LEVEL CONTEXTMATCH READVIEW WRITEVIEW NOTIFYVIEW, " +
			"deleteAccess GROUPNAME [CONTEXTPREFIX] MODEL LEVEL, createAuth GROUPNAME [CONTEXTPREFIX] MODEL LEVEL AUTHTYPE CONTEXTMATCH VIEW " +
			"or deleteAuth GROUPNAME [CONTEXTPREFIX] MODEL LEVEL AUTHTYPE (Net-SNMP's nsVacmAccessTable).",
		appOpts: []opt{{"-Ce", "createView makes an excluded subtree"}}},
	{name: "cert", args: "COMMAND [ARGS]",
		summary: "make certificate authorities and certificates for TLS and DTLS (tsnmp cert help)"},
	{name: "exporter", args: "[OPTIONS]",
		summary: "Prometheus exporter (tsnmp exporter --help)"},
	{name: "generate", args: "[OPTIONS]",
		summary: "generate an exporter configuration from MIB modules (tsnmp generate --help)"},
	{name: "bench", args: "EXPERIMENT... [--out DIR]",
		summary: "run the performance experiments (tsnmp bench --help)"},
	{name: "completion", args: "bash|zsh",
		summary: "print the bash or zsh completion script"},
	{name: "help", args: "[COMMAND]",
		summary: "describe tsnmp or one of its commands"},
}

// commonOptions are the options of every command that talks to an agent.
var commonOptions = []opt{
	{"-h, --help", "print this help"},
	{"-V, --version", "print the version"},
	{"-v 1|2c|3", "SNMP version (default 3; snmp.conf defVersion)"},
	{"-c COMMUNITY", "community of SNMPv1 and SNMPv2c (defCommunity)"},
	{"-u USER", "SNMPv3 security name (defSecurityName)"},
	{"-l LEVEL", "security level: noAuthNoPriv, authNoPriv or authPriv (defSecurityLevel)"},
	{"-a PROTOCOL", "authentication: MD5, SHA, SHA-224, SHA-256, SHA-384, SHA-512 (defAuthType)"},
	{"-A PASSPHRASE", "authentication passphrase (defAuthPassphrase, defPassphrase)"},
	{"-x PROTOCOL", "privacy: DES, AES, AES128, AES192, AES256, AES192C, AES256C (defPrivType)"},
	{"-X PASSPHRASE", "privacy passphrase (defPrivPassphrase, defPassphrase)"},
	{"-3m KEY, -3M KEY", "authentication and privacy master keys (Ku) in hex, instead of passphrases (defAuthMasterKey, defPrivMasterKey)"},
	{"-3k KEY, -3K KEY", "authentication and privacy keys localized to the agent's engine (Kul) in hex (defAuthLocalizedKey, defPrivLocalizedKey)"},
	{"-e ENGINEID", "security engine ID in hex (default: discovered)"},
	{"-E ENGINEID", "context engine ID in hex"},
	{"-n CONTEXT", "context name (defContext)"},
	{"-r RETRIES", "retries (default 5; snmp.conf retries)"},
	{"-t SECONDS", "timeout of each attempt (default 1; snmp.conf timeout)"},
	{"-T a, --adaptive", "adaptive retransmission timer (RFC 6298) starting at -t"},
	{"-T KEY=VALUE", "TLS, DTLS and SSH parameters: our_identity, their_identity, trust_cert, their_hostname, tls_min_version, cert_dir, cache_dir, resume (snmp.conf localCert, peerCert, trustCert)"},
	{"-m MODULES", "MIB modules to load, ':'-separated; ALL for every one, +MODULE to add after the default list, -MODULE before it (MIBS)"},
	{"-M DIRS", "MIB directories, ':'-separated; +DIR to add after the path (its modules win), -DIR before it (MIBDIRS)"},
	{"-O FLAGS", "output: n numeric OIDs, f full names, s last name, S module::name, u full names less the mib-2 or private prefix, q quick, Q quick with =, v value only, x hex strings, a text strings, e numeric enums, t numeric timeticks, U no units, b indexes as numbers, X indexes in brackets, T hex with text, 0 hint hex in pairs"},
	{"-I FLAGS", "input: r no type and range checks of set values and instance indexes, h no DISPLAY-HINTs in set values, R random access, b best match, u, s SUFFIX, S PREFIX"},
	{"-d", "dump every message sent and received in hex (snmp.conf dumpPacket)"},
	{"-D[TOKEN,...]", "debug messages of usm, tls, dtls, ssh, mibs, snmp.conf (all without TOKENs; -TOKEN turns one off)"},
	{"--TOKEN=VALUE", "any snmp.conf setting, e.g. --clientaddr=192.0.2.1"},
}

// agentHelp is the text about AGENT and the configuration files.
const agentHelp = `AGENT is [udp:|tcp:|udp6:|tcp6:|tls:|dtls:|ssh:]HOST[:PORT] (IPv6 as [::1]:161;
default port 161, 10161 for tls: and dtls:, 22 for ssh:) or alias:NAME.
Defaults are read from snmp.conf in $SNMPCONFPATH (else /etc/snmp,
/usr/share/snmp, /usr/lib/snmp, ~/.snmp), as Net-SNMP's tools read them.`

func findHelp(name string) *cmdHelp {
	for i := range helpCommands {
		if helpCommands[i].name == name || helpCommands[i].tool == name && name != "" {
			return &helpCommands[i]
		}
	}
	return nil
}

// printOverview is tsnmp --help.
func printOverview(w io.Writer) {
	fmt.Fprintf(w, "usage: tsnmp COMMAND [OPTIONS] ARGS...\n\n")
	fmt.Fprintf(w, "tsnmp is an SNMP manager: Net-SNMP's command-line tools as subcommands, with\ntheir options and output (installed as snmpget, snmpwalk, ... it is that tool).\n\nCommands:\n")
	for _, c := range helpCommands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun \"tsnmp help COMMAND\" or \"tsnmp COMMAND --help\" for its options; \"tsnmp --version\" for the version.\n")
}

// printCommandHelp is tsnmp help CMD and tsnmp CMD --help.
func printCommandHelp(w io.Writer, c *cmdHelp) {
	fmt.Fprintf(w, "usage: tsnmp %s", c.name)
	if c.common {
		fmt.Fprint(w, " [OPTIONS]")
	}
	fmt.Fprintf(w, " %s\n\n%s.\n", c.args, upperFirst(c.summary))
	if c.descr != "" {
		fmt.Fprintf(w, "\n%s\n", wrap(c.descr, 78, ""))
	}
	if len(c.appOpts) > 0 {
		fmt.Fprintf(w, "\n%s options:\n", c.name)
		printOpts(w, c.appOpts)
	}
	if c.common {
		fmt.Fprintf(w, "\nOptions:\n")
		printOpts(w, commonOptions)
		fmt.Fprintf(w, "\n%s\n", agentHelp)
	}
}

func printOpts(w io.Writer, opts []opt) {
	for _, o := range opts {
		if len(o.flag) <= 18 {
			fmt.Fprintf(w, "  %-18s %s\n", o.flag, wrap(o.text, 78-21, strings.Repeat(" ", 21)))
		} else {
			fmt.Fprintf(w, "  %s\n%s%s\n", o.flag, strings.Repeat(" ", 21), wrap(o.text, 78-21, strings.Repeat(" ", 21)))
		}
	}
}

// wrap breaks text into lines of at most width, indenting the later
// ones.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(text) {
		if i > 0 && n+1+len(w) > width {
			b.WriteString("\n" + indent)
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// helpMain is "tsnmp help [COMMAND]".
func helpMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printOverview(stdout)
		return 0
	}
	c := findHelp(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "tsnmp help: no command %q\n", args[0])
		printOverview(stderr)
		return 1
	}
	printCommandHelp(stdout, c)
	return 0
}

// roff escapes text for a manual page.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// manPages returns the manual pages made from the help: tsnmp(1) and
// tsnmp-COMMAND(1) for each command taking the common options or having
// options of its own described here.
func manPages(date string) map[string]string {
	pages := map[string]string{}
	var b strings.Builder
	fmt.Fprintf(&b, ".TH TSNMP 1 %q \"tsnmp\" \"User Commands\"\n.SH NAME\ntsnmp \\- SNMP manager: Net\\-SNMP's command\\-line tools as subcommands\n", date)
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B tsnmp\n.I command\n.RI [ options ]\n.IR args ...\n")
	fmt.Fprintf(&b, ".SH DESCRIPTION\n.B tsnmp\ngets, walks, sets and prints SNMP objects, sends and receives notifications\nand translates MIB names, with the options and output of Net\\-SNMP's tools.\nInstalled (or linked) under a Net\\-SNMP tool's name, such as\n.BR snmpget ,\nit behaves as that tool.\n.SH COMMANDS\n")
	for _, c := range helpCommands {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s.\n", roff(c.name), roff(upperFirst(c.summary)))
		if c.common || len(c.appOpts) > 0 {
			fmt.Fprintf(&b, "See\n.BR tsnmp\\-%s (1).\n", roff(c.name))
		}
	}
	fmt.Fprintf(&b, ".SH OPTIONS\nThe commands that talk to an agent take these options.\n")
	manOpts(&b, commonOptions)
	fmt.Fprintf(&b, ".SH AGENT\n%s\n", roff(strings.ReplaceAll(agentHelp, "\n", " ")))
	fmt.Fprintf(&b, ".SH FILES\n.TP\n.I snmp.conf\nApplication defaults (defVersion, defCommunity, defSecurityName, defSecurityLevel,\ndefAuthType, defPrivType, defPassphrase, defAuthPassphrase, defPrivPassphrase,\ndefContext, defSecurityModel, defAuthMasterKey, defPrivMasterKey,\ndefAuthLocalizedKey, defPrivLocalizedKey, defaultPort, defDomain, defTarget, alias, clientaddr,\nclientaddrUsesPort, 16bitIDs, retries, timeout, localCert, peerCert, trustCert,\ndumpPacket, doDebugging, debugTokens, dontLoadHostConfig, mibs, mibdirs, mibfile and\nthe output settings), read from each directory of\n.B SNMPCONFPATH\nas by Net\\-SNMP's tools; certificates under each directory's\n.IR tls/ .\nAny of these may be given on the command line as\n.BI \\-\\- TOKEN = VALUE .\n.TP\n.I hosts/HOST.conf\nSettings for the agent named HOST (a name of letters, digits, dots and hyphens),\nread from each directory of\n.B SNMPCONFPATH\nafter snmp.conf; its\n.B transport\ntoken gives the address to use, e.g. transport tcp:agent.example.net:1161.\nAs with Net\\-SNMP's tools, its defVersion is not used.\n.TP\n.I $XDG_CACHE_HOME/tsnmp\nThe indexed cache of loaded MIB modules and TLS session tickets.\n")
	fmt.Fprintf(&b, ".SH ENVIRONMENT\n.TP\n.B MIBS\nModules to load, as \\-m.\n.TP\n.B MIBDIRS\nMIB directories, as \\-M.\n.TP\n.B SNMPCONFPATH\nDirectories of snmp.conf.\n")
	fmt.Fprintf(&b, ".SH SEE ALSO\n")
	var refs []string
	for _, c := range helpCommands {
		if c.common || len(c.appOpts) > 0 {
			refs = append(refs, ".BR tsnmp\\-"+roff(c.name)+" (1),")
		}
	}
	refs = append(refs, ".BR tsnmp\\-trapd (8),", ".BR tsnmpd (8),", ".BR snmpcmd (1),", ".BR snmp.conf (5)")
	b.WriteString(strings.Join(refs, "\n") + "\n")
	pages["tsnmp.1"] = b.String()
	for _, c := range helpCommands {
		if !c.common && len(c.appOpts) == 0 {
			continue
		}
		var p strings.Builder
		up := strings.ToUpper("tsnmp-" + c.name)
		fmt.Fprintf(&p, ".TH %s 1 %q \"tsnmp\" \"User Commands\"\n.SH NAME\ntsnmp\\-%s, tsnmp %s", up, date, roff(c.name), roff(c.name))
		if c.tool != "" {
			fmt.Fprintf(&p, ", %s", roff(c.tool))
		}
		fmt.Fprintf(&p, " \\- %s\n.SH SYNOPSIS\n.B tsnmp %s\n", roff(c.summary), roff(c.name))
		if c.common {
			fmt.Fprintf(&p, ".RI [ options ]\n")
		}
		fmt.Fprintf(&p, ".I %s\n.SH DESCRIPTION\n", roff(c.args))
		if c.descr != "" {
			fmt.Fprintf(&p, "%s\n", roff(c.descr))
		} else {
			fmt.Fprintf(&p, "%s.\n", roff(upperFirst(c.summary)))
		}
		if c.tool != "" {
			fmt.Fprintf(&p, ".PP\nIts options and output are those of Net\\-SNMP's\n.BR %s (1).\n", roff(c.tool))
		}
		if len(c.appOpts) > 0 {
			fmt.Fprintf(&p, ".SH %s OPTIONS\n", strings.ToUpper(roff(c.name)))
			manOpts(&p, c.appOpts)
		}
		if c.common {
			fmt.Fprintf(&p, ".SH OPTIONS\n")
			manOpts(&p, commonOptions)
			fmt.Fprintf(&p, ".SH AGENT\n%s\n", roff(strings.ReplaceAll(agentHelp, "\n", " ")))
		}
		fmt.Fprintf(&p, ".SH SEE ALSO\n.BR tsnmp (1)")
		if c.tool != "" {
			fmt.Fprintf(&p, ",\n.BR %s (1)", roff(c.tool))
		}
		fmt.Fprintf(&p, "\n")
		pages["tsnmp-"+c.name+".1"] = p.String()
	}
	return pages
}

func manOpts(b *strings.Builder, opts []opt) {
	for _, o := range opts {
		fmt.Fprintf(b, ".TP\n.B %s\n%s.\n", roff(o.flag), roff(upperFirst(o.text)))
	}
}

// bashCompletion is the bash completion script: commands, their options,
// and MIB names (from "tsnmp completion names PREFIX", which reads the
// modules -m, -M, MIBS, MIBDIRS and snmp.conf select).
func bashCompletion() string {
	var names []string
	for _, c := range helpCommands {
		names = append(names, c.name)
	}
	var common []string
	for _, o := range commonOptions {
		for _, f := range strings.Split(o.flag, ", ") {
			f, _, _ = strings.Cut(f, " ")
			if strings.Contains(f, "=VALUE") {
				continue // --TOKEN=VALUE stands for many
			}
			common = append(common, strings.TrimSuffix(f, "[TOKEN,...]"))
		}
	}
	var b strings.Builder
	b.WriteString("# bash completion for tsnmp (made by \"tsnmp completion bash\")\n")
	b.WriteString("_tsnmp() {\n\tlocal cur prev words cword\n\t_init_completion -n : 2>/dev/null || { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=(\"${COMP_WORDS[@]}\"); cword=$COMP_CWORD; }\n")
	fmt.Fprintf(&b, "\tlocal commands=%q\n", strings.Join(names, " "))
	fmt.Fprintf(&b, "\tlocal common=%q\n", strings.Join(common, " "))
	b.WriteString("\tif [[ $cword -eq 1 ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))\n\t\treturn\n\tfi\n")
	b.WriteString("\tlocal cmd=${words[1]} app=\"\"\n\tcase $cmd in\n")
	for _, c := range helpCommands {
		if len(c.appOpts) == 0 {
			continue
		}
		var fs []string
		for _, o := range c.appOpts {
			for _, f := range strings.Split(o.flag, ", ") {
				f, _, _ = strings.Cut(f, " ")
				fs = append(fs, strings.TrimSuffix(f, "<NUM>"))
			}
		}
		fmt.Fprintf(&b, "\t%s) app=%q ;;\n", c.name, strings.Join(fs, " "))
	}
	b.WriteString("\thelp) COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")); return ;;\n")
	b.WriteString("\tcompletion) COMPREPLY=($(compgen -W \"bash zsh\" -- \"$cur\")); return ;;\n\tesac\n")
	b.WriteString("\tcase $prev in\n")
	b.WriteString("\t-v) COMPREPLY=($(compgen -W \"1 2c 3\" -- \"$cur\")); return ;;\n")
	b.WriteString("\t-l) COMPREPLY=($(compgen -W \"noAuthNoPriv authNoPriv authPriv\" -- \"$cur\")); return ;;\n")
	b.WriteString("\t-a) COMPREPLY=($(compgen -W \"MD5 SHA SHA-224 SHA-256 SHA-384 SHA-512\" -- \"$cur\")); return ;;\n")
	b.WriteString("\t-x) COMPREPLY=($(compgen -W \"DES AES AES128 AES192 AES256 AES192C AES256C\" -- \"$cur\")); return ;;\n")
	b.WriteString("\t-M) compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n")
	b.WriteString("\t-m) COMPREPLY=($(compgen -W \"ALL $(tsnmp completion modules 2>/dev/null)\" -- \"$cur\")); return ;;\n")
	b.WriteString("\t-c|-u|-A|-X|-e|-E|-n|-r|-t|-T|-O|-I) return ;;\n\tesac\n")
	b.WriteString("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$common $app\" -- \"$cur\"))\n\t\treturn\n\tfi\n")
	b.WriteString("\t# MIB names, with the -m and -M of the command line.\n\tlocal i mibargs=()\n\tfor ((i = 2; i < cword; i++)); do\n\t\tcase ${words[i]} in\n\t\t-m|-M) mibargs+=(\"${words[i]}\" \"${words[i+1]}\") ;;\n\t\tesac\n\tdone\n")
	b.WriteString("\tCOMPREPLY=($(tsnmp completion names \"${mibargs[@]}\" -- \"$cur\" 2>/dev/null))\n}\n")
	b.WriteString("complete -F _tsnmp tsnmp\n")
	return b.String()
}

// optionNames splits an opt's flag into its option names ("-3m KEY, -3M
// KEY" gives -3m and -3M); --TOKEN=VALUE, which stands for many, gives
// none.
func optionNames(o opt) []string {
	var out []string
	for _, f := range strings.Split(o.flag, ", ") {
		f, _, _ = strings.Cut(f, " ")
		if strings.Contains(f, "=VALUE") {
			continue
		}
		out = append(out, strings.TrimSuffix(strings.TrimSuffix(f, "[TOKEN,...]"), "<NUM>"))
	}
	return out
}

// zshQuote quotes s for a single-quoted zsh word.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// zshCompletion is the zsh completion function (file _tsnmp): commands
// and options with their descriptions, the values of -v, -l, -a, -x,
// directories after -M, modules after -m, and MIB names, as the bash
// script completes them.
func zshCompletion() string {
	var b strings.Builder
	b.WriteString("#compdef tsnmp\n# zsh completion for tsnmp (made by \"tsnmp completion zsh\")\n")
	b.WriteString("_tsnmp() {\n\tlocal -a commands common app mibargs\n\tlocal cmd prev i\n\tcommands=(\n")
	for _, c := range helpCommands {
		fmt.Fprintf(&b, "\t\t%s\n", zshQuote(c.name+":"+c.summary))
	}
	b.WriteString("\t)\n\tcommon=(\n")
	for _, o := range commonOptions {
		for _, f := range optionNames(o) {
			fmt.Fprintf(&b, "\t\t%s\n", zshQuote(strings.ReplaceAll(f, ":", `\:`)+":"+o.text))
		}
	}
	b.WriteString("\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe -t commands 'tsnmp command' commands\n\t\treturn\n\tfi\n")
	b.WriteString("\tcmd=${words[2]}\n\tcase $cmd in\n")
	for _, c := range helpCommands {
		if len(c.appOpts) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\t%s) app=(", c.name)
		for i, o := range c.appOpts {
			for j, f := range optionNames(o) {
				if i > 0 || j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(zshQuote(strings.ReplaceAll(f, ":", `\:`) + ":" + o.text))
			}
		}
		b.WriteString(") ;;\n")
	}
	b.WriteString("\thelp) _describe -t commands 'tsnmp command' commands; return ;;\n")
	b.WriteString("\tcompletion) compadd bash zsh; return ;;\n\tesac\n")
	b.WriteString("\tprev=${words[CURRENT-1]}\n\tcase $prev in\n")
	b.WriteString("\t-v) compadd 1 2c 3; return ;;\n")
	b.WriteString("\t-l) compadd noAuthNoPriv authNoPriv authPriv; return ;;\n")
	b.WriteString("\t-a) compadd MD5 SHA SHA-224 SHA-256 SHA-384 SHA-512; return ;;\n")
	b.WriteString("\t-x) compadd DES AES AES128 AES192 AES256 AES192C AES256C; return ;;\n")
	b.WriteString("\t-M) _files -/; return ;;\n")
	b.WriteString("\t-m) compadd ALL ${(f)\"$(tsnmp completion modules 2>/dev/null)\"}; return ;;\n")
	b.WriteString("\t-c|-u|-A|-X|-3m|-3M|-3k|-3K|-e|-E|-n|-r|-t|-T|-O|-I) return ;;\n\tesac\n")
	b.WriteString("\tif [[ $PREFIX == -* ]]; then\n\t\t_describe -t options 'option' common -- app\n\t\treturn\n\tfi\n")
	b.WriteString("\t# MIB names, with the -m and -M of the command line.\n\tfor (( i = 3; i < CURRENT; i++ )); do\n\t\tcase ${words[i]} in\n\t\t-m|-M) mibargs+=(${words[i]} ${words[i+1]}) ;;\n\t\tesac\n\tdone\n")
	b.WriteString("\tcompadd -- ${(f)\"$(tsnmp completion names $mibargs -- $PREFIX 2>/dev/null)\"}\n}\n")
	b.WriteString("_tsnmp \"$@\"\n")
	return b.String()
}

// completionMain is "tsnmp completion bash|zsh|names|modules".
func completionMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: tsnmp completion bash|zsh")
		return 1
	}
	switch args[0] {
	case "bash":
		io.WriteString(stdout, bashCompletion())
		return 0
	case "zsh":
		io.WriteString(stdout, zshCompletion())
		return 0
	case "names", "modules":
		var s mibSettings
		prefix := ""
		rest := args[1:]
		for i := 0; i < len(rest); i++ {
			switch rest[i] {
			case "-m", "-M":
				if i+1 < len(rest) {
					s.set(rest[i][1], rest[i+1])
					i++
				}
			case "--":
				if i+1 < len(rest) {
					prefix = rest[i+1]
				}
				i = len(rest)
			}
		}
		loadMIBs(s, io.Discard, false)
		seen := map[string]bool{}
		var out []string
		if args[0] == "modules" {
			out = smi.Modules()
		} else {
			mod, name, qualified := strings.Cut(prefix, "::")
			for _, n := range smi.AllNodes() {
				w := n.Name
				if qualified {
					if n.Module != mod {
						continue
					}
					w = n.Module + "::" + n.Name
				} else {
					name = prefix
				}
				if strings.HasPrefix(n.Name, name) && !seen[w] {
					seen[w] = true
					out = append(out, w)
				}
			}
		}
		sort.Strings(out)
		for _, w := range out {
			fmt.Fprintln(stdout, w)
		}
		return 0
	}
	fmt.Fprintf(stderr, "tsnmp completion: unknown shell %q (bash)\n", args[0])
	return 1
}
