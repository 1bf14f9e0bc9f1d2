package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/manager/format"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// options is the parsed command line: Net-SNMP's common options and the
// application options given with -C.
type options struct {
	cfg      manager.Config
	out      format.Options
	appOpts  []string // -C arguments, parsed by each tool
	args     []string
	help     bool
	version  bool
	adaptive bool
	// noKeyCache is --no-key-cache: derive USM keys from the passwords
	// every time (manager.KeyCache).
	noKeyCache bool
	// debug is -D[TOKENS]: debug messages on standard error, of the
	// comma-separated tokens (all when none; debug.go).
	debug       bool
	debugTokens string
	// dump is -d: every message sent and received in hex (debug.go).
	dump  bool
	level string
	// seen records the options the command line gave, which snmp.conf
	// does not override (conf.go).
	seen map[byte]bool
	// conf holds snmp.conf's defaultPort and aliases; confOut its output
	// and input settings as -O and -I letters.
	conf    confDefaults
	confOut []string
	// Input options: -Ir (no range check), -Ih (no DISPLAY-HINT when
	// parsing values), -Ib (best match), -Iu, -Is SUFFIX, -IS PREFIX.
	noRangeCheck, noHints bool
	// transportParams are -T KEY=VALUE arguments (ssh.go).
	transportParams []string
	// communitySet tells whether -c was given.
	communitySet bool
	// tableC holds the arguments snmptable's -Cw, -Cc, -Cf and -Cr take
	// from the next command-line word.
	tableC   map[byte]string
	nextWord string // -C letters that take the next word
	// mibs holds -m and -M (mibs.go).
	mibs mibSettings
	// confOpts are --TOKEN=VALUE settings of snmp.conf tokens (conf.go).
	confOpts []string
	// secModel is snmp.conf's defSecurityModel ("usm" or "tsm").
	secModel string
	// cmdKeys are the -3 letters the command line gave (m, M, k, K).
	cmdKeys string
}

// usageError is a command-line error: its text is printed, then the usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// withArg lists the options that take an argument (as Net-SNMP's getopt
// string "Y:VhHm:M:O:I:P:D:dv:r:t:c:Z:e:E:n:u:l:x:X:a:A:p:T:-:3:s:S:L:C:").
const withArg = "YmMOIPvrtcZeEnulxXaApTsSLC3"

