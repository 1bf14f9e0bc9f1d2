package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// DefaultSnmpdPersistent is where Debian's snmpd keeps its persistent
// state (engine ID, boots, USM users, values set by SNMP).
const DefaultSnmpdPersistent = "/var/lib/snmp/snmpd.conf"

// SnmpdPersistent is what tsnmpd takes over from the persistent file
// snmpd writes: the engine ID and boot counter (so managers' localized
// keys and their notion of snmpEngineBoots stay valid), the USM users
// with their localized keys, snmpSetSerialNo and the system values set
// by SNMP.
type SnmpdPersistent struct {
	Path string
	// EngineID is oldEngineID; nil when the file has none.
	EngineID []byte
	// Boots is engineBoots, the boot counter of snmpd's last start;
	// HasBoots tells it was there.
	Boots    int32
	HasBoots bool
	// SetSerialNo is snmpSetSerialNo's last value.
	SetSerialNo    int32
	HasSetSerialNo bool
	// Contact, Location and Name are the values SNMP SETs stored
	// (psyscontact, psyslocation, psysname); nil when not there.
	Contact, Location, Name *string
	// Users are the usmUser lines, as users with localized keys.
	Users []User
	// UserStorage is each user's storage type, as Net-SNMP wrote it.
	UserStorage []string
	// UserSecurityName is each user's usmUserSecurityName when it differs
	// from the user name, else "". snmpd (5.9) gives access control the
	// user name all the same, and so does tsnmpd for these users: the
	// rouser/rwuser and group lines that worked keep working.
	UserSecurityName []string
	// Ignored lists the lines not taken over, each "file:line: what".
	Ignored []string
	// Refused lists the users snmpd serves that tsnmpd cannot (a privacy
	// protocol tsnmp does not implement), each "file:line: what and what
	// to do": pollers using them fail until the user is created again.
	Refused []string
}

// errUnsupportedUser marks a usmUser line tsnmpd cannot serve.
var errUnsupportedUser = errors.New("unsupported user")

// ReadSnmpdPersistent reads snmpd's persistent file. A line it cannot
// read is listed in Ignored with its file and line; a file that is not
// there is an error wrapping os.ErrNotExist.
func ReadSnmpdPersistent(path string) (*SnmpdPersistent, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSnmpdPersistent(path, data), nil
}

// ParseSnmpdPersistent reads the text of snmpd's persistent file; name is
// used in messages.
func ParseSnmpdPersistent(name string, data []byte) *SnmpdPersistent {
	p := &SnmpdPersistent{Path: name}
	ignore := func(n int, format string, args ...any) {
		p.Ignored = append(p.Ignored, fmt.Sprintf("%s:%d: %s", name, n, fmt.Sprintf(format, args...)))
	}
	seen := map[string]bool{}
	for n, raw := range strings.Split(string(data), "\n") {
		n++
		tok, rest := nextWord(raw)
		if tok == "" || strings.HasPrefix(tok, "#") {
			continue
		}
		switch strings.ToLower(tok) {
		case "oldengineid":
			w, _ := nextWord(rest)
			id, err := persistOctets(w)
			if err != nil || len(id) < 5 || len(id) > 32 {
				ignore(n, "oldEngineID: not an engine ID of 5 to 32 octets")
				continue
			}
			p.EngineID = id
		case "engineboots":
			w, _ := nextWord(rest)
			b, err := strconv.ParseInt(w, 10, 32)
			if err != nil || b < 0 {
				ignore(n, "engineBoots: bad number %q", w)
				continue
			}
			p.Boots, p.HasBoots = int32(b), true
		case "setserialno":
			w, _ := nextWord(rest)
			v, err := strconv.ParseInt(w, 10, 32)
			if err != nil || v < 0 {
				ignore(n, "setserialno: bad number %q", w)
				continue
			}
			p.SetSerialNo, p.HasSetSerialNo = int32(v), true
		case "psyscontact", "psyslocation", "psysname":
			v := strings.TrimSpace(rest)
			if w, r := nextWord(rest); r == "" && len(rest) > 0 && (rest[0] == '"' || rest[0] == '\'') {
				v = w
			}
			switch strings.ToLower(tok) {
			case "psyscontact":
				p.Contact = &v
			case "psyslocation":
				p.Location = &v
			default:
				p.Name = &v
			}
		case "usmuser":
			u, storage, sec, err := parseUSMUserLine(rest)
			if errors.Is(err, errUnsupportedUser) {
				p.Refused = append(p.Refused, fmt.Sprintf("%s:%d: usmUser: %s", name, n, strings.TrimPrefix(err.Error(), errUnsupportedUser.Error()+": ")))
				continue
			}
			if err != nil {
				ignore(n, "usmUser: %v", err)
				continue
			}
			p.Users = append(p.Users, u)
			p.UserStorage = append(p.UserStorage, storage)
			p.UserSecurityName = append(p.UserSecurityName, sec)
		case "createuser":
			// snmpd turns these into usmUser lines at its next start;
			// one still here was never started with.
			ignore(n, "createUser in the persistent file: put it in the configuration to keep it")
		default:
			if !seen[strings.ToLower(tok)] {
				seen[strings.ToLower(tok)] = true
				ignore(n, "%s: snmpd's state for a feature tsnmpd does not take over (later %s lines alike)", tok, tok)
			}
		}
	}
	return p
}

