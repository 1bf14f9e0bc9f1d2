package notify

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// ParseSession reads a target from snmptrap's arguments, as snmpd.conf's
// trapsess takes them: -v 1|2c|3, -c COMMUNITY, -u USER, -l LEVEL,
// -a AUTH, -A PASS, -x PRIV, -X PASS, -e ENGINEID, -E ENGINEID, -n CONTEXT,
// -r RETRIES, -t SECONDS, -T KEY=VALUE (tls:, dtls:, ssh: identities),
// -Ci (an inform), then the address. The version defaults to 2c with the
// community defCommunity, as Net-SNMP's trapsess does without -v; -l
// defaults to authPriv over tls:, dtls: and ssh:.
func ParseSession(args []string, defCommunity string) (TargetConfig, error) {
	tc := TargetConfig{Session: manager.Config{Version: snmp.V2c, Community: defCommunity}}
	levelSet := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			if tc.Address != "" {
				return tc, fmt.Errorf("more than one address (%q and %q)", tc.Address, a)
			}
			tc.Address = a
			continue
		}
		c := a[1]
		val := a[2:]
		if val == "" && strings.IndexByte("vcuaAlxXeEnrtTC", c) >= 0 {
			if i+1 >= len(args) {
				return tc, fmt.Errorf("option -%c needs a value", c)
			}
			i++
			val = args[i]
		}
		s := &tc.Session
		switch c {
		case 'v':
			switch val {
			case "1":
				s.Version = snmp.V1
			case "2c", "2":
				s.Version = snmp.V2c
			case "3":
				s.Version = snmp.V3
			default:
				return tc, fmt.Errorf("-v %s: want 1, 2c or 3", val)
			}
		case 'c':
			s.Community = val
		case 'u':
			s.User = val
		case 'l':
			levelSet = true
			switch strings.ToLower(val) {
			case "noauthnopriv", "1", "nanp":
				s.Level = snmp.NoAuthNoPriv
			case "authnopriv", "2", "anp":
				s.Level = snmp.AuthNoPriv
			case "authpriv", "3", "ap":
				s.Level = snmp.AuthPriv
			default:
				return tc, fmt.Errorf("-l %s: want noAuthNoPriv, authNoPriv or authPriv", val)
			}
		case 'a':
			p, err := usm.ParseAuthProtocol(val)
			if err != nil {
				return tc, fmt.Errorf("-a %s: %v", val, err)
			}
			s.AuthProtocol = p
		case 'A':
			s.AuthPassword = val
		case 'x':
			p, err := usm.ParsePrivProtocol(val)
			if err != nil {
				return tc, fmt.Errorf("-x %s: %v", val, err)
			}
			s.PrivProtocol = p
		case 'X':
			s.PrivPassword = val
		case 'e', 'E':
			b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(val, "0x"), "0X"))
			if err != nil || len(b) < 5 || len(b) > 32 {
				return tc, fmt.Errorf("-%c %s: want 5 to 32 octets in hex", c, val)
			}
			if c == 'e' {
				s.SecurityEngineID = b
			} else {
				s.ContextEngineID = b
			}
		case 'n':
			s.ContextName = val
		case 'r':
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return tc, fmt.Errorf("-r %s: want a number", val)
			}
			s.Retries = n
			if n == 0 {
				s.Retries = -1
			}
		case 't':
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f <= 0 {
				return tc, fmt.Errorf("-t %s: want seconds", val)
			}
			s.Timeout = time.Duration(f * float64(time.Second))
		case 'T':
			tc.Params = append(tc.Params, val)
		case 'C':
			for _, f := range val {
				if f != 'i' {
					return tc, fmt.Errorf("-C%c: only -Ci (send informs) is known", f)
				}
				tc.Inform = true
			}
		default:
			return tc, fmt.Errorf("unknown option %s", a)
		}
	}
	if tc.Address == "" {
		return tc, fmt.Errorf("missing the receiver's address")
	}
	if _, err := ParseAddress(tc.Address); err != nil {
		return tc, err
	}
	if manager.IsSecureTarget(tc.Address) || manager.IsSSHTarget(tc.Address) {
		tc.Session.Version = snmp.V3
		if !levelSet {
			tc.Session.Level = snmp.AuthPriv
		}
	}
	if tc.Session.Version == snmp.V1 && tc.Inform {
		return tc, fmt.Errorf("SNMPv1 has no informs (-Ci with -v 1)")
	}
	if tc.Session.Version == snmp.V3 && tc.Session.User == "" && !manager.IsSecureTarget(tc.Address) && !manager.IsSSHTarget(tc.Address) {
		return tc, fmt.Errorf("-v 3 needs a user (-u)")
	}
	if tc.Session.Level == snmp.AuthPriv && tc.Session.PrivPassword == "" {
		tc.Session.PrivPassword = tc.Session.AuthPassword
	}
	return tc, nil
}
