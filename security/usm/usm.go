package usm

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/ber"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// TimeWindow is the timeliness window of RFC 3414 2.2.3, in seconds.
const TimeWindow = 150

// maxRemoteEngines bounds the non-authoritative timeliness cache.
const maxRemoteEngines = 4096

// Config configures a USM.
type Config struct {
	// EngineID is the local snmpEngineID (5 to 32 octets).
	EngineID []byte
	// EngineBoots is the local snmpEngineBoots. The caller persists it
	// and increments it on every restart (RFC 3414 2.2.2).
	EngineBoots int32
	// Users is the user table; nil means an empty table.
	Users *UserTable
	// Discovery lets the engine, acting as a non-authoritative engine
	// (command generator, notification receiver), accept messages from
	// authoritative engines it has not seen before and learn their
	// engine IDs (RFC 3414 3.2 step 3 and section 4). Authoritative
	// engines (agents) leave it false.
	Discovery bool
	// Now is the clock; nil means time.Now. It must be monotonic.
	Now func() time.Time
	// Salts generates msgPrivacyParameters; nil means NewSaltSource().
	// Tests that replay recorded exchanges set a zero SaltSource, whose
	// salts are the same on every run.
	Salts *SaltSource
}

// USM is the User-based Security Model of one SNMP engine: it processes
// incoming messages (RFC 3414 3.2) and generates outgoing ones (3.1),
// keeps the usmStats counters, the local notion of time and, for
// non-authoritative use, the notion of time of remote engines. It is safe
// for concurrent use.
type USM struct {
	*engineState
	users *UserTable
}

// engineState is what the USMs of one engine share (WithUsers): all of
// a USM but its users.
type engineState struct {
	engineID  []byte
	discovery bool
	now       func() time.Time
	salts     *SaltSource
	stats     Stats

	mu     sync.Mutex
	boots  int32
	start  time.Time // local time at which snmpEngineTime was 0
	remote map[string]*remoteTime
}

// WithUsers returns a USM of the same engine that authenticates the
// users of t: it shares u's notion of time (local and remote), its
// usmStats counters and its salts, so that an agent can hold a USM per
// policy and replace its users and its access control in one step.
func (u *USM) WithUsers(t *UserTable) *USM {
	return &USM{engineState: u.engineState, users: t}
}

// remoteTime is the local notion of an authoritative engine's time
// (RFC 3414 2.3).
type remoteTime struct {
	boots    int32
	time     int32 // snmpEngineTime at syncedAt
	latest   int32 // latestReceivedEngineTime
	syncedAt time.Time
	// authentic is set once boots and time came from an authentic
	// message. Until then, requests carry the unauthenticated hint, if
	// any (SetTimeHint), which is never used to check a message.
	authentic bool
	hint      *remoteTime
}

// New returns a USM for the local engine described by cfg.
func New(cfg Config) (*USM, error) {
	if n := len(cfg.EngineID); n < 5 || n > MaxEngineIDLen {
		return nil, fmt.Errorf("usm: local engine ID is %d octets, want 5..32", n)
	}
	if cfg.EngineBoots < 0 {
		return nil, errors.New("usm: negative engine boots")
	}
	u := &USM{engineState: &engineState{
		engineID:  bytes.Clone(cfg.EngineID),
		discovery: cfg.Discovery,
		now:       cfg.Now,
		salts:     cfg.Salts,
		boots:     cfg.EngineBoots,
		remote:    make(map[string]*remoteTime),
	}, users: cfg.Users}
	if u.users == nil {
		u.users = NewUserTable()
	}
	if u.salts == nil {
		u.salts = NewSaltSource()
	}
	if u.now == nil {
		u.now = time.Now
	}
	u.start = u.now()
	return u, nil
}

// EngineID returns the local snmpEngineID.
func (u *USM) EngineID() []byte { return bytes.Clone(u.engineID) }

// Users returns the user table.
func (u *USM) Users() *UserTable { return u.users }

// Stats returns the usmStats counters.
func (u *USM) Stats() *Stats { return &u.stats }

