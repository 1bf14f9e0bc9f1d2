package ssh

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Key exchange method names.
const (
	KexMLKEM768X25519   = "mlkem768x25519-sha256"
	KexCurve25519       = "curve25519-sha256"
	KexCurve25519LibSSH = "curve25519-sha256@libssh.org"
	KexECDHP256         = "ecdh-sha2-nistp256"
	KexDHGroup14SHA256  = "diffie-hellman-group14-sha256"
	// KexResumeServer and KexResumeTicket are tsnmp's session resumption
	// methods (docs/ssh-resumption.md).
	KexResumeServer = "resume-server@tsnmp.dev"
	KexResumeTicket = "resume-ticket@tsnmp.dev"

	extInfoClient   = "ext-info-c"
	strictKexC      = "kex-strict-c-v00@openssh.com"
	strictKexS      = "kex-strict-s-v00@openssh.com"
	compressionNone = "none"
)

var defaultKexAlgos = []string{KexMLKEM768X25519, KexCurve25519, KexCurve25519LibSSH, KexECDHP256, KexDHGroup14SHA256}

func isResumeKex(name string) bool { return name == KexResumeServer || name == KexResumeTicket }

// Config holds settings shared by clients and servers.
type Config struct {
	// Rand is the source of randomness; crypto/rand.Reader if nil.
	Rand io.Reader
	// KeyExchanges, Ciphers and MACs override the default algorithm lists,
	// in order of preference.
	KeyExchanges []string
	Ciphers      []string
	MACs         []string
	// AllowNone permits the "none" cipher and MAC when they are also listed
	// explicitly in Ciphers and MACs. Never enable outside benchmarks.
	AllowNone bool
	// RekeyBytes starts a new key exchange after this many bytes in either
	// direction (default 1 GiB). RekeyInterval does so after this much time
	// (default 1 hour).
	RekeyBytes    uint64
	RekeyInterval time.Duration
}

func (c *Config) rand() io.Reader {
	if c.Rand != nil {
		return c.Rand
	}
	return rand.Reader
}

func (c *Config) rekeyBytes() uint64 {
	if c.RekeyBytes > 0 {
		return c.RekeyBytes
	}
	return 1 << 30
}

func (c *Config) rekeyInterval() time.Duration {
	if c.RekeyInterval > 0 {
		return c.RekeyInterval
	}
	return time.Hour
}

