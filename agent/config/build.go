package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/security/community"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// Names of Net-SNMP's predefined views, which every configuration has:
// _all_ includes everything and _none_ nothing.
const (
	ViewAll  = "_all_"
	ViewNone = "_none_"
)

// Validate checks the whole configuration, including that every USM user
// has its passwords or keys.
func (c *Config) Validate() error {
	if err := c.check(true); err != nil {
		return err
	}
	if s := c.System.Services; s != nil && (*s < 0 || *s > 127) {
		return c.errAt("system.services", "sysServices %d out of range 0..127", *s)
	}
	for _, s := range []struct{ path, v string }{
		{"system.descr", c.System.Descr}, {"system.contact", c.System.Contact},
		{"system.name", c.System.Name}, {"system.location", c.System.Location},
	} {
		if len(s.v) > 255 {
			return c.errAt(s.path, "longer than 255 octets")
		}
	}
	if c.Limits.MaxRepetitions < 0 || c.Limits.MaxResponseSize < 0 || c.Limits.IfCacheTTL < 0 {
		return c.errAt("limits", "limits must not be negative")
	}
	if n := c.Limits.MaxResponseSize; n != 0 && n < 484 {
		return c.errAt("limits.max_response_size", "%d is below the minimum message size 484", n)
	}
	if r := c.Limits.UDPResponseRate; r.Rate < 0 || r.Burst < 0 || r.Slip < 0 || r.IPv4Prefix < 0 || r.IPv4Prefix > 32 || r.IPv6Prefix < 0 || r.IPv6Prefix > 128 {
		return c.errAt("limits.udp_response_rate", "rate, burst and slip must not be negative, prefixes 0..32 and 0..128")
	}
	return nil
}

// BuildVACM returns the VACM tables: the explicit groups, views and
// access entries, the expansions of the shortcuts, and the standard views
// _all_ and _none_. They are built once per load (see build).
func (c *Config) BuildVACM() (*vacm.VACM, error) {
	b, err := c.build()
	if err != nil {
		return nil, err
	}
	return b.vacm, nil
}

// BuildCommunities returns the community table from the community
// shortcuts and the com2sec entries, in configuration order (for the YAML
// file: communities before com2sec), built with the VACM tables.
func (c *Config) BuildCommunities() (*community.Table, error) {
	b, err := c.build()
	if err != nil {
		return nil, err
	}
	return b.communities, nil
}

// BuildUSMUsers builds the USM user table. Users without an engine ID of
// their own are localized to localEngineID.
func (c *Config) BuildUSMUsers(localEngineID []byte) (*usm.UserTable, error) {
	t := usm.NewUserTable()
	for i := range c.Users {
		u, err := c.userKeys(i, localEngineID)
		if err != nil {
			return nil, err
		}
		t.Add(u.engineID, u.user)
	}
	if len(c.DHKickstart) > 0 && !c.kickstartUserDefined() {
		// RFC 2786: the user that reads usmDHKickstartTable.
		u, err := usm.NewUser(KickstartUser, usm.AuthNone, nil, usm.PrivNone, nil)
		if err != nil {
			return nil, err
		}
		t.Add(localEngineID, u)
	}
	return t, nil
}

// ListenAddresses parses Listen; the default port is 161.
func (c *Config) ListenAddresses() ([]transport.Address, error) {
	var out []transport.Address
	for i, s := range c.Listen {
		if _, _, ok, err := HTTPListen(s); ok {
			// http: and https: are served by the web-services interface.
			if err != nil {
				return nil, c.errAt(fmt.Sprintf("listen[%d]", i), "%v", err)
			}
			continue
		}
		a, err := transport.ParseAddress(s, 0)
		if err != nil {
			return nil, c.errAt(fmt.Sprintf("listen[%d]", i), "%v", err)
		}
		secure := (a.Domain == transport.TLS || a.Domain == transport.DTLS) && c.TLS.Enabled() ||
			a.Domain == transport.SSH && c.SSH.Enabled()
		if a.Domain != transport.UDP && a.Domain != transport.TCP && !secure {
			return nil, c.errAt(fmt.Sprintf("listen[%d]", i), "transport %s is not configured here", a.Domain)
		}
		if !validHost(a.Host) {
			return nil, c.errAt(fmt.Sprintf("listen[%d]", i), "bad host %q in %q", a.Host, s)
		}
		out = append(out, a)
	}
	return out, nil
}

