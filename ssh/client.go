package ssh

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyCallback decides whether to trust a server host key. hostname is
// the address passed to Dial; key is in SSH wire format.
type HostKeyCallback func(hostname string, remote net.Addr, key []byte) error

// ClientConfig configures a client connection.
type ClientConfig struct {
	Config

	// User is the user name to authenticate as.
	User string
	// Signers are keys for publickey authentication, tried in order.
	Signers []Signer
	// UseAgent adds the keys of the ssh-agent at $SSH_AUTH_SOCK.
	UseAgent bool
	// Password, if set, is tried after public keys.
	Password string

	// Host key policy: HostKeyCallback if set; otherwise the key must match
	// HostKeyFingerprint (OpenSSH "SHA256:..." format) if set, or an entry
	// in KnownHostsFiles. An unknown key is refused unless
	// InsecureAcceptNew is set, in which case it is accepted and appended to
	// the first known_hosts file. A changed key is always refused.
	HostKeyCallback    HostKeyCallback
	HostKeyFingerprint string
	KnownHostsFiles    []string
	InsecureAcceptNew  bool
	// HostKeyAlgorithms overrides the accepted host key algorithms.
	HostKeyAlgorithms []string
	// InsecureRSA1024 accepts RSA host keys of 1,024 to 2,047 bits, which
	// are otherwise refused. It exists for key-length measurements only.
	InsecureRSA1024 bool

	// Resumption offers session resumption: the client advertises the
	// resumption methods so the server hands out resumption state.
	Resumption bool
	// ResumptionState is state from (*Client).ResumptionState of an earlier
	// connection to the same server. It implies Resumption. If the server
	// refuses it, a full key exchange runs instead.
	ResumptionState []byte

	// Timeout bounds the handshake and authentication (default 30s).
	Timeout time.Duration
	// KeepaliveInterval, if set, sends keepalive@openssh.com requests;
	// the connection is closed after KeepaliveMax (default 3) unanswered.
	KeepaliveInterval time.Duration
	KeepaliveMax      int
}

// Client is an authenticated SSH client connection.
type Client struct {
	t    *transport
	m    *mux
	user string

	mu    sync.Mutex
	state *clientResumeState
}

// AuthError is returned when every authentication method failed.
type AuthError struct {
	Tried     []string
	Remaining []string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("ssh: unable to authenticate, tried %v, server allows %v", e.Tried, e.Remaining)
}

// HostKeyError is returned when the server host key is not trusted.
type HostKeyError struct {
	Fingerprint string
	Reason      string
}

func (e *HostKeyError) Error() string {
	return fmt.Sprintf("ssh: host key %s refused: %s", e.Fingerprint, e.Reason)
}

// Dial connects to addr and runs the SSH handshake and authentication.
func Dial(ctx context.Context, network, addr string, cfg *ClientConfig) (*Client, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cl, err := NewClient(ctx, c, addr, cfg)
	if err != nil {
		c.Close()
		return nil, err
	}
	return cl, nil
}

