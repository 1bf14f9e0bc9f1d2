package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
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
	// host marks a line of a host's own file (hosts/HOST.conf).
	host bool
}

// readConf reads snmp.conf and snmp.local.conf from each directory
// Net-SNMP's tools read them from, in that order (a later line
// overrides an earlier one). Lines may carry Net-SNMP's "[snmp]" prefix.
func readConf() []confLine {
	return readConfFiles([]string{"snmp.conf", "snmp.local.conf"}, false)
}

// readHostConf reads the files Net-SNMP's tools read for an agent named
// name when it opens the session: hosts/NAME.conf and
// hosts/NAME.local.conf under each snmp.conf directory, for a name of
// letters, digits, dots and hyphens only (not "udp:name", an alias or an
// address with a port). They take snmp.conf's tokens, and "transport"
// gives the address to use instead of the name.
func readHostConf(name string, general []confLine) []confLine {
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != "" {
		return nil
	}
	for i := len(general) - 1; i >= 0; i-- {
		if general[i].key == "dontloadhostconfig" {
			if on, _ := confBool(general[i].val); on {
				return nil
			}
			break
		}
	}
	return readConfFiles([]string{"hosts/" + name + ".conf", "hosts/" + name + ".local.conf"}, true)
}

// confOptions turns the command line's --TOKEN=VALUE (and --TOKEN VALUE
// given as one word) into lines that come after every file, as
// Net-SNMP's tools take any snmp.conf token on the command line.
func confOptions(opts []string) []confLine {
	var out []confLine
	for _, o := range opts {
		key, val, _ := strings.Cut(o, "=")
		out = append(out, confLine{key: strings.ToLower(key), val: confWord(strings.TrimSpace(val)), file: "(command line)"})
	}
	return out
}