// EngineTime returns the local snmpEngineBoots and snmpEngineTime. When
// snmpEngineTime would exceed 2147483647 it restarts at zero and
// snmpEngineBoots is incremented (RFC 3414 2.2.2); boots latches at
// 2147483647.
func (u *USM) EngineTime() (boots, engineTime int32) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.localTimeLocked()
}

func (u *USM) localTimeLocked() (int32, int32) {
	const period = time.Duration(maxInt31+1) * time.Second
	el := u.now().Sub(u.start)
	for el >= period && u.boots < maxInt31 {
		u.boots++
		u.start = u.start.Add(period)
		el -= period
	}
	if el < 0 {
		el = 0
	}
	if el >= period {
		el = period - time.Second
	}
	return u.boots, int32(el / time.Second)
}

// RemoteEngineTime returns the local notion of a remote authoritative
// engine's snmpEngineBoots and snmpEngineTime (RFC 3414 2.3), and whether
// the engine is known.
func (u *USM) RemoteEngineTime(engineID []byte) (boots, engineTime int32, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	r, ok := u.remote[string(engineID)]
	if !ok {
		return 0, 0, false
	}
	b, t := u.remoteNowLocked(r)
	return b, t, true
}

// AddRemoteEngine records a remote authoritative engine as known, with
// boots and time zero unless it is already known. A non-authoritative
// engine without Discovery accepts messages only from known engines.
func (u *USM) AddRemoteEngine(engineID []byte) error {
	if len(engineID) == 0 || len(engineID) > MaxEngineIDLen {
		return fmt.Errorf("usm: engine ID is %d octets", len(engineID))
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.remoteLocked(engineID)
	return nil
}

func (u *USM) remoteLocked(engineID []byte) *remoteTime {
	r, ok := u.remote[string(engineID)]
	if !ok {
		if len(u.remote) >= maxRemoteEngines {
			for k := range u.remote {
				delete(u.remote, k)
				break
			}
		}
		r = &remoteTime{syncedAt: u.now()}
		u.remote[string(engineID)] = r
	}
	return r
}

// SetTimeHint records an authoritative engine's snmpEngineBoots and
// snmpEngineTime as an unauthenticated message (a discovery Report) gave
// them. RFC 3414 section 4 lets a non-authoritative engine synchronise its
// clock with an authenticated request whose notInTimeWindow Report is
// authentic; the hint saves that round trip, as Net-SNMP's tools do:
// GenerateRequest uses it until an authentic message from the engine has
// set the engine's time, and no received message is checked against it. A
// forged hint thus costs at most that notInTimeWindow round trip.
func (u *USM) SetTimeHint(engineID []byte, boots, engineTime int32) {
	if len(engineID) == 0 || len(engineID) > MaxEngineIDLen || boots < 0 || engineTime < 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.remoteLocked(engineID)
	if !r.authentic {
		r.hint = &remoteTime{boots: boots, time: engineTime, syncedAt: u.now()}
	}
}

// remoteSendTimeLocked returns the boots and time to send to the engine
// of r: the authentic notion, else the hint, else zeros.
func (u *USM) remoteSendTimeLocked(r *remoteTime) (int32, int32) {
	if !r.authentic && r.hint != nil {
		return u.remoteNowLocked(r.hint)
	}
	return u.remoteNowLocked(r)
}

func (u *USM) remoteNowLocked(r *remoteTime) (int32, int32) {
	t := int64(r.time) + int64(u.now().Sub(r.syncedAt)/time.Second)
	return r.boots, int32(min(max(t, 0), maxInt31))
}

// StateReference is the securityStateReference of RFC 3414 3.2 step 9:
// the cached security data of a received message, used to generate its
// Response or Report with GenerateResponse.
type StateReference struct {
	engineID []byte
	userName []byte
	level    snmp.SecurityLevel
	auth     AuthProtocol
	priv     PrivProtocol
	keys     *LocalizedKeys
}

// UserName returns the msgUserName of the received message.
func (s *StateReference) UserName() string { return string(s.userName) }

// Level returns the highest security level a reply may use: the level of
// the received message, or the level a Report must use.
func (s *StateReference) Level() snmp.SecurityLevel { return s.level }

// USM implements security.Model.
var _ security.Model = (*USM)(nil)

// fail counts c and returns the error indication calling for a Report at
// level with st.
func (u *USM) fail(c Counter, level snmp.SecurityLevel, st *StateReference, detail string) error {
	se := &StatsError{Counter: c, Value: u.stats.inc(c), Detail: detail}
	re := &security.ReportError{VarBind: se.VarBind(), Level: level, Err: se}
	if st != nil {
		re.State = st
	}
	return re
}

// ProcessIncoming authenticates, checks the timeliness of and decrypts a
// received SNMPv3 message (RFC 3414 3.2, processIncomingMsg). wholeMsg is
// the complete message; msg is its decoded header, decoded from wholeMsg
// itself, or nil to have ProcessIncoming decode it. USM takes nothing from
// the transport's tmStateReference.
//
// The RFC 3414 error indications are returned as *security.ReportError
// wrapping a *StatsError (matching ErrUnknownEngineID, ErrUnknownUserName,
// ErrUnsupportedSecLevel, ErrWrongDigest, ErrNotInTimeWindow,
// ErrDecryption with errors.Is), after incrementing the corresponding
// usmStats counter; its State is a *StateReference, or nil when no Report
// may be sent. Malformed security parameters return an error wrapping
// ErrParse. ProcessIncoming never panics on any input.
func (u *USM) ProcessIncoming(msg *snmp.V3Message, wholeMsg []byte, _ *transport.StateReference) (*security.Incoming, error) {
	if msg == nil {
		msg = new(snmp.V3Message)
		if err := msg.Unmarshal(wholeMsg); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrParse, err)
		}
	} else if !aliases(wholeMsg, msg.SecurityParameters) {
		return nil, errors.New("usm: message header was not decoded from wholeMsg")
	}
	if msg.SecurityModel != snmp.SecurityModelUSM {
		return nil, fmt.Errorf("usm: message uses security model %d", msg.SecurityModel)
	}
	level, ok := snmp.FlagsLevel(msg.Flags)
	if !ok {
		return nil, errors.New("usm: msgFlags request privacy without authentication")
	}
	if len(msg.Data) == 0 {
		return nil, fmt.Errorf("%w: empty msgData", ErrParse)
	}
	in := &security.Incoming{Level: level}
	var params SecurityParameters
	sp := &params
	// Step 1: decode the security parameters.
	if err := sp.Unmarshal(msg.SecurityParameters); err != nil {
		return nil, err
	}
	in.SecurityEngineID = sp.EngineID
	in.SecurityName = string(sp.UserName)
	noAuthState := &StateReference{engineID: sp.EngineID, userName: sp.UserName, level: snmp.NoAuthNoPriv}

	// Step 3: the authoritative engine ID must be known.
	authoritative := bytes.Equal(sp.EngineID, u.engineID)
	if !authoritative {
		if len(sp.EngineID) == 0 || !(u.discovery || u.remoteKnown(sp.EngineID)) {
			return nil, u.fail(UnknownEngineIDs, snmp.NoAuthNoPriv, noAuthState,
				fmt.Sprintf("engine ID %x", sp.EngineID))
		}
	}

	// Step 4: the user must be known. When the local engine is not
	// authoritative, an empty user name at noAuthNoPriv is the anonymous
	// user that discovery Reports are sent to.
	var user *User
	if len(sp.UserName) > 0 || level != snmp.NoAuthNoPriv || authoritative {
		user, ok = u.users.Lookup(sp.EngineID, sp.UserName)
		if !ok {
			return nil, u.fail(UnknownUserNames, snmp.NoAuthNoPriv, noAuthState,
				fmt.Sprintf("user %q", sp.UserName))
		}
		// The securityName is the user's usmUserSecurityName.
		if user.secName != "" {
			in.SecurityName = user.secName
		}
	}

	// Step 5: the user must support the security level.
	if level >= snmp.AuthNoPriv && user.auth == AuthNone ||
		level == snmp.AuthPriv && user.priv == PrivNone {
		return nil, u.fail(UnsupportedSecLevels, snmp.NoAuthNoPriv, noAuthState,
			fmt.Sprintf("user %q does not support %v", sp.UserName, level))
	}

	st := noAuthState
	if level == snmp.NoAuthNoPriv {
		if msg.Data[0] != ber.TagSequence {
			return nil, fmt.Errorf("%w: encryptedPDU in a message without privacy", ErrParse)
		}
		in.ScopedPDU = msg.Data
	} else {
		// Step 6: authenticate. The privacy key, whose extension can be
		// expensive, is derived only for authentic messages.
		keys, err := user.keys(sp.EngineID, false)
		if err != nil {
			return nil, u.fail(UnknownUserNames, snmp.NoAuthNoPriv, noAuthState, err.Error())
		}
		if !verifyInPlace(user.auth, keys, wholeMsg, sp.AuthParams) {
			return nil, u.fail(WrongDigests, snmp.NoAuthNoPriv, noAuthState,
				fmt.Sprintf("user %q", sp.UserName))
		}
		if level == snmp.AuthPriv {
			if keys, err = user.keys(sp.EngineID, true); err != nil {
				return nil, u.fail(UnknownUserNames, snmp.NoAuthNoPriv, noAuthState, err.Error())
			}
		}
		st = &StateReference{engineID: sp.EngineID, userName: sp.UserName, level: level,
			auth: user.auth, priv: user.priv, keys: keys}

		// Step 7: timeliness.
		if authoritative {
			boots, now := u.EngineTime()
			if boots == maxInt31 || sp.EngineBoots != boots || absDiff(sp.EngineTime, now) > TimeWindow {
				authState := *st
				authState.level = snmp.AuthNoPriv
				return nil, u.fail(NotInTimeWindows, snmp.AuthNoPriv, &authState,
					fmt.Sprintf("boots/time %d/%d, local %d/%d", sp.EngineBoots, sp.EngineTime, boots, now))
			}
		} else if !u.checkRemoteTime(sp.EngineID, sp.EngineBoots, sp.EngineTime) {
			// RFC 3414 3.2 step 7b: no counter and no Report.
			se := &StatsError{Counter: NotInTimeWindows, Value: u.stats.Get(NotInTimeWindows),
				Detail: fmt.Sprintf("engine %x boots/time %d/%d", sp.EngineID, sp.EngineBoots, sp.EngineTime)}
			return nil, &security.ReportError{VarBind: se.VarBind(), Level: snmp.AuthNoPriv, Err: se}
		}

		// Step 8: decrypt.
		if level == snmp.AuthPriv {
			pt, detail := decryptScopedPDU(user.priv, keys, sp, msg.Data)
			if detail == notScopedPDU {
				// CFB and CBC "decrypt" under any key; a wrong privacy
				// key shows only as a plaintext that does not parse.
				// Like Net-SNMP, treat it as a parse error (the message
				// processing model counts snmpInASNParseErrs) and send
				// no Report.
				return nil, ErrGarbledPlaintext
			}
			if detail != "" {
				return nil, u.fail(DecryptionErrors, snmp.NoAuthNoPriv, noAuthState, detail)
			}
			in.ScopedPDU = pt
		} else {
			if msg.Data[0] != ber.TagSequence {
				return nil, fmt.Errorf("%w: encryptedPDU in a message without privacy", ErrParse)
			}
			in.ScopedPDU = msg.Data
		}
	}

	// Step 9: the response must fit the sender's msgMaxSize with the
	// largest security parameters we could send and privacy overhead.
	overhead := len(wholeMsg) - len(msg.Data) - len(sp.EngineID) + MaxEngineIDLen + 12
	if level == snmp.AuthPriv {
		overhead += 8 + 6
	}
	in.MaxScopedPDU = max(int(msg.MaxSize)-overhead, 0)
	in.State = st
	return in, nil
}

