package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// confLine is one line of snmp.conf: a token, its value and where it is.
type confLine struct {
	key, val string
	file     string
	line     int
}

// readConf reads snmp.conf and snmp.local.conf from each directory
// Net-SNMP's tools read them from, in that order (a later line
// overrides an earlier one). Lines may carry Net-SNMP's "[snmp]" prefix.
func readConf() []confLine {
	var out []confLine
	for _, d := range snmpConfDirs() {
		for _, name := range []string{"snmp.conf", "snmp.local.conf"} {
			path := filepath.Join(d, name)
			f, err := os.Open(path)
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			n := 0
			for sc.Scan() {
				n++
				line := strings.TrimSpace(sc.Text())
				if rest, ok := strings.CutPrefix(line, "[snmp]"); ok {
					line = strings.TrimSpace(rest)
				} else if strings.HasPrefix(line, "[") {
					continue // another application's line
				}
				key, val, _ := strings.Cut(line, " ")
				if t, v, ok := strings.Cut(line, "\t"); ok && len(t) < len(key) {
					key, val = t, v
				}
				if key == "" || key[0] == '#' {
					continue
				}
				out = append(out, confLine{key: strings.ToLower(key), val: confWord(strings.TrimSpace(val)), file: path, line: n})
			}
			f.Close()
		}
	}
	return out
}

// confWord unquotes a value in quotes, as Net-SNMP's configuration
// reader does ("" is the empty string).
func confWord(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
			return v[1 : end+1]
		}
	}
	return v
}

// confBool reads snmp.conf's (1|yes|true|0|no|false).
func confBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "1", "yes", "true", "on":
		return true, true
	case "0", "no", "false", "off":
		return false, true
	}
	return false, false
}

// confOutput maps snmp.conf's output tokens to -O and -I letters.
var confOutput = map[string]string{
	"printnumericenums": "Oe", "printnumericoids": "On", "dontbreakdownoids": "Ob",
	"escapequotes": "OE", "quickprinting": "Oq", "printvalueonly": "Ov",
	"dontprintunits": "OU", "numerictimeticks": "Ot", "printhextext": "OT",
	"extendedindex": "OX", "nodisplayhint": "Ih", "norangecheck": "Ir",
}

// confDefaults are the snmp.conf settings the command line did not set.
type confDefaults struct {
	defaultPort int
	aliases     map[string]string
}