// persistOctets reads an octet string as Net-SNMP writes it in persistent
// files: 0x followed by hex, or text (quoted when it has spaces).
func persistOctets(w string) ([]byte, error) {
	if strings.HasPrefix(w, "0x") || strings.HasPrefix(w, "0X") {
		return hex.DecodeString(w[2:])
	}
	return []byte(w), nil
}

var (
	authProtocolOIDs = map[string]string{
		".1.3.6.1.6.3.10.1.1.1": "",
		".1.3.6.1.6.3.10.1.1.2": "MD5",
		".1.3.6.1.6.3.10.1.1.3": "SHA",
		".1.3.6.1.6.3.10.1.1.4": "SHA-224",
		".1.3.6.1.6.3.10.1.1.5": "SHA-256",
		".1.3.6.1.6.3.10.1.1.6": "SHA-384",
		".1.3.6.1.6.3.10.1.1.7": "SHA-512",
	}
	privProtocolOIDs = map[string]string{
		".1.3.6.1.6.3.10.1.2.1":   "",
		".1.3.6.1.6.3.10.1.2.2":   "DES",
		".1.3.6.1.6.3.10.1.2.4":   "AES",
		".1.3.6.1.4.1.14832.1.3":  "AES192",
		".1.3.6.1.4.1.14832.1.4":  "AES256",
		".1.3.6.1.4.1.9.12.6.1.1": "AES192C",
		".1.3.6.1.4.1.9.12.6.1.2": "AES256C",
		// usm3DESPrivProtocol, draft-reeder-snmpv3-usm-3desede: the
		// draft's own OID and the one some implementations write.
		".1.3.6.1.4.1.14832.1.1":    "3DES",
		".1.3.6.1.6.3.10.1.2.3":     "3DES",
		"NULL":                      "",
		".1.3.6.1.6.3.10.1.1.1.0.0": "",
	}
	storageTypes = map[string]string{"1": "other", "2": "volatile", "3": "nonVolatile", "4": "permanent", "5": "readOnly"}
)

// parseUSMUserLine reads what follows "usmUser": STATUS STORAGE ENGINEID
// NAME SECNAME CLONEFROM AUTHPROTO AUTHKEY PRIVPROTO PRIVKEY PUBLIC. sec is
// SECNAME when it differs from NAME.
func parseUSMUserLine(rest string) (u User, storage, sec string, err error) {
	w := words(rest)
	if len(w) < 10 {
		return User{}, "", "", fmt.Errorf("%d fields, want at least 10", len(w))
	}
	if w[0] != "1" {
		return User{}, "", "", fmt.Errorf("row status %s is not active(1)", w[0])
	}
	storage, ok := storageTypes[w[1]]
	if !ok {
		return User{}, "", "", fmt.Errorf("bad storage type %q", w[1])
	}
	engineID, err := persistOctets(w[2])
	if err != nil || len(engineID) < 5 || len(engineID) > 32 {
		return User{}, "", "", fmt.Errorf("bad engine ID %q", w[2])
	}
	name, err := persistOctets(w[3])
	if err != nil || len(name) == 0 {
		return User{}, "", "", fmt.Errorf("bad user name %q", w[3])
	}
	secName, err := persistOctets(w[4])
	if err != nil || len(secName) == 0 || len(secName) > 255 {
		return User{}, "", "", fmt.Errorf("user %q: bad security name %q", name, w[4])
	}
	auth, ok := authProtocolOIDs[w[6]]
	if !ok {
		return User{}, "", "", fmt.Errorf("unknown authentication protocol %s", w[6])
	}
	priv, ok := privProtocolOIDs[w[8]]
	if priv == "3DES" {
		return User{}, "", "", fmt.Errorf("%w: user %q uses 3DES-EDE privacy (%s, draft-reeder-snmpv3-usm-3desede), which tsnmp does not implement, so it is not taken over: "+
			"create the user again with AES (createUser %s %s AUTHPASS AES PRIVPASS in tsnmpd's configuration) and set the pollers' privacy protocol to AES",
			errUnsupportedUser, name, w[8], name, orNone(auth))
	}
	if !ok {
		return User{}, "", "", fmt.Errorf("user %q: unknown privacy protocol %s", name, w[8])
	}
	u = User{Name: string(name), EngineID: "0x" + hex.EncodeToString(engineID), Auth: auth, Priv: priv, KeyType: "localized"}
	if string(secName) != string(name) {
		sec = string(secName)
	}
	key := func(s string) (string, error) {
		if s == "\"\"" || s == "" || s == "NULL" {
			return "", nil
		}
		b, err := persistOctets(s)
		if err != nil {
			return "", fmt.Errorf("bad key %q", s)
		}
		return "0x" + hex.EncodeToString(b), nil
	}
	if auth != "" {
		if u.AuthKey, err = key(w[7]); err != nil || u.AuthKey == "" {
			return User{}, "", "", fmt.Errorf("user %q: missing authentication key", name)
		}
	}
	if priv != "" {
		if u.PrivKey, err = key(w[9]); err != nil || u.PrivKey == "" {
			return User{}, "", "", fmt.Errorf("user %q: missing privacy key", name)
		}
	}
	return u, storage, sec, nil
}
