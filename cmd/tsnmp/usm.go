package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// tsnmp usm is snmpusm: it creates, clones, activates, deactivates and
// deletes users in an agent's usmUserTable and changes their keys with
// usmUserAuthKeyChange and usmUserPrivKeyChange (RFC 3414 section 5),
// with snmpusm's requests and messages.
//
//	tsnmp usm [OPTIONS] AGENT create USER [CLONEFROM-USER]
//	tsnmp usm [OPTIONS] AGENT delete|activate|deactivate USER
//	tsnmp usm [OPTIONS] AGENT cloneFrom USER CLONEFROM-USER
//	tsnmp usm [OPTIONS] AGENT passwd OLD-PASSPHRASE NEW-PASSPHRASE [USER]
//	tsnmp usm [OPTIONS] AGENT changekey [USER]
//
// changekey agrees new random keys with the agent by Diffie-Hellman
// through RFC 2786's usmDHUserKeyTable (usmDHUser*KeyChange; the
// usmDHUserOwn*KeyChange objects without USER) and prints them, as
// snmpusm does.
//
// -CE ENGINEID sets the usmUserEngineID of the row (default the agent's),
// -Cp STRING usmUserPublic, -Cw creates with createAndWait, -Ca and -Cx
// change only the authentication or privacy key, -Ck takes localized
// keys (0x...) instead of passphrases.

var (
	oidUsmUserEntry = snmp.OID{1, 3, 6, 1, 6, 3, 15, 1, 2, 2, 1}
	oidSnmpEngineID = snmp.OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 1, 0}
)

const (
	usmColSecurityName  = 3
	usmColCloneFrom     = 4
	usmColAuthKeyChange = 6
	usmColOwnAuthKey    = 7
	usmColPrivKeyChange = 9
	usmColOwnPrivKey    = 10
	usmColPublic        = 11
	usmColStatus        = 13
)

var usmNotes = map[string]string{
	"passwd": "SNMPv3 Key(s) successfully changed.", "create": "User successfully created.",
	"delete": "User successfully deleted.", "cloneFrom": "User successfully cloned.",
	"activate": "User successfully activated.", "deactivate": "User successfully deactivated.",
	"changekey": "SNMPv3 Key(s) successfully changed.",
}

// SNMP-USM-DH-OBJECTS-MIB (RFC 2786).
var (
	oidUsmDHParameters    = snmp.OID{1, 3, 6, 1, 3, 101, 1, 1, 1, 0}
	oidUsmDHUserKeyEntry  = snmp.OID{1, 3, 6, 1, 3, 101, 1, 1, 2, 1}
	dhColAuthKeyChange    = uint32(1)
	dhColOwnAuthKeyChange = uint32(2)
	dhColPrivKeyChange    = uint32(3)
	dhColOwnPrivKeyChange = uint32(4)
)

// usmRow returns the OID of a usmUserEntry column for (engineID, user).
func usmRow(col uint32, engineID []byte, user string) snmp.OID {
	return userRowOID(oidUsmUserEntry, col, engineID, user)
}

// userRowOID returns the OID of a column of a table indexed by
// (usmUserEngineID, usmUserName).
func userRowOID(entry snmp.OID, col uint32, engineID []byte, user string) snmp.OID {
	o := append(entry.Clone(), col, uint32(len(engineID)))
	for _, b := range engineID {
		o = append(o, uint32(b))
	}
	o = append(o, uint32(len(user)))
	for i := 0; i < len(user); i++ {
		o = append(o, uint32(user[i]))
	}
	return o
}