// applyConf applies the application defaults of snmp.conf
// (snmp.conf(5)) to what the command line left unset: defVersion,
// defCommunity, defSecurityName, defSecurityLevel, defAuthType,
// defPrivType, defPassphrase, defAuthPassphrase, defPrivPassphrase,
// defContext, defaultPort, retries, timeout, localCert, peerCert,
// trustCert, alias, dumpPacket, doDebugging, debugTokens and the output
// settings. A bad value is reported with its file and line and ignored.
func (o *options) applyConf(lines []confLine, errw io.Writer) {
	bad := func(l confLine, msg string) {
		fmt.Fprintf(errw, "%s: line %d: Error: %s\n", l.file, l.line, msg)
	}
	// Letters set by snmp.conf, applied only where the command line did
	// not give the option; the last line wins.
	vals := map[byte]confLine{}
	var pass *confLine
	var tparams []string
	debugging, tokens := false, ""
	for _, l := range lines {
		switch l.key {
		case "defversion":
			vals['v'] = l
		case "defcommunity":
			vals['c'] = l
		case "defsecurityname":
			vals['u'] = l
		case "defsecuritylevel":
			vals['l'] = l
		case "defauthtype":
			vals['a'] = l
		case "defprivtype":
			vals['x'] = l
		case "defauthpassphrase":
			vals['A'] = l
		case "defprivpassphrase":
			vals['X'] = l
		case "defpassphrase":
			l := l
			pass = &l
		case "defcontext":
			vals['n'] = l
		case "retries":
			vals['r'] = l
		case "timeout":
			vals['t'] = l
		case "defaultport":
			p, err := strconv.ParseUint(l.val, 10, 16)
			if err != nil || p == 0 {
				bad(l, "bad port "+strconv.Quote(l.val))
				continue
			}
			o.conf.defaultPort = int(p)
		case "alias":
			name, def, _ := strings.Cut(l.val, " ")
			if o.conf.aliases == nil {
				o.conf.aliases = map[string]string{}
			}
			o.conf.aliases[name] = strings.TrimSpace(def)
		case "localcert":
			tparams = append(tparams, "localCert="+l.val)
		case "peercert":
			tparams = append(tparams, "peerCert="+l.val)
		case "trustcert":
			tparams = append(tparams, "trustCert="+l.val)
		case "dumppacket":
			if on, ok := confBool(l.val); ok {
				o.dump = o.dump || on
			} else {
				bad(l, "dumpPacket takes yes or no")
			}
		case "dodebugging":
			debugging, _ = confBool(l.val)
		case "debugtokens":
			tokens = l.val
		case "suffixprinting":
			switch l.val {
			case "1":
				o.confOut = append(o.confOut, "Os")
			case "2":
				o.confOut = append(o.confOut, "OS")
			}
		case "oidoutputformat":
			if f := map[string]string{"1": "Os", "2": "OS", "3": "Of", "4": "On", "5": "Ou"}[l.val]; f != "" {
				o.confOut = append(o.confOut, f)
			}
		default:
			if letters, ok := confOutput[l.key]; ok {
				if on, ok := confBool(l.val); ok && on {
					o.confOut = append(o.confOut, letters)
				} else if !ok {
					bad(l, l.key+" takes yes or no")
				}
			}
		}
	}
	if pass != nil {
		for _, c := range []byte{'A', 'X'} {
			if _, ok := vals[c]; !ok {
				vals[c] = *pass
			}
		}
	}
	for _, c := range []byte("vculaxAXnrt") {
		l, ok := vals[c]
		if !ok {
			continue
		}
		target := o
		if o.seen[c] {
			// The command line wins; the value is still checked.
			target = &options{seen: map[byte]bool{}}
		}
		if err := target.set(c, l.val); err != nil {
			bad(l, err.Error())
		}
	}
	// The command line's -T parameters come after and so override.
	o.transportParams = append(tparams, o.transportParams...)
	if debugging && !o.debug {
		o.debug, o.debugTokens = true, tokens
	}
	// Output settings apply after the command line's -O, and win where
	// they conflict, as with Net-SNMP's tools (which read snmp.conf
	// after their options).
	for _, s := range o.confOut {
		switch s[0] {
		case 'O':
			o.out.ParseOptions(s[1:])
		case 'I':
			o.setInput(s[1:])
		}
	}
}

// target applies snmp.conf's alias and defaultPort to an agent address.
func (o *options) target(peer string) string {
	if def, ok := o.conf.aliases[strings.TrimPrefix(peer, "alias:")]; ok && strings.HasPrefix(peer, "alias:") {
		peer = def
	}
	if o.conf.defaultPort == 0 {
		return peer
	}
	prefix, rest := "", peer
	if i := strings.IndexByte(peer, ':'); i > 0 {
		switch strings.ToLower(peer[:i]) {
		case "udp", "tcp", "udp6", "tcp6", "udpv6", "tcpv6", "udpipv6", "tcpipv6":
			prefix, rest = peer[:i+1], peer[i+1:]
		case "tls", "dtls", "ssh", "unix":
			return peer // their own default ports
		}
	}
	port := strconv.Itoa(o.conf.defaultPort)
	switch {
	case strings.HasPrefix(rest, "["):
		if strings.Contains(rest, "]:") {
			return peer
		}
		return prefix + rest + ":" + port
	case strings.Count(rest, ":") > 1:
		return prefix + "[" + rest + "]:" + port
	case strings.Contains(rest, ":"):
		return peer
	}
	return prefix + net.JoinHostPort(rest, port)
}

// certDirs are where certificate names are looked up: the tls
// directory under each directory snmp.conf is read from, and under the
// persistent directory, as Net-SNMP looks them up.
func certDirs() []string {
	dirs := snmpConfDirs()
	p := os.Getenv("SNMP_PERSISTENT_DIR")
	if p == "" {
		p = "/var/lib/snmp"
	}
	return append(dirs, p)
}
