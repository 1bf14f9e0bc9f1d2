package config

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// DHKickstart is a usmDHKickstartTable entry (RFC 2786): the manager's
// Diffie-Hellman public value and the user it kickstarts. At each start
// the agent makes its own public value (usmDHKickstartMyPublic) and the
// user's keys from the shared secret. snmpd.conf:
// usmDHKickstart [-a AUTH] [-x PRIV] SECURITYNAME MGRPUBLIC.
type DHKickstart struct {
	// SecurityName is usmUserName and usmUserSecurityName of the user.
	SecurityName string `yaml:"security_name"`
	// ManagerPublic is usmDHKickstartMgrPublic in hex ("0x" and colons
	// allowed): g^xr mod p in Oakley group 2, at most 128 octets.
	ManagerPublic string `yaml:"manager_public"`
	// Auth and Priv are the user's protocols: RFC 2786's MD5 and DES
	// when empty; Priv may be "none".
	Auth string `yaml:"auth,omitempty"`
	Priv string `yaml:"priv,omitempty"`
}

// Kickstart is a checked DHKickstart.
type Kickstart struct {
	// Index is usmDHKickstartIndex: the entry's place in the
	// configuration, from 1.
	Index        int
	SecurityName string
	MgrPublic    []byte
	Auth         usm.AuthProtocol
	Priv         usm.PrivProtocol
}

// KickstartUser is the noAuthNoPriv user RFC 2786 expects beside a
// usmDHKickstartTable: it may read the system group and the table.
const KickstartUser = "dhKickstart"

// Names of the VACM entries made for KickstartUser.
const (
	kickstartGroup = "dhKickstart"
	kickstartView  = "dhKickRestricted"
)

// kickstartTable is usmDHKickstartTable's OID.
var kickstartTable = snmp.OID{1, 3, 6, 1, 3, 101, 1, 2, 1}

// Kickstarts checks and returns the usmDHKickstartTable entries.
func (c *Config) Kickstarts() ([]Kickstart, error) {
	var out []Kickstart
	seen := map[string]int{}
	local := map[string]int{}
	for i, u := range c.Users {
		if u.EngineID == "" {
			local[u.Name] = i
		}
	}
	g := usm.KickstartGroup()
	for i, k := range c.DHKickstart {
		path := fmt.Sprintf("dh_kickstart[%d]", i)
		n := k.SecurityName
		switch {
		case n == "" || len(n) > usm.MaxUserNameLen:
			return nil, c.errAt(path+".security_name", "security name must be 1 to %d octets", usm.MaxUserNameLen)
		case !utf8.ValidString(n):
			return nil, c.errAt(path+".security_name", "%q is not UTF-8", n)
		case n == KickstartUser:
			return nil, c.errAt(path+".security_name", "%q is the noAuthNoPriv user that reads usmDHKickstartTable", n)
		}
		if j, ok := seen[n]; ok {
			return nil, c.errAt(path+".security_name", "user %q is kickstarted already by dh_kickstart[%d] (%s)", n, j, c.originOf(fmt.Sprintf("dh_kickstart[%d]", j)))
		}
		seen[n] = i
		if j, ok := local[n]; ok {
			return nil, c.errAt(path+".security_name", "user %q is created already by users[%d] (%s): a kickstarted user gets its keys from the kickstart only", n, j, c.originOf(fmt.Sprintf("users[%d]", j)))
		}
		pub, err := decodeHex(k.ManagerPublic)
		if err != nil || k.ManagerPublic == "" {
			return nil, c.errAt(path+".manager_public", "want the manager's public value in hex")
		}
		if _, err := g.PublicValue(pub); err != nil {
			return nil, c.errAt(path+".manager_public", "not a public value of Oakley group 2: %v", err)
		}
		auth, err := usm.ParseAuthProtocol(cmp.Or(k.Auth, "MD5"))
		if err != nil || auth == usm.AuthNone {
			if err == nil {
				err = fmt.Errorf("a kickstarted user needs an authentication protocol")
			}
			return nil, c.errAt(path+".auth", "%v", err)
		}
		priv, err := usm.ParsePrivProtocol(cmp.Or(k.Priv, "DES"))
		if err != nil {
			return nil, c.errAt(path+".priv", "%v", err)
		}
		out = append(out, Kickstart{Index: i + 1, SecurityName: n, MgrPublic: pub, Auth: auth, Priv: priv})
	}
	return out, nil
}