// filterAlgos returns the configured list (or defaults) restricted to
// names in supported; "none" survives only when allowNone is set.
func filterAlgos(configured, defaults []string, supported func(string) bool, allowNone bool) []string {
	src := configured
	if len(src) == 0 {
		src = defaults
	}
	var out []string
	for _, a := range src {
		if a == "none" && !allowNone {
			continue
		}
		if supported(a) && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

func (c *Config) ciphers() []string {
	return filterAlgos(c.Ciphers, defaultCiphers, func(s string) bool { return cipherModes[s] != nil }, c.AllowNone)
}

func (c *Config) macs() []string {
	return filterAlgos(c.MACs, defaultMACs, func(s string) bool { return macModes[s] != nil }, c.AllowNone)
}

func (c *Config) kexAlgos() []string {
	return filterAlgos(c.KeyExchanges, defaultKexAlgos, func(s string) bool { return kexAlgorithms[s] != nil && !isResumeKex(s) }, false)
}

// Algorithms records the algorithms negotiated by a key exchange.
type Algorithms struct {
	Kex      string
	HostKey  string
	CipherCS string
	CipherSC string
	MACCS    string
	MACSC    string
}

// transport is the keying layer: it runs the initial key exchange and any
// later re-exchange, and queues outgoing packets while one is in progress.
type transport struct {
	pc       *packetConn
	conn     net.Conn
	isClient bool
	cfg      *Config
	vc, vs   []byte

	// Role specific hooks.
	hostKeys     []Signer                            // server
	hostKeyAlgos []string                            // client preference
	checkHostKey func(algo string, key []byte) error // client
	minRSABits   int                                 // client: smallest RSA host key accepted (0: minRSABits)
	resumeClient *clientResumeState                  // client: state offered for resumption
	resumeServer *resumption                         // server: resumption engine
	resumeWanted bool                                // client: resumption enabled

	sessionID          []byte
	strict             bool
	extInfoPeer        bool // client sent ext-info-c (server side)
	algs               Algorithms
	hostKey            []byte    // host key seen in the first key exchange
	resumeSecret       []byte    // per-session resumption master secret
	resumedUser        string    // server: identity carried by a resumed session
	resumeDeadline     time.Time // server: expiry inherited by a resumed session
	resumed            bool
	serverOffersResume []string // client: resume methods the server listed
	peerResume         []string // server: resume methods the client listed

	mu         sync.Mutex
	kexDone    *sync.Cond // signalled when a key exchange ends or the transport fails
	kexPending bool
	myInit     []byte
	queue      [][]byte
	closed     bool
	writeErr   error
	lastKex    time.Time
	kexCount   int

	unimplementedSeq atomic.Int64 // sequence number in the last UNIMPLEMENTED received
}

func newTransport(conn net.Conn, cfg *Config, isClient bool) *transport {
	t := &transport{pc: newPacketConn(conn, cfg.rand()), conn: conn, cfg: cfg, isClient: isClient}
	t.kexDone = sync.NewCond(&t.mu)
	return t
}

// handshake exchanges versions and runs the first key exchange.
func (t *transport) handshake() error {
	ours, theirs, err := exchangeVersions(t.pc, t.isClient)
	if err != nil {
		return err
	}
	if t.isClient {
		t.vc, t.vs = ours, theirs
	} else {
		t.vc, t.vs = theirs, ours
	}
	t.mu.Lock()
	err = t.startKexLocked()
	t.mu.Unlock()
	if err != nil {
		return err
	}
	for {
		p, err := t.pc.readPacket()
		if err != nil {
			return err
		}
		switch p[0] {
		case msgKexInit:
			// runKex rejects packets before KEXINIT under strict kex.
			return t.runKex(p)
		case msgIgnore, msgDebug:
			continue
		case msgDisconnect:
			return parseDisconnect(p)
		}
		return fmt.Errorf("ssh: unexpected message %d before key exchange", p[0])
	}
}

// localKexInit builds our KEXINIT for the current state.
func (t *transport) localKexInit() (*kexInitMsg, error) {
	m := &kexInitMsg{}
	if _, err := io.ReadFull(t.cfg.rand(), m.Cookie[:]); err != nil {
		return nil, err
	}
	first := t.sessionID == nil
	kex := t.cfg.kexAlgos()
	if t.isClient {
		if first {
			kex = t.clientResumeKex(kex)
			kex = append(kex, extInfoClient, strictKexC)
		}
		m.HostKeyAlgos = t.hostKeyAlgos
	} else {
		if first && t.resumeServer != nil {
			kex = append(t.resumeServer.methods(), kex...)
		}
		if first {
			kex = append(kex, strictKexS)
		}
		for _, k := range t.hostKeys {
			for _, a := range k.Algorithms() {
				if !slices.Contains(m.HostKeyAlgos, a) {
					m.HostKeyAlgos = append(m.HostKeyAlgos, a)
				}
			}
		}
	}
	m.KexAlgos = kex
	m.CiphersCS, m.CiphersSC = t.cfg.ciphers(), t.cfg.ciphers()
	m.MACsCS, m.MACsSC = t.cfg.macs(), t.cfg.macs()
	m.CompCS, m.CompSC = []string{compressionNone}, []string{compressionNone}
	return m, nil
}

// clientResumeKex puts the resumption method for which the client holds
// state first; the other resumption methods go last to tell the server that
// the client can use tickets and cached sessions later.
func (t *transport) clientResumeKex(kex []string) []string {
	if t.resumeClient == nil && !t.cfgResumeEnabled() {
		return kex
	}
	var head, tail []string
	if st := t.resumeClient; st != nil {
		head = append(head, st.method())
	}
	for _, m := range []string{KexResumeTicket, KexResumeServer} {
		if !slices.Contains(head, m) {
			tail = append(tail, m)
		}
	}
	out := append(head, kex...)
	return append(out, tail...)
}

func (t *transport) cfgResumeEnabled() bool { return t.resumeClient != nil || t.resumeWanted }

func (t *transport) startKexLocked() error {
	if t.kexPending {
		return nil
	}
	m, err := t.localKexInit()
	if err != nil {
		return err
	}
	p := m.marshal()
	if err := t.pc.writePacket(p); err != nil {
		t.writeErr = err
		return err
	}
	t.kexPending = true
	t.myInit = p
	return nil
}

// requestKex starts a key re-exchange unless one is already running.
func (t *transport) requestKex() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.writeErr != nil {
		return t.writeErr
	}
	return t.startKexLocked()
}

// writePacket sends an upper-layer packet, queueing it while a key
// exchange is in progress. It never blocks on a key exchange, so the
// reading goroutine may use it.
func (t *transport) writePacket(p []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.writeLocked(p)
}

// writeData is writePacket for bulk data from application goroutines: it
// waits for a running key exchange to finish instead of queueing.
func (t *transport) writeData(p []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.kexPending && !t.closed && t.writeErr == nil {
		t.kexDone.Wait()
	}
	return t.writeLocked(p)
}

func (t *transport) writeLocked(p []byte) error {
	if t.writeErr != nil {
		return t.writeErr
	}
	if t.closed {
		return net.ErrClosed
	}
	if t.kexPending {
		t.queue = append(t.queue, slices.Clone(p))
		return nil
	}
	if err := t.pc.writePacket(p); err != nil {
		t.writeErr = err
		return err
	}
	if t.needRekeyLocked() {
		return t.startKexLocked()
	}
	return nil
}

func (t *transport) needRekeyLocked() bool {
	lim := t.cfg.rekeyBytes()
	const maxPackets = 1 << 31
	return t.pc.writeBytes >= lim || t.pc.readBytes.Load() >= lim ||
		t.pc.writePackets >= maxPackets || t.pc.readPackets.Load() >= maxPackets ||
		time.Since(t.lastKex) >= t.cfg.rekeyInterval()
}

// writeKexPacket writes a key exchange packet, bypassing the queue.
func (t *transport) writeKexPacket(p []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.writeErr != nil {
		return t.writeErr
	}
	if err := t.pc.writePacket(p); err != nil {
		t.writeErr = err
		return err
	}
	return nil
}

// readPacket returns the next upper-layer packet, running key exchanges
// started by either side as they occur. Only one goroutine may call it.
func (t *transport) readPacket() ([]byte, error) {
	for {
		p, err := t.readMessage()
		if p != nil || err != nil {
			return p, err
		}
	}
}

// readMessage reads one packet. An upper-layer packet it returns; a
// message of the transport layer (a key exchange the peer starts, which
// it runs to its end, IGNORE, DEBUG, UNIMPLEMENTED) it handles and
// returns nil for. A caller that parks idle connections (mux.loop) thus
// gets the wait for the packet after it back: a connection woken by the
// peer's periodic re-exchange parks again, instead of waiting on its
// goroutine for the next channel message. Only one goroutine may call
// it.
func (t *transport) readMessage() ([]byte, error) {
	p, err := t.pc.readPacket()
	if err != nil {
		return nil, err
	}
	switch p[0] {
	case msgKexInit:
		return nil, t.runKex(p)
	case msgIgnore, msgDebug:
		return nil, nil
	case msgUnimplemented:
		r := reader{b: p[1:]}
		t.unimplementedSeq.Store(int64(r.uint32()))
		return nil, nil
	case msgDisconnect:
		return nil, parseDisconnect(p)
	}
	if p[0] >= msgKexInit && p[0] < msgUserAuthRequest {
		return nil, fmt.Errorf("ssh: unexpected key exchange message %d", p[0])
	}
	t.mu.Lock()
	var kerr error
	if !t.kexPending && t.needRekeyLocked() {
		kerr = t.startKexLocked()
	}
	t.mu.Unlock()
	if kerr != nil {
		return nil, kerr
	}
	return p, nil
}

// closeAfter closes the connection that err ended: with a disconnect
// message of reason (best effort), unless err is the peer's own
// DISCONNECT. The peer accepts no data after it (RFC 4253 section 11.1);
// a reply would only cost a packet, and draw a TCP reset from a peer that
// has closed its socket.
func (t *transport) closeAfter(err error, reason uint32, msg string) error {
	if _, ok := errors.AsType[*DisconnectError](err); ok {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
	}
	return t.close(reason, msg)
}

// close sends a disconnect message (best effort) and closes the socket.
func (t *transport) close(reason uint32, msg string) error {
	// Bound the time a writer stuck on a full socket can hold the lock.
	_ = t.conn.SetWriteDeadline(time.Now().Add(time.Second))
	t.mu.Lock()
	if !t.closed && t.writeErr == nil && !t.kexPending {
		_ = t.pc.writePacket(marshalDisconnect(reason, msg))
	}
	t.closed = true
	t.kexDone.Broadcast()
	wipeBytes(t.resumeSecret)
	t.pc.writeC.wipe()
	t.pc.writeC = closedCipher{}
	t.mu.Unlock()
	// The reading side closes the socket too when the peer ends the
	// connection, which it may do as soon as it reads our DISCONNECT:
	// a socket already closed is what close is for, not an error.
	if err := t.conn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// releaseScratch drops the packet buffers the ciphers keep between
// packets; only the reading goroutine calls it, with no packet in use.
func (t *transport) releaseScratch() {
	if r, ok := t.pc.readC.(bufReleaser); ok {
		r.releaseBuf()
	}
	t.mu.Lock()
	if r, ok := t.pc.writeC.(bufReleaser); ok {
		r.releaseBuf()
	}
	t.mu.Unlock()
}

// wipeRead erases the read keys; only the reading goroutine calls it, after
// its last read.
func (t *transport) wipeRead() {
	t.pc.readC.wipe()
	t.pc.readC = closedCipher{}
}

// negotiate picks the first client algorithm the server also supports.
// The name is copied: the lists hold substrings of the peer's KEXINIT
// name-lists, which a connection should not keep for its lifetime.
func negotiate(client, server []string) (string, bool) {
	for _, c := range client {
		if slices.Contains(server, c) {
			return strings.Clone(c), true
		}
	}
	return "", false
}

func (t *transport) runKex(peerInit []byte) error {
	peerInit = slices.Clone(peerInit) // packets alias the read buffer
	first := t.sessionID == nil
	t.mu.Lock()
	err := t.startKexLocked()
	myInit := t.myInit
	t.mu.Unlock()
	if err != nil {
		return err
	}
	peer, err := parseKexInit(peerInit)
	if err != nil {
		return err
	}
	mine, err := parseKexInit(myInit)
	if err != nil {
		return err
	}
	cli, srv := mine, peer
	ic, is := myInit, peerInit
	if !t.isClient {
		cli, srv = peer, mine
		ic, is = peerInit, myInit
	}
	if first {
		if t.isClient {
			t.strict = slices.Contains(srv.KexAlgos, strictKexS)
			for _, m := range srv.KexAlgos {
				if isResumeKex(m) {
					t.serverOffersResume = append(t.serverOffersResume, strings.Clone(m))
				}
			}
		} else {
			t.strict = slices.Contains(cli.KexAlgos, strictKexC)
			t.extInfoPeer = slices.Contains(cli.KexAlgos, extInfoClient)
			for _, m := range cli.KexAlgos {
				if isResumeKex(m) {
					t.peerResume = append(t.peerResume, strings.Clone(m))
				}
			}
		}
		if t.strict && t.pc.readSeq != 1 {
			// Terrapin countermeasure: nothing may precede KEXINIT.
			return errors.New("ssh: strict key exchange violated: KEXINIT was not the first packet")
		}
	}
	algs, err := negotiateAlgorithms(cli, srv)
	if err != nil {
		return err
	}
	// A wrongly guessed first key exchange packet is ignored (RFC 4253 section 7).
	if peer.FirstKexFollows && (peer.KexAlgos[0] != algs.Kex || peer.HostKeyAlgos[0] != algs.HostKey) {
		if _, err := t.readKexPacket(); err != nil {
			return err
		}
	}
	magics := make([]byte, 0, 1024)
	for _, m := range [][]byte{t.vc, t.vs, ic, is} {
		magics = appendString(magics, m)
	}
	run := &kexRun{t: t, magics: magics, hostKeyAlgo: algs.HostKey, first: first}
	res, err := kexAlgorithms[algs.Kex].run(run)
	if errors.Is(err, errResumeFallback) {
		// Resumption failed: both sides drop the resumption methods and
		// negotiate again from the same KEXINIT lists.
		drop := func(l []string) []string {
			return slices.DeleteFunc(slices.Clone(l), isResumeKex)
		}
		kex, ok := negotiate(drop(cli.KexAlgos), drop(srv.KexAlgos))
		if !ok || kexAlgorithms[kex] == nil {
			return errors.New("ssh: no common key exchange method after resumption failed")
		}
		algs.Kex = kex
		res, err = kexAlgorithms[kex].run(run)
	}
	if err != nil {
		return err
	}
	defer wipeBytes(res.K)
	if first {
		t.sessionID = res.H
		t.hostKey = res.hostKey
		if !res.resumed {
			t.resumeSecret = deriveResumeSecret(res.K, res.H)
		} else {
			t.resumed = true
			t.resumeSecret = res.newResumeSecret
		}
	}
	t.mu.Lock()
	t.algs = algs
	t.mu.Unlock()
	return t.switchKeys(res, algs, first)
}

// switchKeys exchanges NEWKEYS and installs the new ciphers.
func (t *transport) switchKeys(res *kexResult, algs Algorithms, first bool) error {
	csC, err := t.newCipher(res, algs.CipherCS, algs.MACCS, 'A', 'C', 'E')
	if err != nil {
		return err
	}
	scC, err := t.newCipher(res, algs.CipherSC, algs.MACSC, 'B', 'D', 'F')
	if err != nil {
		return err
	}
	writeC, readC := csC, scC
	if !t.isClient {
		writeC, readC = scC, csC
	}
	t.mu.Lock()
	err = t.pc.writePacket([]byte{msgNewKeys})
	if err == nil {
		t.pc.writeC.wipe()
		t.pc.writeC = writeC
		if t.strict {
			t.pc.writeSeq = 0
		}
		if first && !t.isClient && t.extInfoPeer {
			err = t.pc.writePacket(t.extInfoMsg())
		}
	}
	if err != nil {
		t.writeErr = err
	}
	t.mu.Unlock()
	if err != nil {
		return err
	}
	p, err := t.readKexPacket()
	if err != nil {
		return err
	}
	if p[0] != msgNewKeys || len(p) != 1 {
		return fmt.Errorf("ssh: expected NEWKEYS, got message %d", p[0])
	}
	t.pc.readC.wipe()
	t.pc.readC = readC
	if t.strict {
		t.pc.readSeq = 0
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	t.kexPending = false
	t.myInit = nil
	t.pc.readBytes.Store(0)
	t.pc.writeBytes = 0
	t.pc.readPackets.Store(0)
	t.pc.writePackets = 0
	t.lastKex = time.Now()
	t.kexCount++
	t.kexDone.Broadcast()
	q := t.queue
	t.queue = nil
	for _, p := range q {
		if err := t.pc.writePacket(p); err != nil {
			t.writeErr = err
			return err
		}
	}
	return nil
}

func (t *transport) extInfoMsg() []byte {
	return newBuilder(msgExtInfo).uint32(1).text("server-sig-algs").nameList(defaultHostKeyAlgos).b
}

func (t *transport) newCipher(res *kexResult, cipherName, macName string, ivTag, keyTag, macTag byte) (packetCipher, error) {
	cm := cipherModes[cipherName]
	var mm *macMode
	var macKey []byte
	if !cm.aead {
		mm = macModes[macName]
		macKey = deriveKey(res.K, res.H, t.sessionID, macTag, mm.keySize)
	}
	iv := deriveKey(res.K, res.H, t.sessionID, ivTag, cm.ivSize)
	key := deriveKey(res.K, res.H, t.sessionID, keyTag, cm.keySize)
	defer wipeBytes(key)
	defer wipeBytes(iv)
	return cm.create(key, iv, mm, macKey)
}

// deriveKey implements RFC 4253 section 7.2 with SHA-256 (the hash of every
// key exchange method tsnmp implements). k is the encoded mpint K.
func deriveKey(k, h, sessionID []byte, tag byte, n int) []byte {
	if n == 0 {
		return nil
	}
	out := make([]byte, 0, n+sha256.Size)
	d := sha256.New()
	d.Write(k)
	d.Write(h)
	d.Write([]byte{tag})
	d.Write(sessionID)
	out = d.Sum(out)
	for len(out) < n {
		d.Reset()
		d.Write(k)
		d.Write(h)
		d.Write(out)
		out = d.Sum(out)
	}
	res := make([]byte, n)
	copy(res, out)
	wipeBytes(out)
	return res
}

// readKexPacket reads a packet during key exchange. IGNORE and DEBUG are
// skipped except in a strict initial exchange; anything other than a key
// exchange message is an error.
func (t *transport) readKexPacket() ([]byte, error) {
	for {
		p, err := t.pc.readPacket()
		if err != nil {
			return nil, err
		}
		switch {
		case p[0] == msgDisconnect:
			return nil, parseDisconnect(p)
		case (p[0] == msgIgnore || p[0] == msgDebug || p[0] == msgUnimplemented) && !(t.strict && t.sessionID == nil):
			continue
		case p[0] == msgNewKeys || (p[0] >= 30 && p[0] <= 49):
			return p, nil
		}
		return nil, fmt.Errorf("ssh: unexpected message %d during key exchange", p[0])
	}
}

func negotiateAlgorithms(cli, srv *kexInitMsg) (Algorithms, error) {
	var a Algorithms
	var ok bool
	fail := func(what string) (Algorithms, error) {
		return Algorithms{}, fmt.Errorf("ssh: no common %s algorithm", what)
	}
	if a.Kex, ok = negotiate(cli.KexAlgos, srv.KexAlgos); !ok || kexAlgorithms[a.Kex] == nil {
		return fail("key exchange")
	}
	if a.HostKey, ok = negotiate(cli.HostKeyAlgos, srv.HostKeyAlgos); !ok {
		return fail("host key")
	}
	if a.CipherCS, ok = negotiate(cli.CiphersCS, srv.CiphersCS); !ok || cipherModes[a.CipherCS] == nil {
		return fail("client to server cipher")
	}
	if a.CipherSC, ok = negotiate(cli.CiphersSC, srv.CiphersSC); !ok || cipherModes[a.CipherSC] == nil {
		return fail("server to client cipher")
	}
	if !cipherModes[a.CipherCS].aead {
		if a.MACCS, ok = negotiate(cli.MACsCS, srv.MACsCS); !ok || macModes[a.MACCS] == nil {
			return fail("client to server MAC")
		}
	}
	if !cipherModes[a.CipherSC].aead {
		if a.MACSC, ok = negotiate(cli.MACsSC, srv.MACsSC); !ok || macModes[a.MACSC] == nil {
			return fail("server to client MAC")
		}
	}
	if _, ok = negotiate(cli.CompCS, srv.CompCS); !ok {
		return fail("compression")
	}
	if _, ok = negotiate(cli.CompSC, srv.CompSC); !ok {
		return fail("compression")
	}
	return a, nil
}

func (t *transport) peerOffersResume(m string) bool { return slices.Contains(t.peerResume, m) }

// lastReadSeq is the sequence number of the packet read last; only the
// reading goroutine calls it.
func (t *transport) lastReadSeq() uint32 { return t.pc.readSeq - 1 }
