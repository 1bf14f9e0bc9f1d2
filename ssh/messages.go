package ssh

import (
	"errors"
	"fmt"
)

// kexInitMsg is SSH_MSG_KEXINIT (RFC 4253 section 7.1).
type kexInitMsg struct {
	Cookie          [16]byte
	KexAlgos        []string
	HostKeyAlgos    []string
	CiphersCS       []string
	CiphersSC       []string
	MACsCS          []string
	MACsSC          []string
	CompCS          []string
	CompSC          []string
	LangCS          []string
	LangSC          []string
	FirstKexFollows bool
	Reserved        uint32
}

func (m *kexInitMsg) marshal() []byte {
	w := newBuilder(msgKexInit)
	w.raw(m.Cookie[:])
	for _, l := range [][]string{m.KexAlgos, m.HostKeyAlgos, m.CiphersCS, m.CiphersSC, m.MACsCS, m.MACsSC, m.CompCS, m.CompSC, m.LangCS, m.LangSC} {
		w.nameList(l)
	}
	w.bool(m.FirstKexFollows).uint32(m.Reserved)
	return w.b
}

func parseKexInit(p []byte) (*kexInitMsg, error) {
	if len(p) == 0 || p[0] != msgKexInit {
		return nil, errors.New("ssh: expected KEXINIT")
	}
	r := reader{b: p[1:]}
	m := &kexInitMsg{}
	copy(m.Cookie[:], r.bytes(16))
	for _, l := range []*[]string{&m.KexAlgos, &m.HostKeyAlgos, &m.CiphersCS, &m.CiphersSC, &m.MACsCS, &m.MACsSC, &m.CompCS, &m.CompSC, &m.LangCS, &m.LangSC} {
		*l = r.nameList()
	}
	m.FirstKexFollows = r.bool()
	m.Reserved = r.uint32()
	if err := r.done(); err != nil {
		return nil, err
	}
	return m, nil
}

// Disconnect reason codes (RFC 4250 section 4.2.2).
const (
	DisconnectProtocolError        = 2
	DisconnectKeyExchangeFailed    = 3
	DisconnectMACError             = 5
	DisconnectServiceNotAvailable  = 7
	DisconnectHostKeyNotVerifiable = 9
	DisconnectByApplication        = 11
	DisconnectTooManyConnections   = 12
	DisconnectAuthCancelledByUser  = 13
	DisconnectNoMoreAuthMethods    = 14
)

// DisconnectError is returned when the peer sends SSH_MSG_DISCONNECT.
type DisconnectError struct {
	Reason  uint32
	Message string
}

func (e *DisconnectError) Error() string {
	return fmt.Sprintf("ssh: disconnected by peer: reason %d: %q", e.Reason, e.Message)
}

func parseDisconnect(p []byte) error {
	r := reader{b: p[1:]}
	reason := r.uint32()
	msg := r.text()
	_ = r.text()
	if r.err != nil {
		return errors.New("ssh: malformed disconnect message")
	}
	return &DisconnectError{Reason: reason, Message: msg}
}

func marshalDisconnect(reason uint32, msg string) []byte {
	return newBuilder(msgDisconnect).uint32(reason).text(msg).text("").b
}

// extInfo parses SSH_MSG_EXT_INFO (RFC 8308) into a name to value map.
func parseExtInfo(p []byte) (map[string]string, error) {
	r := reader{b: p[1:]}
	n := r.uint32()
	if n > 1024 {
		return nil, errors.New("ssh: too many extensions")
	}
	out := make(map[string]string, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := r.text()
		out[name] = r.text()
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return out, nil
}

// Channel message parsing helpers. Each returns the recipient channel and
// the remaining fields of the message.

type channelOpenMsg struct {
	ChanType  string
	SenderID  uint32
	Window    uint32
	MaxPacket uint32
	Extra     []byte
}

func parseChannelOpen(p []byte) (*channelOpenMsg, error) {
	r := reader{b: p[1:]}
	m := &channelOpenMsg{ChanType: r.text(), SenderID: r.uint32(), Window: r.uint32(), MaxPacket: r.uint32()}
	m.Extra = r.b
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

type globalRequestMsg struct {
	Request   string
	WantReply bool
	Extra     []byte
}

func parseGlobalRequest(p []byte) (*globalRequestMsg, error) {
	r := reader{b: p[1:]}
	m := &globalRequestMsg{Request: r.text(), WantReply: r.bool()}
	m.Extra = r.b
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

// userAuthRequestMsg is SSH_MSG_USERAUTH_REQUEST (RFC 4252 section 5).
type userAuthRequestMsg struct {
	User    string
	Service string
	Method  string
	Payload []byte
}

func parseUserAuthRequest(p []byte) (*userAuthRequestMsg, error) {
	if len(p) == 0 || p[0] != msgUserAuthRequest {
		return nil, errors.New("ssh: expected USERAUTH_REQUEST")
	}
	r := reader{b: p[1:]}
	m := &userAuthRequestMsg{User: r.text(), Service: r.text(), Method: r.text()}
	m.Payload = r.b
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

func (m *userAuthRequestMsg) marshal() []byte {
	return newBuilder(msgUserAuthRequest).text(m.User).text(m.Service).text(m.Method).raw(m.Payload).b
}

// publicKeyAuth is the method-specific part of a publickey request.
type publicKeyAuth struct {
	HasSig bool
	Algo   string
	PubKey []byte
	Sig    []byte
}

func parsePublicKeyAuth(payload []byte) (*publicKeyAuth, error) {
	r := reader{b: payload}
	m := &publicKeyAuth{HasSig: r.bool(), Algo: r.text(), PubKey: r.string()}
	if m.HasSig {
		m.Sig = r.string()
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return m, nil
}

func parsePasswordAuth(payload []byte) (string, error) {
	r := reader{b: payload}
	if r.bool() {
		return "", errors.New("ssh: password change not supported")
	}
	pw := r.text()
	if err := r.done(); err != nil {
		return "", err
	}
	return pw, nil
}

func parseUserAuthFailure(p []byte) (methods []string, partial bool, err error) {
	r := reader{b: p[1:]}
	methods = r.nameList()
	partial = r.bool()
	return methods, partial, r.done()
}