// validHost accepts "", an IP address or a DNS name.
func validHost(h string) bool {
	if h == "" {
		return true
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
				return false
			}
		}
	}
	return true
}

// netSNMPTextEngineIDPrefix starts Net-SNMP's text engine IDs: format
// bit, enterprise 8072, format 4 (text).
var netSNMPTextEngineIDPrefix = []byte{0x80, 0x00, 0x1f, 0x88, 0x04}

// EngineIDBytes returns the configured engine ID, or nil when unset. The
// forms are "0x" followed by hex (the exact engine ID), "text:T" or any
// other text T (Net-SNMP's text engine ID 80:00:1f:88:04 followed by T).
func (c *Config) EngineIDBytes() ([]byte, error) {
	if c.EngineID == "" {
		return nil, nil
	}
	id, err := parseEngineID(c.EngineID, true)
	if err != nil {
		return nil, c.errAt("engine_id", "%v", err)
	}
	return id, nil
}

func parseEngineID(s string, textOK bool) ([]byte, error) {
	var id []byte
	if t, ok := strings.CutPrefix(s, "text:"); ok && textOK {
		id = append(slices.Clone(netSNMPTextEngineIDPrefix), t...)
	} else if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok || !textOK {
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("engine ID %q is not hex", s)
		}
		id = b
	} else {
		id = append(slices.Clone(netSNMPTextEngineIDPrefix), s...)
	}
	if len(id) < 5 || len(id) > 32 {
		return nil, fmt.Errorf("engine ID %q must be 5 to 32 octets, not %d", s, len(id))
	}
	return id, nil
}

// SysObjectID returns the configured sysObjectID, or nil when unset.
func (c *Config) SysObjectID() (snmp.OID, error) {
	if c.System.ObjectID == "" {
		return nil, nil
	}
	o, err := resolveOID(c.System.ObjectID)
	if err != nil {
		return nil, c.errAt("system.object_id", "%v", err)
	}
	return o, nil
}

// resolveOID reads a numeric OID or a MIB name, as Net-SNMP's view and
// rocommunity OID arguments accept them.
func resolveOID(s string) (snmp.OID, error) {
	t := s
	if len(t) > 1 && strings.HasSuffix(t, ".") {
		t = t[:len(t)-1]
	}
	if o, err := snmp.ParseOID(t); err == nil {
		return o, nil
	}
	o, err := smi.Resolve(t)
	if err != nil {
		return nil, err
	}
	if len(o) == 0 || len(o) > vacm.MaxSubtreeLen {
		return nil, fmt.Errorf("bad OID %q", s)
	}
	return snmp.OID(o), nil
}

func parseModel(s string) (snmp.SecurityModel, error) {
	switch strings.ToLower(s) {
	case "any", "":
		return snmp.SecurityModelAny, nil
	case "v1", "1":
		return snmp.SecurityModelV1, nil
	case "v2c", "2c":
		return snmp.SecurityModelV2c, nil
	case "usm":
		return snmp.SecurityModelUSM, nil
	case "tsm":
		return snmp.SecurityModelTSM, nil
	}
	return 0, fmt.Errorf("bad security model %q (want v1, v2c, usm, tsm or any)", s)
}

func parseLevel(s string) (snmp.SecurityLevel, error) {
	switch strings.ToLower(s) {
	case "noauth", "noauthnopriv":
		return snmp.NoAuthNoPriv, nil
	case "auth", "authnopriv":
		return snmp.AuthNoPriv, nil
	case "priv", "authpriv":
		return snmp.AuthPriv, nil
	}
	return 0, fmt.Errorf("bad security level %q (want noauth, auth or priv)", s)
}

// Access bits of a shortcut.
const (
	bitRead = 1 << iota
	bitWrite
	bitNotify
)

// parseAccessBits reads a shortcut's access: "ro", "rw", or a list of
// read, write and notify.
func parseAccessBits(s string) (int, error) {
	switch strings.ToLower(s) {
	case "", "ro", "read-only", "readonly":
		return bitRead, nil
	case "rw", "read-write", "readwrite":
		return bitRead | bitWrite, nil
	}
	bits := 0
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '|' || r == ':' || r == ' ' }) {
		switch strings.ToLower(t) {
		case "read":
			bits |= bitRead
		case "write":
			bits |= bitWrite
		case "notify":
			bits |= bitNotify
		default:
			return 0, fmt.Errorf("bad access %q (want ro, rw or a list of read, write, notify)", s)
		}
	}
	if bits == 0 {
		return 0, fmt.Errorf("bad access %q", s)
	}
	return bits, nil
}