func absDiff(a, b int32) int64 {
	d := int64(a) - int64(b)
	if d < 0 {
		return -d
	}
	return d
}

func (u *USM) remoteKnown(engineID []byte) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.remote[string(engineID)]
	return ok
}

// checkRemoteTime applies RFC 3414 3.2 step 7b to an authentic message
// from a remote authoritative engine and reports whether it is in the
// time window.
func (u *USM) checkRemoteTime(engineID []byte, boots, engineTime int32) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.remoteLocked(engineID)
	if boots > r.boots || boots == r.boots && engineTime > r.latest || !r.authentic {
		r.boots, r.time, r.latest, r.syncedAt = boots, engineTime, engineTime, u.now()
		r.authentic, r.hint = true, nil
	}
	lb, lt := u.remoteNowLocked(r)
	return lb != maxInt31 && boots >= lb && !(boots == lb && int64(engineTime) < int64(lt)-TimeWindow)
}

// aliases reports whether the non-empty sub is a sub-slice of whole.
func aliases(whole, sub []byte) bool {
	off := cap(whole) - cap(sub)
	return len(sub) > 0 && off >= 0 && off+len(sub) <= len(whole) && &whole[off] == &sub[0]
}

const notScopedPDU = "decrypted data is not a ScopedPDU"

