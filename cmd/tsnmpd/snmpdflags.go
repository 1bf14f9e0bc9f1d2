package main

import (
	"flag"
	"fmt"
	"strings"
)

// translateSnmpdArgs rewrites the command-line options of Net-SNMP's snmpd
// that init scripts and operators use into tsnmpd's flags, so that an
// ExecStart or init script line written for snmpd starts tsnmpd:
//
//	-f                 stay in the foreground (tsnmpd always does)
//	-Lo, -Le           log to standard output, standard error
//	-Lf FILE, -LF ...  log to FILE
//	-Ls FACILITY       log to syslog (-LS LEVEL FACILITY also)
//	-Ln                no logging
//	-C                 read no default configuration file (tsnmpd reads none)
//	-c FILE[,FILE...]  read these snmpd.conf files in order (--snmpd-conf)
//	-p FILE            write the pid to FILE (--pid-file)
//	-u USER, -g GROUP  drop to USER/GROUP after binding (--user, --group)
//	-a, -V, -d, -D...  more logging (--log-level debug)
//	-x ADDRESS         the AgentX master's socket (--agentx-socket)
//	-I LIST, -m, -M    module and MIB lists (ignored, with a note)
//	-v                 print the version
//	-q, -r, -U, -A     accepted, no effect
//	--TOKEN=VALUE      a configuration line "TOKEN VALUE", as in snmpd
//	ADDRESS ...        trailing listening addresses (--listen)
//
// Flags tsnmpd defines itself (with one or two dashes) pass unchanged.
// notes say what was accepted without effect.
func translateSnmpdArgs(fs *flag.FlagSet, args []string) (out, notes []string, err error) {
	known := func(a string) (name string, isBool, ok bool) {
		n := strings.TrimLeft(a, "-")
		if i := strings.IndexByte(n, '='); i >= 0 {
			n = n[:i]
		}
		f := fs.Lookup(n)
		if f == nil {
			return "", false, false
		}
		if b, isB := f.Value.(interface{ IsBoolFlag() bool }); isB && b.IsBoolFlag() {
			isBool = true
		}
		return n, isBool, true
	}
	// arg returns an option's argument: attached (-Lffile) or the next.
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			for _, l := range args[i+1:] {
				out = append(out, "--listen="+l)
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, "--listen="+a)
			continue
		}
		if _, isBool, ok := known(a); ok {
			out = append(out, a)
			if !isBool && !strings.Contains(a, "=") && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		if strings.HasPrefix(a, "--") {
			tok, val, ok := strings.Cut(a[2:], "=")
			if !ok || tok == "" {
				return nil, nil, fmt.Errorf("unknown flag %s (snmpd's long form is --DIRECTIVE=VALUE)", a)
			}
			out = append(out, "--snmpd-directive="+tok+" "+val)
			continue
		}
		opt, attached := a[1:2], a[2:]
		next := func(what string) (string, error) {
			if attached != "" {
				return attached, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs %s", a, what)
			}
			i++
			return args[i], nil
		}
		switch opt {
		case "f", "C", "q", "r", "U", "A", "H":
			if opt == "H" {
				out = append(out, "--help")
			}
			if attached != "" {
				// Combined flags such as -fC.
				for _, c := range attached {
					if !strings.ContainsRune("fCqrUAaVd", c) {
						return nil, nil, fmt.Errorf("unknown flag -%c in %s", c, a)
					}
					if strings.ContainsRune("aVd", c) {
						out = append(out, "--log-level=debug")
					}
				}
			}
		case "c":
			v, err := next("a configuration file")
			if err != nil {
				return nil, nil, err
			}
			out = append(out, "--snmpd-conf="+v)
		case "p":
			v, err := next("a pid file")
			if err != nil {
				return nil, nil, err
			}
			out = append(out, "--pid-file="+v)
		case "u", "g":
			v, err := next("a name or number")
			if err != nil {
				return nil, nil, err
			}
			flag := map[string]string{"u": "--user=", "g": "--group="}[opt]
			out = append(out, flag+v)
		case "x":
			v, err := next("an address")
			if err != nil {
				return nil, nil, err
			}
			out = append(out, "--agentx-socket="+v)
		case "a", "V", "d", "D":
			out = append(out, "--log-level=debug")
		case "I", "m", "M":
			v, err := next("a list")
			if err != nil {
				return nil, nil, err
			}
			notes = append(notes, fmt.Sprintf("-%s %s: module and MIB lists do not apply to tsnmpd; ignored", opt, v))
		case "v":
			out = append(out, "--version")
		case "h":
			out = append(out, "--help")
		case "X":
			return nil, nil, fmt.Errorf("-X: tsnmpd is not an AgentX subagent")
		case "L":
			if attached == "" {
				return nil, nil, fmt.Errorf("-L needs o, e, f FILE, s FACILITY or n")
			}
			kind, rest := attached[:1], attached[1:]
			switch kind {
			case "o", "O":
				out = append(out, "--log-file=-")
			case "e", "E":
				out = append(out, "--log-file=")
			case "n", "N":
				out = append(out, "--log-level=error", "--log-file=/dev/null")
			case "f", "F":
				if kind == "F" && rest == "" && i+1 < len(args) {
					i++ // the level range
				}
				attached = strings.TrimLeft(rest, " ")
				v, err := next("a file")
				if err != nil {
					return nil, nil, err
				}
				if kind == "F" && attached == "" {
					// -LF LEVEL FILE
					if i+1 < len(args) {
						i++
						v = args[i]
					}
				}
				out = append(out, "--log-file="+v)
			case "s", "S":
				v := rest
				if kind == "S" && len(rest) > 0 {
					v = rest[len(rest)-1:] // -LS LEVEL FACILITY, attached
				}
				if kind == "S" && rest == "" && i+1 < len(args) {
					i++ // the level
				}
				if v == "" {
					if i+1 >= len(args) {
						return nil, nil, fmt.Errorf("%s needs a facility", a)
					}
					i++
					v = args[i]
				}
				out = append(out, "--syslog="+v)
			default:
				return nil, nil, fmt.Errorf("-L%s: want -Lo, -Le, -Lf FILE, -Ls FACILITY or -Ln", kind)
			}
		default:
			return nil, nil, fmt.Errorf("unknown flag %s", a)
		}
	}
	return out, notes, nil
}