func (a *app) usm(ops []string) int {
	f, ok := a.parseAppOpts("wxak", "", "pE")
	if !ok {
		return 1
	}
	if len(ops) == 0 {
		a.errorf("Please specify an operation to perform.\n")
		a.usage()
		return 1
	}
	var engineID []byte
	if e, ok := f.str['E']; ok {
		b, err := parseEngineID(e)
		if err != nil {
			a.errorf("Bad -CE option: %s\n", e)
			return 1
		}
		engineID = b
	}
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	if engineID == nil {
		// The agent's engine ID: discovered by the first request, or
		// read from snmpEngineID without SNMPv3.
		resp, err := a.sess.Do(a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds([]snmp.OID{oidSnmpEngineID})})
		if err != nil && !errors.As(err, new(*manager.StatusError)) {
			a.requestError(err, false)
			return 1
		}
		if engineID = a.sess.EngineID(); engineID == nil && resp != nil && len(resp.VarBinds) > 0 {
			engineID = bytes.Clone(resp.VarBinds[0].Value.Bytes)
		}
	}
	cmd, args := ops[0], ops[1:]
	status := func(user string, v int64) snmp.VarBind {
		return snmp.VarBind{Name: usmRow(usmColStatus, engineID, user), Value: snmp.IntegerValue(v)}
	}
	cloneFrom := func(user, from string) snmp.VarBind {
		return snmp.VarBind{Name: usmRow(usmColCloneFrom, engineID, user), Value: snmp.OIDValue(usmRow(usmColSecurityName, engineID, from))}
	}
	var vbs []snmp.VarBind
	need := func(n int, msg string) bool {
		if len(args) < n {
			a.errorf("%s\n", msg)
			return false
		}
		return true
	}
	switch cmd {
	case "create":
		if !need(1, "You must specify the user name to create") {
			a.usage()
			return 1
		}
		if len(args) > 1 {
			rs := int64(4) // createAndGo
			if f.set['w'] {
				rs = 5
			}
			vbs = append(vbs, status(args[0], rs), cloneFrom(args[0], args[1]))
		} else {
			vbs = append(vbs, status(args[0], 5))
		}
	case "cloneFrom":
		if !need(1, "You must specify the user name to operate on") || !need(2, "You must specify the user name to clone from") {
			a.usage()
			return 1
		}
		vbs = append(vbs, status(args[0], 1), cloneFrom(args[0], args[1]))
	case "delete", "activate", "deactivate":
		if !need(1, "You must specify the user name to "+cmd) {
			return 1
		}
		v := map[string]int64{"delete": 6, "activate": 1, "deactivate": 2}[cmd]
		vbs = append(vbs, status(args[0], v))
	case "passwd":
		var ok bool
		if vbs, ok = a.usmPasswd(f, engineID, args); !ok {
			return 1
		}
	case "changekey":
		var ok bool
		if vbs, ok = a.usmChangeKey(f, engineID, args); !ok {
			return 1
		}
	default:
		a.errorf("Unknown command\n")
		a.usage()
		return 1
	}
	if p, ok := f.str['p']; ok {
		vbs = append(vbs, snmp.VarBind{Name: usmRow(usmColPublic, engineID, a.o.cfg.User), Value: snmp.BytesValue([]byte(p))})
	}
	_, err := a.sess.Do(a.ctx, &snmp.PDU{Type: snmp.SetRequest, VarBinds: vbs})
	var se *manager.StatusError
	switch {
	case errors.As(err, &se):
		a.errorf("Error in packet.\nReason: %s\n", errorString(se.Status))
		if se.Index != 0 {
			a.errorf("Failed object: ")
			if name, ok := se.FailedObject(); ok {
				a.errorf("%s", a.o.out.OID(name))
			}
			a.errorf("\n")
		}
	case errors.Is(err, manager.ErrTimeout):
		a.errorf("Timeout: No Response from %s\n", a.peer)
	case err != nil:
		a.errorf("snmpset: %s\n", a.withDetail(err.Error()))
	default:
		a.out.WriteString(usmNotes[cmd] + "\n")
	}
	return 0 // snmpusm exits 0 whatever the answer
}

// usmPasswd builds the key changes of passwd: the keys localized from
// the old and new passphrases (or given with -Ck), with the session's
// authentication protocol, and the privacy keys cut or extended to the
// session's privacy protocol.
func (a *app) usmPasswd(f *appFlags, engineID []byte, args []string) ([]snmp.VarBind, bool) {
	if len(args) < 2 || len(args[1]) < 8 {
		a.errorf("New passphrase must be greater than 8 characters in length.\n")
		return nil, false
	}
	if len(args[0]) < 8 {
		a.errorf("Old passphrase must be greater than 8 characters in length.\n")
		return nil, false
	}
	doAuth, doPriv := f.set['a'], f.set['x']
	if !doAuth && !doPriv {
		doAuth, doPriv = true, true
	}
	user, authCol, privCol := a.o.cfg.User, uint32(usmColOwnAuthKey), uint32(usmColOwnPrivKey)
	if len(args) > 2 && args[2] != "" {
		user, authCol, privCol = args[2], usmColAuthKeyChange, usmColPrivKeyChange
	}
	auth := a.o.cfg.AuthProtocol
	if auth == usm.AuthNone {
		auth = usm.AuthMD5 // snmpusm's default
	}
	priv := a.o.cfg.PrivProtocol
	key := func(pass string, privacy bool) ([]byte, error) {
		if f.set['k'] && strings.HasPrefix(pass, "0x") {
			return hex.DecodeString(pass[2:])
		}
		ku, err := usm.PasswordToKey(auth, []byte(pass))
		if err != nil {
			return nil, err
		}
		if privacy {
			return usm.LocalizePrivKey(auth, priv, ku, engineID)
		}
		return usm.LocalizeKey(auth, ku, engineID)
	}
	change := func(privacy bool) ([]byte, bool) {
		oldKey, err1 := key(args[0], privacy)
		newKey, err2 := key(args[1], privacy)
		if err := errors.Join(err1, err2); err != nil {
			a.errorf("%s: %v\n", a.tool, err)
			return nil, false
		}
		if privacy && f.set['k'] {
			n := priv.KeyLen()
			oldKey, newKey = oldKey[:min(n, len(oldKey))], newKey[:min(n, len(newKey))]
		}
		kc, err := usm.EncodeKeyChange(auth, oldKey, newKey, nil)
		if err != nil {
			a.errorf("encoding the keychange failed\n")
			return nil, false
		}
		return kc, true
	}
	var vbs []snmp.VarBind
	if doAuth {
		kc, ok := change(false)
		if !ok {
			return nil, false
		}
		vbs = append(vbs, snmp.VarBind{Name: usmRow(authCol, engineID, user), Value: snmp.BytesValue(kc)})
	}
	if doPriv {
		if priv == usm.PrivNone {
			a.errorf("no encryption type specified, which I need in order to know to change the key\n")
			return nil, false
		}
		kc, ok := change(true)
		if !ok {
			return nil, false
		}
		vbs = append(vbs, snmp.VarBind{Name: usmRow(privCol, engineID, user), Value: snmp.BytesValue(kc)})
	}
	return vbs, true
}