// ErrGarbledPlaintext is returned for an authenticated message whose
// decrypted msgData is not a ScopedPDU: almost always a wrong privacy key.
var ErrGarbledPlaintext = errors.New("usm: " + notScopedPDU + " (wrong privacy key?)")

// zeroMAC stands in for the authentication parameters while a MAC is
// computed; it is never written.
var zeroMAC [maxMACLen]byte

// verifyInPlace checks the MAC of wholeMsg, whose msgAuthenticationParameters
// field is authParams (a sub-slice of wholeMsg), computing the HMAC as if
// that field were zero without modifying wholeMsg.
func verifyInPlace(a AuthProtocol, keys *LocalizedKeys, wholeMsg, authParams []byte) bool {
	n := a.MACLen()
	if len(authParams) != n || len(keys.Auth) != a.DigestLen() {
		return false
	}
	if !aliases(wholeMsg, authParams) {
		return false
	}
	off := cap(wholeMsg) - cap(authParams)
	return keys.verify(a, authParams, wholeMsg[:off], zeroMAC[:n], wholeMsg[off+n:])
}

// decryptScopedPDU decrypts an encryptedPDU TLV and returns the ScopedPDU
// TLV it holds, or a non-empty reason for a decryption error.
func decryptScopedPDU(p PrivProtocol, keys *LocalizedKeys, sp *SecurityParameters, data []byte) ([]byte, string) {
	r := ber.Reader(data)
	ct, err := r.Read(ber.TagOctetString)
	if err != nil {
		return nil, "msgData is not an encryptedPDU"
	}
	pt, err := keys.decrypt(p, uint32(sp.EngineBoots), uint32(sp.EngineTime), sp.PrivParams, ct)
	if err != nil {
		return nil, err.Error()
	}
	// A wrong key yields garbage; require a well-formed ScopedPDU TLV and
	// drop DES padding.
	pr := ber.Reader(pt)
	tag, _, err := pr.ReadTLV()
	if err != nil || tag != ber.TagSequence {
		return nil, notScopedPDU
	}
	return pt[:len(pt)-len(pr)], ""
}