// NewClient runs the client side of the protocol on an established
// connection. addr names the server for host key checks.
func NewClient(ctx context.Context, c net.Conn, addr string, cfg *ClientConfig) (*Client, error) {
	if cfg.User == "" {
		return nil, errors.New("ssh: ClientConfig.User is empty")
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	common := cfg.Config // the connection keeps its own copy
	t := newTransport(c, &common, true)
	for _, a := range cfg.HostKeyAlgorithms {
		if slices.Contains(defaultHostKeyAlgos, a) {
			t.hostKeyAlgos = append(t.hostKeyAlgos, a)
		}
	}
	if len(t.hostKeyAlgos) == 0 {
		t.hostKeyAlgos = cfg.preferKnownHostAlgos(addr, c.RemoteAddr())
	}
	check, err := cfg.hostKeyPolicy()
	if err != nil {
		return nil, err
	}
	t.checkHostKey = func(_ string, key []byte) error { return check(addr, c.RemoteAddr(), key) }
	if cfg.InsecureRSA1024 {
		t.minRSABits = 1024
	}
	t.resumeWanted = cfg.Resumption
	if len(cfg.ResumptionState) > 0 {
		st, err := parseClientResumeState(cfg.ResumptionState)
		// The state is offered only while it is fresh, for the same user,
		// and while the host key it was made with is still trusted.
		if err == nil && time.Now().Before(st.Expiry) && st.User == cfg.User && check(addr, c.RemoteAddr(), st.HostKey) == nil {
			t.resumeClient = st
		}
		t.resumeWanted = true
	}
	if err := t.handshake(); err != nil {
		_ = t.closeAfter(err, DisconnectKeyExchangeFailed, "")
		return nil, err
	}
	cl := &Client{t: t, user: cfg.User}
	if err := cl.authenticate(ctx, cfg); err != nil {
		_ = t.closeAfter(err, DisconnectAuthCancelledByUser, "")
		return nil, err
	}
	if !stop() {
		// ctx ended while we were finishing; the deadline is poisoned.
		_ = t.close(DisconnectByApplication, "")
		return nil, ctx.Err()
	}
	_ = c.SetDeadline(time.Time{})
	cl.m = newMux(t, true)
	go cl.m.loop()
	if cfg.KeepaliveInterval > 0 {
		max := cfg.KeepaliveMax
		if max <= 0 {
			max = 3
		}
		cl.m.startKeepalive(cfg.KeepaliveInterval, max)
	}
	return cl, nil
}

// preferKnownHostAlgos orders the default host key algorithms so that key
// types already recorded in known_hosts for addr come first; otherwise the
// server could present a different (unknown) key type.
func (cfg *ClientConfig) preferKnownHostAlgos(addr string, remote net.Addr) []string {
	algos := slices.Clone(defaultHostKeyAlgos)
	if cfg.HostKeyCallback != nil || cfg.HostKeyFingerprint != "" {
		return algos
	}
	var files []string
	for _, f := range cfg.KnownHostsFiles {
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return algos
	}
	kh, err := knownhosts.New(files...)
	if err != nil {
		return algos
	}
	probe, err := xssh.NewPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))
	if err != nil {
		return algos
	}
	var ke *knownhosts.KeyError
	if err := kh(addr, remote, probe); !errors.As(err, &ke) {
		return algos
	}
	var known []string
	for _, k := range ke.Want {
		known = append(known, algorithmsForKeyType(k.Key.Type())...)
	}
	if len(known) == 0 {
		return algos
	}
	slices.SortStableFunc(algos, func(a, b string) int {
		ka, kb := slices.Contains(known, a), slices.Contains(known, b)
		switch {
		case ka && !kb:
			return -1
		case kb && !ka:
			return 1
		}
		return 0
	})
	return algos
}

