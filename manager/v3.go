package manager

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// ReportError is an SNMPv3 request answered with a Report PDU, typically
// one of the usmStats counters. Its message is the text Net-SNMP's tools
// print for the same condition.
type ReportError struct {
	Counter usm.Counter // zero when the Report names no usmStats counter
	Report  *snmp.PDU
}

// reportName names the first variable of a Report, for debug messages.
func reportName(r *snmp.PDU) string {
	if len(r.VarBinds) == 0 {
		return "(none)"
	}
	return r.VarBinds[0].Name.String()
}

func (e *ReportError) Error() string {
	switch e.Counter {
	case usm.UnknownUserNames:
		return "Unknown user name"
	case usm.WrongDigests:
		return "Authentication failure (incorrect password, community or key)"
	case usm.UnknownEngineIDs:
		return "Unknown engine ID"
	case usm.UnsupportedSecLevels:
		return "Unsupported security level"
	case usm.NotInTimeWindows:
		return "Not in time window"
	case usm.DecryptionErrors:
		return "Decryption error"
	}
	if e.Report != nil && len(e.Report.VarBinds) > 0 {
		return "Report PDU received: " + e.Report.VarBinds[0].Name.String()
	}
	return "Report PDU received"
}

// v3State is the message processing of SNMPv3 with the User-based
// Security Model (RFC 3412, RFC 3414): a USM acting as a non-authoritative
// engine with the session's user as a template entry, so keys are
// localized (and cached) for whatever engine is discovered.
type v3State struct {
	usm   *usm.USM
	user  string
	level snmp.SecurityLevel
	cfg   Config

	mu       sync.Mutex
	engineID []byte   // authoritative engine: configured (-e) or discovered
	trapUSM  *usm.USM // the local engine that secures traps (notify.go)

	// With a key cache (Config.KeyCache), the user enters the table
	// only once an engine is known: localized keys from the cache, else
	// the password-configured template (keysFor).
	users     *usm.UserTable
	auth      usm.AuthProtocol
	priv      usm.PrivProtocol
	keyMu     sync.Mutex
	template  bool                          // the password-configured user is in users
	localized map[string]bool               // engines whose keys are in users
	unsaved   map[string]*usm.LocalizedKeys // keys to cache once they work
	cached    map[string]bool               // engines whose keys came from the cache
	keyCache  *KeyCache
	// With a localized key configured, keysFor adds the user for each
	// engine from authKu and privKu (the master keys of the parts not
	// given localized).
	fixed          bool
	authKu, privKu []byte
}