// GenerateRequest builds an outgoing request or notification
// (RFC 3414 3.1, generateRequestMsg) and appends the whole message to b.
// hdr supplies msgID, msgMaxSize and msgFlags (whose auth/priv bits give
// the security level); msgSecurityModel is set to USM. engineID is the
// authoritative engine (the agent for requests, the local engine for
// traps); an empty engineID with an empty userName at noAuthNoPriv builds
// a discovery probe. scopedPDU is the encoded plaintext ScopedPDU.
func (u *USM) GenerateRequest(b []byte, hdr *snmp.V3Message, engineID []byte, userName string, scopedPDU []byte) ([]byte, error) {
	level, ok := snmp.FlagsLevel(hdr.Flags)
	if !ok {
		return nil, errors.New("usm: msgFlags request privacy without authentication")
	}
	if len(userName) > MaxUserNameLen || len(engineID) > MaxEngineIDLen {
		return nil, errors.New("usm: user name or engine ID too long")
	}
	var boots, etime int32
	if bytes.Equal(engineID, u.engineID) {
		boots, etime = u.EngineTime()
	} else {
		u.mu.Lock()
		if r, ok := u.remote[string(engineID)]; ok {
			boots, etime = u.remoteSendTimeLocked(r)
		}
		u.mu.Unlock()
	}
	st := &StateReference{engineID: engineID, userName: []byte(userName), level: snmp.NoAuthNoPriv}
	if userName != "" || level != snmp.NoAuthNoPriv {
		// userName is the securityName of the request (RFC 3414 §3.1
		// step 1b); the message carries the user's name.
		user, ok := u.users.LookupSecurityName(engineID, userName)
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownUserName, userName)
		}
		st.userName = []byte(user.name)
		if level >= snmp.AuthNoPriv {
			if user.auth == AuthNone || level == snmp.AuthPriv && user.priv == PrivNone {
				return nil, fmt.Errorf("%w: user %q at %v", ErrUnsupportedSecLevel, userName, level)
			}
			keys, err := user.keys(engineID, level == snmp.AuthPriv)
			if err != nil {
				return nil, err
			}
			st.auth, st.priv, st.keys, st.level = user.auth, user.priv, keys, level
		}
	}
	return u.build(b, hdr, st, level, boots, etime, scopedPDU)
}