// usmChangeKey builds the sets of changekey (RFC 2786): it reads
// usmDHParameters and the agent's public values of the objects to set,
// picks its own private values, prints the keys the shared secrets give
// (their right-most octets, as many as the session's -a and -x
// protocols' keys have) and returns the agent's public values followed
// by its own.
func (a *app) usmChangeKey(f *appFlags, engineID []byte, args []string) ([]snmp.VarBind, bool) {
	doAuth, doPriv := f.set['a'], f.set['x']
	if !doAuth && !doPriv {
		doAuth, doPriv = true, true
	}
	user, authCol, privCol := a.o.cfg.User, dhColOwnAuthKeyChange, dhColOwnPrivKeyChange
	if len(args) > 0 && args[0] != "" {
		user, authCol, privCol = args[0], dhColAuthKeyChange, dhColPrivKeyChange
	}
	type change struct {
		name string
		oid  snmp.OID
		n    int
	}
	auth := a.o.cfg.AuthProtocol
	if auth == usm.AuthNone {
		auth = usm.AuthMD5 // snmpusm's default
	}
	var changes []change
	if doAuth {
		changes = append(changes, change{"auth", userRowOID(oidUsmDHUserKeyEntry, authCol, engineID, user), auth.DigestLen()})
	}
	if doPriv {
		n := 16 // DES's key and pre-IV, snmpusm's default
		if a.o.cfg.PrivProtocol != usm.PrivNone {
			n = a.o.cfg.PrivProtocol.KeyLen()
		}
		changes = append(changes, change{"priv", userRowOID(oidUsmDHUserKeyEntry, privCol, engineID, user), n})
	}
	oids := []snmp.OID{oidUsmDHParameters}
	for _, c := range changes {
		oids = append(oids, c.oid)
	}
	resp, err := a.sess.Do(a.ctx, &snmp.PDU{Type: snmp.GetRequest, VarBinds: nullBinds(oids)})
	var se *manager.StatusError
	switch {
	case errors.As(err, &se):
		a.errorf("%s: %s\n", a.tool, errorString(se.Status))
	case errors.Is(err, manager.ErrTimeout):
		a.errorf("%s: Timeout\n", a.tool)
		return nil, false
	case err != nil:
		a.requestError(err, false)
		return nil, false
	}
	if err == nil && len(resp.VarBinds) == len(oids) {
		ok := true
		for _, vb := range resp.VarBinds {
			ok = ok && vb.Value.Type == snmp.OctetString
		}
		if !ok {
			err = errors.New("not an OCTET STRING")
			a.errorf("%s: \n", a.tool)
		}
	} else if err == nil {
		err = errors.New("short answer")
		a.errorf("%s: \n", a.tool)
	}
	if err != nil {
		a.errorf("Can't get diffie-helman exchange from the agent\n  (maybe it doesn't support the SNMP-USM-DH-OBJECTS-MIB MIB)\n")
		return nil, false
	}
	params, err := usm.ParseDHParams(resp.VarBinds[0].Value.Bytes)
	if err != nil {
		a.errorf("%s: the agent's usmDHParameters: %v\n", a.tool, err)
		return nil, false
	}
	var vbs []snmp.VarBind
	for i, c := range changes {
		y := resp.VarBinds[1+i].Value.Bytes
		peer, err := params.PublicValue(y)
		if err != nil {
			a.errorf("%s: the agent's public value for the %s key: %v\n", a.tool, c.name, err)
			return nil, false
		}
		x, z, err := params.GenerateKey(nil)
		if err != nil {
			a.errorf("%s: %v\n", a.tool, err)
			return nil, false
		}
		key, err := usm.DHKeyFromSecret(params.SharedSecret(x, peer), c.n)
		if err != nil {
			a.errorf("%s: %v\n", a.tool, err)
			return nil, false
		}
		a.out.WriteString("new " + c.name + " key: 0x" + hex.EncodeToString(key) + "\n")
		vbs = append(vbs, snmp.VarBind{Name: c.oid, Value: snmp.BytesValue(append(bytes.Clone(y), z...))})
	}
	return vbs, true
}