// parseSources reads the sources of a community shortcut: "default" and
// "localhost" stand for both address families.
func parseSources(ss []string) ([]netip.Prefix, error) {
	if len(ss) == 0 {
		ss = []string{"default"}
	}
	var out []netip.Prefix
	for _, s := range ss {
		if s == "default" || s == "localhost" {
			p4, _ := community.ParseSource(s, false)
			p6, _ := community.ParseSource(s, true)
			out = append(out, p4, p6)
			continue
		}
		p, err := parseSource(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// parseSource reads an address or prefix of either family.
func parseSource(s string) (netip.Prefix, error) {
	p, err := community.ParseSource(s, false)
	if err != nil {
		if p6, err6 := community.ParseSource(s, true); err6 == nil {
			return p6, nil
		}
	}
	return p, err
}

func checkAdminName(s string) error {
	if s == "" {
		return errors.New("missing name")
	}
	if len(s) > vacm.MaxNameLen {
		return fmt.Errorf("%q is longer than %d octets", s, vacm.MaxNameLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%q is not UTF-8", s)
	}
	return nil
}

type builtUser struct {
	engineID []byte
	user     *usm.User
}

// userKeys validates user i and, with a non-nil localEngineID, builds it.
func (c *Config) userKeys(i int, localEngineID []byte) (*builtUser, error) {
	return c.userKeysOpt(i, localEngineID, true)
}

func (c *Config) userKeysOpt(i int, localEngineID []byte, requireSecrets bool) (*builtUser, error) {
	u := &c.Users[i]
	path := fmt.Sprintf("users[%d]", i)
	if u.Name == "" || len(u.Name) > usm.MaxUserNameLen {
		return nil, c.errAt(path+".name", "user name must be 1 to %d octets", usm.MaxUserNameLen)
	}
	auth, err := usm.ParseAuthProtocol(orNone(u.Auth))
	if err != nil {
		return nil, c.errAt(path+".auth", "%v", err)
	}
	priv, err := usm.ParsePrivProtocol(orNone(u.Priv))
	if err != nil {
		return nil, c.errAt(path+".priv", "%v", err)
	}
	if auth == usm.AuthNone && priv != usm.PrivNone {
		return nil, c.errAt(path+".priv", "privacy needs authentication")
	}
	var engineID []byte
	if u.EngineID != "" {
		if engineID, err = parseEngineID(u.EngineID, false); err != nil {
			return nil, c.errAt(path+".engine_id", "%v", err)
		}
	}
	master := false
	switch strings.ToLower(u.KeyType) {
	case "", "localized", "local", "l":
	case "master", "m":
		master = true
	default:
		return nil, c.errAt(path+".key_type", "key_type must be localized or master, not %q", u.KeyType)
	}
	if u.AuthKey != "" && u.AuthPassword != "" {
		return nil, c.errAt(path, "give auth_password or auth_key, not both")
	}
	if u.PrivKey != "" && u.PrivPassword != "" {
		return nil, c.errAt(path, "give priv_password or priv_key, not both")
	}
	var authKey, privKey []byte
	if auth != usm.AuthNone {
		switch {
		case u.AuthKey != "":
			if authKey, err = decodeHex(u.AuthKey); err != nil || len(authKey) == 0 {
				return nil, c.errAt(path+".auth_key", "bad hex key")
			}
			if len(authKey) != auth.DigestLen() {
				return nil, c.errAt(path+".auth_key", "%s keys have %d octets, not %d", u.Auth, auth.DigestLen(), len(authKey))
			}
		case u.AuthPassword == "" && !requireSecrets:
		case len(u.AuthPassword) < usm.MinPasswordLen:
			return nil, c.errAt(path+".auth_password", "password must have at least %d characters", usm.MinPasswordLen)
		}
	} else if u.AuthPassword != "" || u.AuthKey != "" {
		return nil, c.errAt(path+".auth", "password or key given without a protocol")
	}
	if priv != usm.PrivNone {
		switch {
		case u.PrivKey != "":
			if privKey, err = decodeHex(u.PrivKey); err != nil || len(privKey) == 0 {
				return nil, c.errAt(path+".priv_key", "bad hex key")
			}
			if master && len(privKey) != auth.DigestLen() {
				return nil, c.errAt(path+".priv_key", "master keys for %s have %d octets, not %d", u.Auth, auth.DigestLen(), len(privKey))
			}
			if !master && len(privKey) < priv.KeyLen() {
				return nil, c.errAt(path+".priv_key", "%s keys need %d octets, not %d", u.Priv, priv.KeyLen(), len(privKey))
			}
		case u.PrivPassword != "" && len(u.PrivPassword) < usm.MinPasswordLen:
			return nil, c.errAt(path+".priv_password", "password must have at least %d characters", usm.MinPasswordLen)
		case u.PrivPassword == "" && u.AuthKey != "" && !master && len(authKey) < priv.KeyLen():
			return nil, c.errAt(path+".priv_key", "%s needs a priv_key of %d octets (the auth_key is too short to share)", u.Priv, priv.KeyLen())
		}
	} else if u.PrivPassword != "" || u.PrivKey != "" {
		return nil, c.errAt(path+".priv", "password or key given without a protocol")
	}
	if localEngineID == nil {
		return &builtUser{}, nil
	}
	if engineID == nil {
		engineID = localEngineID
	}
	user, err := buildUser(u, auth, priv, authKey, privKey, master, engineID)
	if err != nil {
		return nil, c.errAt(path, "%v", err)
	}
	if u.SecurityName != "" {
		if err := user.SetSecurityName(u.SecurityName); err != nil {
			return nil, c.errAt(path+".security_name", "%v", err)
		}
	}
	return &builtUser{engineID: engineID, user: user}, nil
}

// buildUser makes the usm.User: from passwords or master keys it can
// serve any engine; with a localized key it is bound to engineID. A
// missing privacy secret is the authentication one, as in Net-SNMP.
func buildUser(u *User, auth usm.AuthProtocol, priv usm.PrivProtocol, authKey, privKey []byte, master bool, engineID []byte) (*usm.User, error) {
	if auth == usm.AuthNone {
		return usm.NewUser(u.Name, auth, nil, priv, nil)
	}
	authIsKey := u.AuthKey != ""
	privIsKey := u.PrivKey != ""
	privGiven := u.PrivKey != "" || u.PrivPassword != ""
	switch {
	case !authIsKey && !privIsKey:
		var pp []byte
		if u.PrivPassword != "" {
			pp = []byte(u.PrivPassword)
		}
		return usm.NewUser(u.Name, auth, []byte(u.AuthPassword), priv, pp)
	case master && authIsKey && (privIsKey || !privGiven):
		pk := privKey
		if pk == nil && priv != usm.PrivNone {
			pk = authKey
		}
		return usm.NewUserFromMasterKeys(u.Name, auth, authKey, priv, pk)
	}
	// Mixed or localized: localize everything to engineID.
	var authKu []byte
	authKul := authKey
	var err error
	if !authIsKey || master {
		authKu = authKey
		if !authIsKey {
			if authKu, err = usm.PasswordToKey(auth, []byte(u.AuthPassword)); err != nil {
				return nil, err
			}
		}
		if authKul, err = usm.LocalizeKey(auth, authKu, engineID); err != nil {
			return nil, err
		}
	}
	var privKul []byte
	if priv != usm.PrivNone {
		switch {
		case privIsKey && !master:
			privKul = privKey[:priv.KeyLen()]
		case privIsKey:
			if privKul, err = usm.LocalizePrivKey(auth, priv, privKey, engineID); err != nil {
				return nil, err
			}
		case u.PrivPassword != "":
			ku, err := usm.PasswordToKey(auth, []byte(u.PrivPassword))
			if err != nil {
				return nil, err
			}
			if privKul, err = usm.LocalizePrivKey(auth, priv, ku, engineID); err != nil {
				return nil, err
			}
		case authKu != nil:
			if privKul, err = usm.LocalizePrivKey(auth, priv, authKu, engineID); err != nil {
				return nil, err
			}
		default:
			privKul = authKul[:priv.KeyLen()]
		}
	}
	return usm.NewLocalizedUser(u.Name, engineID, auth, authKul, priv, privKul)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func decodeHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	return hex.DecodeString(strings.ReplaceAll(s, ":", ""))
}