// GenerateResponse builds a Response or Report to a message received by
// ProcessIncoming (RFC 3414 3.1, generateResponseMsg) and appends it to b.
// state is the *StateReference of Incoming.State or ReportError.State;
// hdr's msgFlags give the security level, which must not exceed
// state.Level(). The local engine is authoritative: the local engine ID,
// boots and time are sent.
func (u *USM) GenerateResponse(b []byte, hdr *snmp.V3Message, state any, scopedPDU []byte) ([]byte, error) {
	ref, _ := state.(*StateReference)
	if ref == nil {
		return nil, errors.New("usm: no security state for response")
	}
	level, ok := snmp.FlagsLevel(hdr.Flags)
	if !ok {
		return nil, errors.New("usm: msgFlags request privacy without authentication")
	}
	if level > ref.level {
		return nil, fmt.Errorf("%w: response at %v, state allows %v", ErrUnsupportedSecLevel, level, ref.level)
	}
	st := *ref
	if level >= snmp.AuthNoPriv && !bytes.Equal(st.engineID, u.engineID) {
		return nil, errors.New("usm: authenticated response keys are not localized to the local engine")
	}
	st.engineID = u.engineID
	boots, etime := u.EngineTime()
	return u.build(b, hdr, &st, level, boots, etime, scopedPDU)
}

func (u *USM) build(b []byte, hdr *snmp.V3Message, st *StateReference, level snmp.SecurityLevel, boots, etime int32, scopedPDU []byte) ([]byte, error) {
	start := len(b)
	sp := SecurityParameters{EngineID: st.engineID, EngineBoots: boots, EngineTime: etime, UserName: st.userName}
	var zero [maxMACLen]byte
	if level >= snmp.AuthNoPriv {
		sp.AuthParams = zero[:st.auth.MACLen()]
	}
	data := scopedPDU
	dataTag := byte(0)
	if level == snmp.AuthPriv {
		localBoots, _ := u.EngineTime()
		salt := u.salts.Next(st.priv, uint32(localBoots))
		ct, err := st.keys.encrypt(st.priv, uint32(boots), uint32(etime), salt[:], scopedPDU)
		if err != nil {
			return nil, err
		}
		data, dataTag = ct, ber.TagOctetString
		sp.PrivParams = salt[:]
	}
	var pbuf [256]byte
	params, authOff := AppendSecurityParameters(pbuf[:0], &sp)
	h := snmp.V3Message{MsgID: hdr.MsgID, MaxSize: hdr.MaxSize, Flags: hdr.Flags,
		SecurityModel: snmp.SecurityModelUSM, SecurityParameters: params}
	out, secOff := snmp.AppendV3(b, &h, func(b []byte) []byte {
		if dataTag == 0 {
			return append(b, data...)
		}
		return ber.AppendBytes(b, dataTag, data)
	})
	if level >= snmp.AuthNoPriv {
		copy(out[secOff+authOff:], st.keys.mac(st.auth, zero[:0], out[start:]))
	}
	return out, nil
}