// kickstartUserDefined tells whether the configuration defines a user
// named dhKickstart of the local engine itself.
func (c *Config) kickstartUserDefined() bool {
	for _, u := range c.Users {
		if u.Name == KickstartUser && u.EngineID == "" {
			return true
		}
	}
	return false
}

// kickstartAccess adds RFC 2786's VACM entries for the dhKickstart user
// when there are kickstart entries and the configuration puts
// dhKickstart in no USM group itself: group dhKickstart, read and notify
// view dhKickRestricted (system and usmDHKickstartTable) at noAuthNoPriv
// in the default context.
func (b *accessBuilder) kickstartAccess() error {
	if len(b.c.DHKickstart) == 0 {
		return nil
	}
	for _, g := range b.v.Groups {
		if g.SecurityName == KickstartUser && g.SecurityModel == snmp.SecurityModelUSM {
			return nil
		}
	}
	// The entries below would merge with a view or access entries of the
	// same names that the configuration has for its own ends, and give
	// noAuthNoPriv more than RFC 2786's view.
	for i, w := range b.c.Views {
		if w.Name == kickstartView {
			return b.c.errAt(fmt.Sprintf("views[%d].name", i), "view %q is the one usmDHKickstart makes for the noAuthNoPriv user %s (the system group and usmDHKickstartTable); name this view otherwise, or put %s in a group of your own", kickstartView, KickstartUser, KickstartUser)
		}
	}
	for i, a := range b.c.Access {
		if a.Group == kickstartGroup {
			return b.c.errAt(fmt.Sprintf("access[%d].group", i), "group %q is the one usmDHKickstart makes for the noAuthNoPriv user %s; name this group otherwise, or put %s in a group of your own", kickstartGroup, KickstartUser, KickstartUser)
		}
	}
	for _, f := range b.v.Families {
		if f.ViewName == kickstartView {
			return &ConfigError{Err: fmt.Errorf("view %q, which usmDHKickstart makes for the noAuthNoPriv user %s, is defined already", kickstartView, KickstartUser)}
		}
	}
	for _, a := range b.v.Access {
		if a.GroupName == kickstartGroup {
			return &ConfigError{Err: fmt.Errorf("group %q, which usmDHKickstart makes for the noAuthNoPriv user %s, has access entries already", kickstartGroup, KickstartUser)}
		}
	}
	b.v.Groups = append(b.v.Groups, vacm.Group{SecurityModel: snmp.SecurityModelUSM, SecurityName: KickstartUser, GroupName: kickstartGroup})
	b.v.Families = append(b.v.Families,
		vacm.Family{ViewName: kickstartView, Subtree: snmp.OID{1, 3, 6, 1, 2, 1, 1}},
		vacm.Family{ViewName: kickstartView, Subtree: kickstartTable.Clone()})
	b.v.Access = append(b.v.Access, vacm.Access{GroupName: kickstartGroup, SecurityModel: snmp.SecurityModelUSM,
		SecurityLevel: snmp.NoAuthNoPriv, ReadView: kickstartView, NotifyView: kickstartView})
	return nil
}

// usmDHKickstart reads usmDHKickstart [-a AUTH] [-x PRIV] SECURITYNAME
// MGRPUBLIC.
func (p *snmpdParser) usmDHKickstart(tok, rest string) error {
	w := words(rest)
	var k DHKickstart
	for len(w) > 0 && strings.HasPrefix(w[0], "-") {
		if len(w) < 2 {
			return p.errorf(tok, "%s needs a protocol", w[0])
		}
		switch w[0] {
		case "-a":
			k.Auth = w[1]
		case "-x":
			k.Priv = w[1]
		default:
			return p.errorf(tok, "unknown option %s; want: %s [-a AUTH] [-x PRIV] SECURITYNAME MGRPUBLIC", w[0], tok)
		}
		w = w[2:]
	}
	if len(w) != 2 {
		return p.errorf(tok, "want: %s [-a AUTH] [-x PRIV] SECURITYNAME MGRPUBLIC (the manager's Diffie-Hellman public value in hex)", tok)
	}
	k.SecurityName, k.ManagerPublic = w[0], w[1]
	i := len(p.c.DHKickstart)
	p.c.setOrigin(fmt.Sprintf("dh_kickstart[%d]", i), p.origin())
	p.c.DHKickstart = append(p.c.DHKickstart, k)
	return nil
}