func readConfFiles(names []string, host bool) []confLine {
	var out []confLine
	for _, d := range snmpConfDirs() {
		for _, name := range names {
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
				out = append(out, confLine{key: strings.ToLower(key), val: confWord(strings.TrimSpace(val)), file: path, line: n, host: host})
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

// confInputSwitches returns the last values lines give noRangeCheck
// and noDisplayHint, nil for one they do not set. Net-SNMP's tools read
// snmp.conf after their options, so these win over -Ir and -Ih.
func confInputSwitches(lines []confLine) (noRange, noHint *bool) {
	for _, l := range lines {
		on, ok := confBool(l.val)
		switch {
		case !ok:
		case l.key == "norangecheck":
			noRange = &on
		case l.key == "nodisplayhint":
			noHint = &on
		}
	}
	return noRange, noHint
}

// confDefaults are the snmp.conf settings the command line did not set.
type confDefaults struct {
	defaultPort int
	aliases     map[string]string
	// transport is a host file's address for the agent it is named
	// after; domains are defDomain's (application -> domain),
	// targets defTarget's ("application domain" -> target).
	transport string
	domains   map[string]string
	targets   map[string]string
	// clientPort is clientaddrUsesPort: clientaddr's port is used.
	clientPort bool
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
	keys := map[string][]byte{}
	cmdSeen := maps.Clone(o.seen) // the command line's options
	var tparams []string
	debugging, tokens := false, ""
	for _, l := range lines {
		switch l.key {
		case "defversion":
			if l.host {
				// Net-SNMP's tools settle the version before they
				// read the host's file: its defVersion changes nothing.
				continue
			}
			vals['v'] = l
		case "transport":
			if l.host {
				o.conf.transport = l.val
			}
		case "defdomain":
			app, domains, _ := strings.Cut(l.val, " ")
			domain := strings.FieldsFunc(domains, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
			if len(domain) == 0 {
				bad(l, fmt.Sprintf("No domain(s) in registration of defDomain %q", app))
				continue
			}
			if o.conf.domains == nil {
				o.conf.domains = map[string]string{}
			}
			if _, dup := o.conf.domains[app]; dup {
				bad(l, "Default transport already registered for this application")
				continue
			}
			o.conf.domains[app] = strings.ToLower(domain[0])
		case "deftarget":
			f := strings.Fields(l.val)
			if len(f) < 3 {
				bad(l, "defTarget takes an application, a domain and a target")
				continue
			}
			if o.conf.targets == nil {
				o.conf.targets = map[string]string{}
			}
			k := f[0] + " " + strings.ToLower(f[1])
			if _, dup := o.conf.targets[k]; dup {
				bad(l, "Default target already registered for this application-domain combination")
				continue
			}
			o.conf.targets[k] = f[2]
		case "clientaddr":
			o.cfg.LocalAddr = l.val
		case "clientaddrusesport":
			if on, ok := confBool(l.val); ok {
				o.conf.clientPort = on
			} else {
				bad(l, "clientaddrUsesPort takes yes or no")
			}
		case "16bitids":
			if on, ok := confBool(l.val); ok {
				o.cfg.ShortIDs = on
			} else {
				bad(l, "16bitIDs takes yes or no")
			}
		case "defauthmasterkey", "defprivmasterkey", "defauthlocalizedkey", "defprivlocalizedkey":
			k, ok := parseHexString(l.val)
			if !ok || len(k) == 0 {
				bad(l, l.key+" takes a key in hex")
				continue
			}
			keys[l.key] = k
		case "defsecuritymodel":
			switch strings.ToLower(l.val) {
			case "usm", "tsm":
				o.secModel = strings.ToLower(l.val)
			default:
				fmt.Fprintf(errw, "unknown security model name: %s.  Forcing USM instead.\n", l.val)
				o.secModel = "usm"
			}
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
				if on, ok := confBool(l.val); ok && letters[0] == 'I' {
					// Set, not toggled as -I toggles: "no"
					// undoes the command line's -Ir or -Ih.
					o.confOut = append(o.confOut, map[bool]string{true: "I+", false: "I-"}[on]+letters[1:])
				} else if ok && on {
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
	o.resolveKeys(keys, vals, cmdSeen)
	if a := o.cfg.LocalAddr; a != "" {
		// clientaddr [DOMAIN:]ADDRESS[:PORT]; the port only with
		// clientaddrUsesPort.
		if i := strings.IndexByte(a, ':'); i > 0 && domainNames[strings.ToLower(a[:i])] {
			a = a[i+1:]
		}
		if h, _, err := net.SplitHostPort(a); err == nil && !o.conf.clientPort {
			a = h
		}
		o.cfg.LocalAddr = a
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
			o.setInputSwitch(s[2], s[1] == '+')
		}
	}
}

// resolveKeys settles the USM keys as Net-SNMP's tools do, for auth and
// priv alike: a localized key from the command line (-3k) comes first;
// then the session's key: the command line's passphrase (-A), else its
// master key (-3m), else snmp.conf's master key (defAuthMasterKey), else
// its passphrase; snmp.conf's localized key (defAuthLocalizedKey) only
// where none of these is given. vals holds the snmp.conf lines applied,
// cmdSeen the options of the command line.
func (o *options) resolveKeys(keys map[string][]byte, vals map[byte]confLine, cmdSeen map[byte]bool) {
	for _, p := range []struct {
		pw        byte // -A or -X
		master    byte // -3m or -3M
		local     byte // -3k or -3K
		conf      string
		password  *string
		key, lkey *[]byte
	}{
		{'A', 'm', 'k', "auth", &o.cfg.AuthPassword, &o.cfg.AuthKey, &o.cfg.AuthLocalKey},
		{'X', 'M', 'K', "priv", &o.cfg.PrivPassword, &o.cfg.PrivKey, &o.cfg.PrivLocalKey},
	} {
		cmdLocal := strings.IndexByte(o.cmdKeys, p.local) >= 0
		switch {
		case cmdSeen[p.pw]:
			*p.key = nil
		case strings.IndexByte(o.cmdKeys, p.master) >= 0:
			*p.password = ""
		case keys["def"+p.conf+"masterkey"] != nil:
			*p.key, *p.password = keys["def"+p.conf+"masterkey"], ""
		}
		_, confPass := vals[p.pw]
		if !cmdLocal && *p.password == "" && len(*p.key) == 0 && !confPass {
			*p.lkey = keys["def"+p.conf+"localizedkey"]
		}
	}
}

// domainNames are the transport domains an agent address may start
// with ("udp:", ...), as Net-SNMP's tools know them.
var domainNames = map[string]bool{
	"udp": true, "tcp": true, "udp6": true, "tcp6": true, "udpv6": true, "tcpv6": true,
	"udpipv6": true, "tcpipv6": true, "tls": true, "dtls": true, "ssh": true, "unix": true,
	"alias": true, "tlstcp": true, "dtlsudp": true, "ipv6": true, "inet6": true,
}

// target applies snmp.conf's alias, a host file's transport, defDomain,
// defTarget and defaultPort to an agent address, for application app
// ("snmp", or "snmptrap" for trap and inform), in the order Net-SNMP's
// tools apply them.
func (o *options) target(peer, app string) string {
	if o.conf.transport != "" {
		peer = o.conf.transport
	}
	if def, ok := o.conf.aliases[strings.TrimPrefix(peer, "alias:")]; ok && strings.HasPrefix(peer, "alias:") {
		peer = def
	}
	domain := ""
	if i := strings.IndexByte(peer, ':'); i > 0 && domainNames[strings.ToLower(peer[:i])] {
		domain = strings.ToLower(peer[:i])
	} else if d := o.conf.domains[app]; d != "" && app != "snmp" && !strings.HasPrefix(peer, "/") {
		// Net-SNMP's command generators (application "snmp") name
		// their default domains themselves, so defDomain reaches only
		// snmptrap and snmpinform (application "snmptrap").
		domain = d
		peer = d + ":" + peer
	}
	if domain == "" {
		domain = "udp"
	}
	port := o.conf.defaultPort
	if port == 0 {
		if def := o.conf.targets[app+" "+domain]; def != "" {
			if i := strings.LastIndexByte(def, ':'); i >= 0 {
				port, _ = strconv.Atoi(def[i+1:])
			}
		}
	}
	if port == 0 {
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
	portText := strconv.Itoa(port)
	switch {
	case strings.HasPrefix(rest, "["):
		if strings.Contains(rest, "]:") {
			return peer
		}
		return prefix + rest + ":" + portText
	case strings.Count(rest, ":") > 1:
		return prefix + "[" + rest + "]:" + portText
	case strings.Contains(rest, ":"):
		return peer
	}
	return prefix + net.JoinHostPort(rest, portText)
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