// parseArgsTool parses arguments the way Net-SNMP's tools do: GNU getopt with
// argument permutation (options may follow operands) when permute is set,
// else options end at the first operand (snmpset, whose values may start
// with '-'); "--" ends options. The -C letters in nextWord (snmptable's
// w, c, f and r; snmpwalk's E) take the next word as their argument.
func parseArgsTool(argv []string, permute bool, nextWord string) (*options, error) {
	o := &options{nextWord: nextWord, tableC: map[byte]string{}, seen: map[byte]bool{}}
	o.cfg.Version = snmp.V3 // Net-SNMP's default version
	o.cfg.Retries = manager.DefaultRetries
	o.cfg.Timeout = manager.DefaultTimeout
	o.cfg.Retransmit = manager.RetransmitFixed
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			o.args = append(o.args, argv[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if !permute {
				o.args = append(o.args, argv[i:]...)
				break
			}
			o.args = append(o.args, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			switch a {
			case "--help":
				o.help = true
			case "--version":
				o.version = true
			case "--adaptive":
				o.adaptive = true
			case "--no-key-cache":
				o.noKeyCache = true
			default:
				if strings.Contains(a, "=") {
					// Any snmp.conf token, as --TOKEN=VALUE.
					o.confOpts = append(o.confOpts, a[2:])
					continue
				}
				return nil, &usageError{fmt.Sprintf("Invalid option: %s", a)}
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if c == 'D' { // optional argument: Net-SNMP's debug tokens
				o.debug, o.debugTokens = true, a[j+1:]
				break
			}
			if strings.IndexByte(withArg, c) < 0 {
				switch c {
				case 'h':
					o.help = true
				case 'd':
					o.dump = true
				case 'H':
				case 'V':
					o.version = true
				default:
					return nil, &usageError{fmt.Sprintf("Invalid option: -%c", c)}
				}
				continue
			}
			val := a[j+1:]
			if val == "" {
				if i+1 >= len(argv) {
					return nil, &usageError{fmt.Sprintf("option requires an argument -- '%c'", c)}
				}
				i++
				val = argv[i]
			}
			if c == '3' {
				// -3m KEY, -3m=KEY, -3mKEY, "-3m KEY".
				rest := strings.TrimLeft(strings.TrimPrefix(val[1:], "="), " \t")
				if rest == "" {
					if i+1 >= len(argv) {
						return nil, &usageError{fmt.Sprintf("Missing argument after SNMPv3 '-3%c' option.", val[0])}
					}
					i++
					rest = argv[i]
				}
				val = val[:1] + rest
			}
			if err := o.set(c, val); err != nil {
				return nil, err
			}
			if c == 'C' && o.nextWord != "" {
				// snmptable's w, c, f and r and snmpwalk's E take the
				// next word. Letters after a "!" (snmpnetstat's f, p
				// and w) take the rest of their group, and the next
				// word only when nothing follows them.
				bare := strings.HasPrefix(o.nextWord, "!")
				for k := 0; k < len(val); k++ {
					if strings.IndexByte(o.nextWord, val[k]) < 0 {
						continue
					}
					if bare && k < len(val)-1 {
						break
					}
					if i+1 >= len(argv) {
						return nil, &usageError{fmt.Sprintf("Bad -C%c option: no argument given", val[k])}
					}
					i++
					o.tableC[val[k]] = argv[i]
					if bare {
						break
					}
				}
			}
			break
		}
	}
	if o.adaptive {
		o.cfg.Retransmit = manager.RetransmitAdaptive
	}
	return o, nil
}

func (o *options) set(c byte, val string) error {
	o.seen[c] = true
	switch c {
	case 'v':
		switch val {
		case "1":
			o.cfg.Version = snmp.V1
		case "2c", "2":
			o.cfg.Version = snmp.V2c
		case "3":
			o.cfg.Version = snmp.V3
		default:
			return &usageError{"Invalid version specified after -v flag: " + val}
		}
	case 'c':
		o.cfg.Community, o.communitySet = val, true
	case 'r':
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return &usageError{"Invalid retries value: " + val}
		}
		o.cfg.Retries = n
		if n == 0 {
			o.cfg.Retries = -1
		}
	case 't':
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || f <= 0 {
			return &usageError{"Invalid timeout value: " + val}
		}
		o.cfg.Timeout = time.Duration(f * float64(time.Second))
	case 'u':
		o.cfg.User = val
	case 'l':
		o.level = val
		switch strings.ToLower(val) {
		case "noauthnopriv", "1", "nanp":
			o.cfg.Level = snmp.NoAuthNoPriv
		case "authnopriv", "2", "anp":
			o.cfg.Level = snmp.AuthNoPriv
		case "authpriv", "3", "ap":
			o.cfg.Level = snmp.AuthPriv
		default:
			return &usageError{"Invalid security level specified after -l flag: " + val}
		}
	case 'a':
		p, err := usm.ParseAuthProtocol(val)
		if err != nil {
			return &usageError{"Invalid authentication protocol specified after -a flag: " + val}
		}
		o.cfg.AuthProtocol = p
	case 'A':
		o.cfg.AuthPassword = val
	case 'x':
		p, err := usm.ParsePrivProtocol(val)
		if err != nil {
			return &usageError{"Invalid privacy protocol specified after -x flag: " + val}
		}
		o.cfg.PrivProtocol = p
	case 'X':
		o.cfg.PrivPassword = val
	case '3':
		// Keys instead of passwords: -3m/-3M master keys (Ku), -3k/-3K
		// keys localized to the agent's engine (Kul), in hex.
		k, ok := parseHexString(val[1:])
		if !strings.ContainsRune("mMkK", rune(val[0])) {
			return &usageError{fmt.Sprintf("Unknown SNMPv3 option passed to -3: %c.", val[0])}
		}
		if !ok || len(k) == 0 {
			return &usageError{fmt.Sprintf("Bad key value after -3%c flag.", val[0])}
		}
		o.cmdKeys += val[:1]
		switch val[0] {
		case 'm':
			o.cfg.AuthKey = k
		case 'M':
			o.cfg.PrivKey = k
		case 'k':
			o.cfg.AuthLocalKey = k
		case 'K':
			o.cfg.PrivLocalKey = k
		}
	case 'e', 'E':
		b, err := parseEngineID(val)
		if err != nil {
			if c == 'e' {
				return &usageError{"Bad engine ID value after -e flag."}
			}
			return &usageError{"Bad engine ID value after -E flag."}
		}
		if c == 'e' {
			o.cfg.SecurityEngineID = b
		} else {
			o.cfg.ContextEngineID = b
		}
	case 'n':
		o.cfg.ContextName = val
	case 'O':
		if err := o.out.ParseOptions(val); err != nil {
			return &usageError{fmt.Sprintf("Unknown output option passed to -O: %s", val)}
		}
	case 'C':
		o.appOpts = append(o.appOpts, val)
	case 'T':
		if strings.EqualFold(val, "a") || strings.EqualFold(val, "adaptive") {
			o.adaptive = true
		} else if strings.Contains(val, "=") {
			o.transportParams = append(o.transportParams, val)
		}
	case 'I':
		if err := o.setInput(val); err != nil {
			return err
		}
	case 'm', 'M':
		o.mibs.set(c, val) // mibs.go
	}
	// I, P, L, Y, Z, p, s, S: accepted.
	return nil
}

// setInputSwitch sets -I's r (noRangeCheck) or h (noDisplayHint).
func (o *options) setInputSwitch(c byte, on bool) {
	switch c {
	case 'r':
		o.noRangeCheck = on
	case 'h':
		o.noHints, o.out.NoHints = on, on
	}
}

// inputSwitch tells whether -I's r or h is on.
func (o *options) inputSwitch(c byte) bool {
	if c == 'r' {
		return o.noRangeCheck
	}
	return o.noHints
}

// setInput applies the letters of -I: r (values are not checked against
// the MIB's ranges), h (DISPLAY-HINTs are not used to parse or print
// values), and
// R, b, u, s, S, which name lookups accept as they are.
func (o *options) setInput(val string) error {
	for i := 0; i < len(val); i++ {
		switch val[i] {
		case 'r', 'h':
			// Each -Ir or -Ih toggles, as with Net-SNMP's tools.
			o.setInputSwitch(val[i], !o.inputSwitch(val[i]))
		case 'R', 'b', 'u':
		case 's', 'S':
			return nil // the rest is the suffix or prefix
		default:
			return &usageError{fmt.Sprintf("Unknown input option passed to -I: %c.", val[i])}
		}
	}
	return nil
}

func parseEngineID(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	b, err := hex.DecodeString(s)
	if err != nil || len(b) < 5 || len(b) > 32 {
		return nil, errors.New("bad engine ID")
	}
	return b, nil
}