func newV3State(cfg *Config) (*v3State, error) {
	auth, priv := cfg.AuthProtocol, cfg.PrivProtocol
	var authPW, privPW []byte
	switch cfg.Level {
	case snmp.NoAuthNoPriv:
		auth, priv = usm.AuthNone, usm.PrivNone
	case snmp.AuthNoPriv:
		priv = usm.PrivNone
		authPW = []byte(cfg.AuthPassword)
	case snmp.AuthPriv:
		authPW, privPW = []byte(cfg.AuthPassword), []byte(cfg.PrivPassword)
	default:
		return nil, fmt.Errorf("manager: bad security level %v", cfg.Level)
	}
	if cfg.Level >= snmp.AuthNoPriv && auth == usm.AuthNone {
		auth = usm.AuthMD5 // Net-SNMP's default authentication protocol
	}
	if cfg.Level == snmp.AuthPriv && priv == usm.PrivNone {
		priv = usm.PrivDES // Net-SNMP's default privacy protocol
	}
	if len(cfg.User) > usm.MaxUserNameLen {
		return nil, fmt.Errorf("manager: user name longer than %d octets", usm.MaxUserNameLen)
	}
	users := usm.NewUserTable()
	v := &v3State{user: cfg.User, level: cfg.Level, cfg: *cfg, users: users, auth: auth, priv: priv}
	keyed := len(cfg.AuthKey)+len(cfg.PrivKey)+len(cfg.AuthLocalKey)+len(cfg.PrivLocalKey) > 0
	if keyed && cfg.Level >= snmp.AuthNoPriv {
		// Master keys of the parts not given localized.
		var err error
		if len(cfg.AuthLocalKey) == 0 {
			if v.authKu, err = masterKey(auth, cfg.AuthKey, authPW); err != nil {
				return nil, err
			}
		}
		if priv != usm.PrivNone && len(cfg.PrivLocalKey) == 0 {
			if v.privKu, err = masterKey(auth, cfg.PrivKey, privPW); err != nil {
				return nil, err
			}
		}
		if len(cfg.AuthLocalKey) > 0 || len(cfg.PrivLocalKey) > 0 {
			v.fixed, v.localized = true, map[string]bool{}
		} else {
			u, err := usm.NewUserFromMasterKeys(cfg.User, auth, v.authKu, priv, v.privKu)
			if err != nil {
				return nil, err
			}
			users.Add(nil, u)
			v.template = true
		}
	} else if cfg.KeyCache != nil && cfg.Level >= snmp.AuthNoPriv {
		v.keyCache, v.localized, v.cached = cfg.KeyCache, map[string]bool{}, map[string]bool{}
		v.unsaved = map[string]*usm.LocalizedKeys{}
	} else {
		u, err := usm.NewUser(cfg.User, auth, authPW, priv, privPW)
		if err != nil {
			return nil, err
		}
		users.Add(nil, u)
		v.template = true
	}
	local := make([]byte, 17)
	local[0], local[1], local[2], local[3], local[4] = 0x80, 0, 0x1f, 0x88, 0x04 // enterprise-style, octets follow
	_, _ = rand.Read(local[5:])
	m, err := usm.New(usm.Config{EngineID: local, Users: users, Discovery: true})
	if err != nil {
		return nil, err
	}
	v.usm = m
	if len(cfg.SecurityEngineID) > 0 {
		v.engineID = bytes.Clone(cfg.SecurityEngineID)
		if err := m.AddRemoteEngine(v.engineID); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// keysFor makes sure the user table holds keys for engineID: with a key
// cache, the cached localized keys if their passwords match, else the
// password-configured user, whose keys for engineID go into the cache
// once an authentic response shows they are right (keysWork).
func (v *v3State) keysFor(engineID []byte) error {
	if v.fixed {
		return v.fixedKeysFor(engineID)
	}
	if v.keyCache == nil {
		return nil
	}
	v.keyMu.Lock()
	defer v.keyMu.Unlock()
	if v.localized[string(engineID)] {
		return nil
	}
	c := &v.cfg
	privPW := c.PrivPassword
	if v.priv == usm.PrivNone {
		privPW = ""
	}
	if !v.template {
		if a, p, ok := v.keyCache.get(engineID, c.User, v.auth, v.priv, c.AuthPassword, privPW); ok {
			u, err := usm.NewLocalizedUser(c.User, engineID, v.auth, a, v.priv, p)
			if err == nil {
				v.users.Add(engineID, u)
				v.localized[string(engineID)] = true
				v.cached[string(engineID)] = true
				return nil
			}
		}
	}
	if err := v.addTemplateLocked(); err != nil {
		return err
	}
	u, _ := v.users.Lookup(nil, []byte(c.User))
	k, err := u.Keys(engineID)
	if err != nil {
		return err
	}
	v.unsaved[string(engineID)] = k
	v.localized[string(engineID)] = true
	return nil
}

// masterKey returns key, or else the master key of password.
func masterKey(a usm.AuthProtocol, key, password []byte) ([]byte, error) {
	if len(key) > 0 {
		return key, nil
	}
	return usm.PasswordToKey(a, password)
}

// fixedKeysFor adds the user for engineID with the localized keys
// configured, localizing the master keys of the other parts.
func (v *v3State) fixedKeysFor(engineID []byte) error {
	v.keyMu.Lock()
	defer v.keyMu.Unlock()
	if v.localized[string(engineID)] {
		return nil
	}
	c := &v.cfg
	authKul := c.AuthLocalKey
	if len(authKul) == 0 {
		k, err := usm.LocalizeKey(v.auth, v.authKu, engineID)
		if err != nil {
			return err
		}
		authKul = k
	}
	var privKul []byte
	if v.priv != usm.PrivNone {
		privKul = c.PrivLocalKey
		if len(privKul) == 0 {
			k, err := usm.LocalizePrivKey(v.auth, v.priv, v.privKu, engineID)
			if err != nil {
				return err
			}
			privKul = k
		} else if len(privKul) > v.priv.KeyLen() {
			privKul = privKul[:v.priv.KeyLen()] // as Net-SNMP uses a longer one
		}
	}
	u, err := usm.NewLocalizedUser(c.User, engineID, v.auth, authKul, v.priv, privKul)
	if err != nil {
		return err
	}
	v.users.Add(engineID, u)
	v.localized[string(engineID)] = true
	return nil
}

// dropCached forgets the cached keys for engineID, which the agent has
// just refused (a damaged or stale cache file), and reports whether there
// were any: the request is then tried again with keys from the passwords.
func (v *v3State) dropCached(engineID []byte) bool {
	if v.keyCache == nil {
		return false
	}
	v.keyMu.Lock()
	defer v.keyMu.Unlock()
	if !v.cached[string(engineID)] {
		return false
	}
	delete(v.cached, string(engineID))
	delete(v.localized, string(engineID))
	v.users.Remove(engineID, v.cfg.User)
	v.keyCache.remove(engineID, v.cfg.User, v.auth, v.priv)
	return true
}

// keysWork caches the keys for engineID, which an authentic response
// has just proved right, if they did not come from the cache.
func (v *v3State) keysWork(engineID []byte) {
	if v.keyCache == nil {
		return
	}
	v.keyMu.Lock()
	k := v.unsaved[string(engineID)]
	delete(v.unsaved, string(engineID))
	v.keyMu.Unlock()
	if k == nil {
		return
	}
	c := &v.cfg
	privPW := c.PrivPassword
	if v.priv == usm.PrivNone {
		privPW = ""
	}
	v.keyCache.put(engineID, c.User, v.auth, v.priv, c.AuthPassword, privPW, k.Auth, k.Priv)
}

// addTemplateLocked adds the password-configured user, once.
func (v *v3State) addTemplateLocked() error {
	if v.template {
		return nil
	}
	c := &v.cfg
	var privPW []byte
	if v.priv != usm.PrivNone {
		privPW = []byte(c.PrivPassword)
	}
	u, err := usm.NewUser(c.User, v.auth, []byte(c.AuthPassword), v.priv, privPW)
	if err != nil {
		return err
	}
	v.users.Add(nil, u)
	v.template = true
	return nil
}

// EngineID returns the authoritative engine ID in use (configured or
// discovered), or nil before discovery and for sessions without USM.
func (s *Session) EngineID() []byte {
	v, ok := s.mp.(*v3State)
	if !ok {
		return nil
	}
	return bytes.Clone(v.engine())
}

func (v *v3State) peek(m []byte) (*received, bool) { return peekV3(m) }

func (v *v3State) engine() []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.engineID
}

// discover learns the agent's snmpEngineID with an unauthenticated probe
// (RFC 3414 section 4): an empty Get answered by a Report. The Report
// also carries the agent's snmpEngineBoots and snmpEngineTime, which the
// first authenticated request uses (usm.USM.SetTimeHint), so that a
// one-shot get takes two round trips, as with Net-SNMP's tools, instead
// of three. They are not authenticated: if they are wrong, the agent
// answers notInTimeWindows with its authentic time, and do resends once.
func (v *v3State) discover(ctx context.Context, s *Session, adaptive bool) ([]byte, error) {
	var found *usm.SecurityParameters
	probe := snmp.ScopedPDU{PDU: snmp.PDU{Type: snmp.GetRequest}}
	err := s.exchange(ctx, adaptive, true, func(id int32) ([]byte, error) {
		probe.PDU.RequestID = id
		hdr := snmp.V3Message{MsgID: id, MaxSize: int32(v.cfg.MaxMsgSize), Flags: snmp.FlagReportable}
		return v.usm.GenerateRequest(nil, &hdr, nil, "", snmp.AppendScopedPDU(nil, &probe))
	}, func(r *received) (bool, error) {
		found = discoveryAnswer(&r.hdr)
		return found != nil, nil
	})
	if err != nil {
		return nil, err
	}
	id := bytes.Clone(found.EngineID)
	logger(v.cfg.Logger).Debug("usm: discovered the agent's engine", "engineID", fmt.Sprintf("%X", id), "boots", found.EngineBoots, "time", found.EngineTime)
	v.usm.SetTimeHint(id, found.EngineBoots, found.EngineTime)
	v.mu.Lock()
	v.engineID = id
	v.mu.Unlock()
	return id, nil
}

// discoveryAnswer returns the security parameters of a received SNMPv3
// message that answers a discovery probe (one naming an authoritative
// engine), or nil.
func discoveryAnswer(hdr *snmp.V3Message) *usm.SecurityParameters {
	if hdr.SecurityModel != snmp.SecurityModelUSM {
		return nil
	}
	var sp usm.SecurityParameters
	if sp.Unmarshal(hdr.SecurityParameters) != nil || len(sp.EngineID) == 0 || len(sp.EngineID) > usm.MaxEngineIDLen {
		return nil
	}
	return &sp
}

// acceptResponse processes a received message through the USM and returns
// its PDU if it answers request reqID sent to engineID (snmp.AcceptReply:
// a Response at the request's security level, or a Report, whatever its
// reportable flag). Anything else yields nil.
func (v *v3State) acceptResponse(r *received, engineID []byte, reqID int32, into *snmp.PDU) *snmp.PDU {
	in, err := v.usm.ProcessIncoming(&r.hdr, r.msg, nil)
	if err != nil {
		logger(v.cfg.Logger).Debug("usm: incoming message dropped", "reason", err)
		return nil // not authentic, not timely or malformed: discard
	}
	if !bytes.Equal(in.SecurityEngineID, engineID) {
		logger(v.cfg.Logger).Debug("usm: message from another engine dropped", "engineID", fmt.Sprintf("%X", in.SecurityEngineID), "want", fmt.Sprintf("%X", engineID))
		// No keys for another engine: a Report from it is dropped, so
		// a wrong -e ends in a timeout as with Net-SNMP.
		return nil
	}
	var sp snmp.ScopedPDU
	reuse(&sp.PDU, into)
	if sp.Unmarshal(in.ScopedPDU) != nil || !snmp.AcceptReply(&sp.PDU, reqID, v.level, in.Level) {
		return nil
	}
	return keep(&sp.PDU, into)
}

func (v *v3State) do(ctx context.Context, s *Session, pdu *snmp.PDU, adaptive bool, into *snmp.PDU) (*snmp.PDU, error) {
	engineID := v.engine()
	var err error
	if engineID == nil {
		if engineID, err = v.discover(ctx, s, adaptive); err != nil {
			return nil, err
		}
	}
	if err := v.keysFor(engineID); err != nil {
		return nil, err
	}
	req := *pdu
	req.RequestID = s.newID()
	// One resynchronisation after notInTimeWindows (the Report carries the
	// agent's boots and time, which ProcessIncoming records).
	for try := 0; ; try++ {
		ctxEngine := v.cfg.ContextEngineID
		if len(ctxEngine) == 0 {
			ctxEngine = engineID
		}
		scoped := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: ctxEngine, ContextName: []byte(v.cfg.ContextName), PDU: req})
		var resp *snmp.PDU
		err = s.exchange(ctx, adaptive, true, func(id int32) ([]byte, error) {
			hdr := snmp.V3Message{MsgID: id, MaxSize: int32(v.cfg.MaxMsgSize), Flags: snmp.LevelFlags(v.level) | snmp.FlagReportable}
			return v.usm.GenerateRequest(nil, &hdr, engineID, v.user, scoped)
		}, func(r *received) (bool, error) {
			resp = v.acceptResponse(r, engineID, req.RequestID, into)
			return resp != nil, nil
		})
		if err != nil {
			return nil, err
		}
		if resp.Type == snmp.Response {
			v.keysWork(engineID)
			return resp, nil
		}
		c, _ := usm.ReportCounter(resp)
		logger(v.cfg.Logger).Debug("usm: report received", "counter", reportName(resp), "try", try)
		if try == 0 && c == usm.NotInTimeWindows {
			continue
		}
		if (c == usm.WrongDigests || c == usm.DecryptionErrors) && v.dropCached(engineID) {
			if err := v.keysFor(engineID); err != nil {
				return nil, err
			}
			continue
		}
		return nil, &ReportError{Counter: c, Report: resp}
	}
}