func (cfg *ClientConfig) hostKeyPolicy() (HostKeyCallback, error) {
	if cfg.HostKeyCallback != nil {
		return cfg.HostKeyCallback, nil
	}
	if cfg.HostKeyFingerprint != "" {
		want := cfg.HostKeyFingerprint
		return func(_ string, _ net.Addr, key []byte) error {
			if fp := Fingerprint(key); fp != want {
				return &HostKeyError{Fingerprint: fp, Reason: "does not match pinned fingerprint"}
			}
			return nil
		}, nil
	}
	var files []string
	for _, f := range cfg.KnownHostsFiles {
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	if len(cfg.KnownHostsFiles) == 0 && !cfg.InsecureAcceptNew {
		return nil, errors.New("ssh: no host key policy: set HostKeyCallback, HostKeyFingerprint or KnownHostsFiles")
	}
	var kh xssh.HostKeyCallback
	if len(files) > 0 {
		var err error
		if kh, err = knownhosts.New(files...); err != nil {
			return nil, fmt.Errorf("ssh: reading known_hosts: %w", err)
		}
	}
	return func(hostname string, remote net.Addr, key []byte) error {
		fp := Fingerprint(key)
		pk, err := xssh.ParsePublicKey(key)
		if err != nil {
			return err
		}
		if kh != nil {
			err = kh(hostname, remote, pk)
			if err == nil {
				return nil
			}
			var ke *knownhosts.KeyError
			if !errors.As(err, &ke) {
				return err
			}
			if len(ke.Want) > 0 {
				return &HostKeyError{Fingerprint: fp, Reason: "does not match known_hosts (possible man-in-the-middle)"}
			}
		}
		if !cfg.InsecureAcceptNew {
			return &HostKeyError{Fingerprint: fp, Reason: "unknown host"}
		}
		if len(cfg.KnownHostsFiles) > 0 {
			line := knownhosts.Line([]string{knownhosts.Normalize(hostname)}, pk)
			f, err := os.OpenFile(cfg.KnownHostsFiles[0], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := f.WriteString(line + "\n"); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// authenticate runs the client side of RFC 4252.
func (cl *Client) authenticate(ctx context.Context, cfg *ClientConfig) error {
	t := cl.t
	// The "none" request is pipelined behind the service request, saving a
	// round trip; it succeeds at once for a resumed session.
	none := &userAuthRequestMsg{User: cfg.User, Service: "ssh-connection", Method: "none"}
	if err := t.writePacket(newBuilder(msgServiceRequest).text("ssh-userauth").b); err != nil {
		return err
	}
	if err := t.writePacket(none.marshal()); err != nil {
		return err
	}
	var serverSigAlgs []string
	for {
		p, err := t.readPacket()
		if err != nil {
			return err
		}
		if p[0] == msgExtInfo {
			ext, err := parseExtInfo(p)
			if err != nil {
				return err
			}
			if v, ok := ext["server-sig-algs"]; ok {
				serverSigAlgs = strings.Split(v, ",")
			}
			continue
		}
		r := reader{b: p[1:]}
		if p[0] != msgServiceAccept || r.text() != "ssh-userauth" {
			return errors.New("ssh: server refused ssh-userauth service")
		}
		break
	}

	var tried, remaining []string
	// await reads the answer to req and reports success; a failure records
	// the server's remaining methods.
	await := func(req *userAuthRequestMsg, onPKOK func() ([]byte, error)) (bool, error) {
		for {
			p, err := t.readPacket()
			if err != nil {
				return false, err
			}
			switch p[0] {
			case msgUserAuthSuccess:
				return true, nil
			case msgUserAuthFailure:
				remaining, _, err = parseUserAuthFailure(p)
				return false, err
			case msgUserAuthBanner, msgExtInfo:
				continue
			case msgResumeState:
				cl.storeResumeState(p)
				continue
			case msgUserAuthPubKeyOK:
				if onPKOK == nil {
					return false, errors.New("ssh: unexpected PK_OK")
				}
				signed, err := onPKOK()
				if err != nil {
					return false, err
				}
				onPKOK = nil
				req.Payload = signed
				if err := t.writePacket(req.marshal()); err != nil {
					return false, err
				}
			default:
				return false, fmt.Errorf("ssh: unexpected message %d during authentication", p[0])
			}
		}
	}
	// try sends one request and waits for its answer.
	try := func(method string, payload []byte, onPKOK func() ([]byte, error)) (bool, error) {
		req := &userAuthRequestMsg{User: cfg.User, Service: "ssh-connection", Method: method, Payload: payload}
		if err := t.writePacket(req.marshal()); err != nil {
			return false, err
		}
		return await(req, onPKOK)
	}
	ok, err := await(none, nil)
	if err != nil || ok {
		return err
	}
	tried = append(tried, "none")

	signers := slices.Clone(cfg.Signers)
	if cfg.UseAgent {
		if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
			var d net.Dialer
			if ac, err := d.DialContext(ctx, "unix", sock); err == nil {
				defer ac.Close()
				if xs, err := agent.NewClient(ac).Signers(); err == nil {
					for _, x := range xs {
						if s, err := NewSignerFromX(x); err == nil {
							signers = append(signers, s)
						}
					}
				}
			}
		}
	}
	for _, s := range signers {
		if !slices.Contains(remaining, "publickey") {
			break
		}
		algo := pickSigAlgo(s, serverSigAlgs)
		if algo == "" {
			continue
		}
		pub := s.PublicKey()
		query := (&builder{}).bool(false).text(algo).string(pub).b
		ok, err := try("publickey", query, func() ([]byte, error) {
			sig, err := s.Sign(t.cfg.rand(), publicKeySignedData(t.sessionID, cfg.User, "ssh-connection", algo, pub), algo)
			if err != nil {
				return nil, err
			}
			return (&builder{}).bool(true).text(algo).string(pub).string(sig).b, nil
		})
		if err != nil {
			return err
		}
		tried = append(tried, "publickey")
		if ok {
			return nil
		}
	}
	if cfg.Password != "" && slices.Contains(remaining, "password") {
		ok, err := try("password", (&builder{}).bool(false).text(cfg.Password).b, nil)
		if err != nil {
			return err
		}
		tried = append(tried, "password")
		if ok {
			return nil
		}
	}
	return &AuthError{Tried: tried, Remaining: remaining}
}

func pickSigAlgo(s Signer, serverSigAlgs []string) string {
	for _, a := range s.Algorithms() {
		if serverSigAlgs == nil || slices.Contains(serverSigAlgs, a) {
			return a
		}
	}
	return ""
}

// storeResumeState records the resumption state the server announced.
func (cl *Client) storeResumeState(p []byte) {
	r := reader{b: p[1:]}
	method := r.text()
	exp := time.Unix(int64(r.uint64()), 0)
	ticket := r.string()
	t := cl.t
	if r.done() != nil || t.resumeSecret == nil || !t.resumeWanted || !slices.Contains(t.serverOffersResume, method) {
		return
	}
	st := &clientResumeState{Mode: method, Secret: slices.Clone(t.resumeSecret), Expiry: exp, HostKey: t.hostKey, User: cl.user}
	switch method {
	case KexResumeTicket:
		st.Blob = slices.Clone(ticket)
	case KexResumeServer:
		st.Blob = slices.Clone(t.sessionID)
	}
	if len(st.Blob) == 0 {
		return
	}
	cl.mu.Lock()
	cl.state = st
	cl.mu.Unlock()
}

// ResumptionState returns an opaque blob that lets a later connection to
// the same server resume this session (ClientConfig.ResumptionState), or
// nil if the server offered no resumption. The blob contains a secret:
// store it with mode 0600. Each blob can be used once.
func (cl *Client) ResumptionState() []byte {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.state == nil {
		return nil
	}
	return cl.state.marshal()
}

// Resumed reports whether this connection resumed an earlier session.
func (cl *Client) Resumed() bool { return cl.t.resumed }

// Algorithms returns the algorithms negotiated by the latest key exchange.
func (cl *Client) Algorithms() Algorithms {
	cl.t.mu.Lock()
	defer cl.t.mu.Unlock()
	return cl.t.algs
}

// HostKey returns the server host key in SSH wire format.
func (cl *Client) HostKey() []byte { return slices.Clone(cl.t.hostKey) }

// SessionID returns the session identifier (RFC 4253 section 7.2).
func (cl *Client) SessionID() []byte { return slices.Clone(cl.t.sessionID) }

// Rekey starts a key re-exchange.
func (cl *Client) Rekey() error { return cl.t.requestKex() }

// Subsystem opens a session channel and starts the named subsystem on it
// (RFC 4254 section 6.5), e.g. "snmp" (RFC 5592). The result also
// implements Channel (CloseWrite, RemoteAddr, LocalAddr).
func (cl *Client) Subsystem(name string) (io.ReadWriteCloser, error) {
	ch, err := cl.m.openSession()
	if err != nil {
		return nil, err
	}
	ok, err := ch.request("subsystem", (&builder{}).text(name).b)
	if err != nil {
		ch.Close()
		return nil, err
	}
	if !ok {
		ch.Close()
		return nil, fmt.Errorf("ssh: server refused subsystem %q", name)
	}
	return ch, nil
}

// Wait blocks until the connection ends and returns the reason.
func (cl *Client) Wait() error {
	<-cl.m.done
	return cl.m.closedErr()
}

// Close closes the connection.
func (cl *Client) Close() error {
	err := cl.t.close(DisconnectByApplication, "")
	<-cl.m.done
	return err
}
