package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/notify"
	tssh "github.com/tsnmp/tsnmp/ssh"
	"github.com/tsnmp/tsnmp/transport"
	"github.com/tsnmp/tsnmp/transport/dtls"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// trapdListeners are tsnmp trapd's open listen addresses. At start and at
// every reload, prepare opens the addresses the configuration adds and
// checks the TLS, DTLS and SSH settings of those it keeps; commit then
// starts the new ones, installs the new settings in the kept ones (new
// sessions use them, open sessions go on) and closes the addresses the
// configuration no longer names. If prepare fails, nothing has changed.
//
// The addresses a reload removes are closed off the main loop, each on a
// goroutine of its own: a udp: one is drained first (the datagrams the
// kernel had queued are received), and each is waited for until what it
// was handling has been handed to the receiver. Meanwhile trapd goes on
// acting on signals; a stop cuts the drains short.
type trapdListeners struct {
	h        transport.Handler
	log      *slog.Logger
	stateDir string
	wg       sync.WaitGroup
	list     []*trapdListener
	// closing are the listeners a reload removed that are still closing;
	// closers counts their goroutines.
	closeMu sync.Mutex
	closing []*trapdListener
	closers sync.WaitGroup
	// ssh is the SSH configuration in force: the senders' authorized
	// keys are looked up in it at every login.
	ssh atomic.Pointer[config.SSH]
	// sshID identifies the SSH server settings and host keys the ssh:
	// listeners run with, sshCfg; sshOpts are their limits.
	sshID   string
	sshCfg  *sshtm.ServerConfig
	sshOpts *sshtm.Options
}

// trapdListener is one open listen address.
type trapdListener struct {
	spec string // as configured
	key  string // the parsed address: what identifies it across reloads
	srv  transport.Server
	// tls is the server of a tls: or dtls: address; ssh the socket of an
	// ssh: address.
	tls interface {
		Update(*tlstm.ServerConfig) error
	}
	ssh  *sshSocket
	done chan struct{} // closed once Serve has returned
}

// closeNow closes l at once, with its sessions, without draining.
func (l *trapdListener) closeNow() {
	if l.ssh != nil {
		l.ssh.Close()
	} else {
		l.srv.Close()
	}
}

func newTrapdListeners(h transport.Handler, log *slog.Logger, stateDir string) *trapdListeners {
	return &trapdListeners{h: h, log: log, stateDir: stateDir}
}

// listenPlan is a change of listen addresses that prepare has checked and
// commit carries out.
type listenPlan struct {
	ls     *trapdListeners
	next   []*trapdListener // the listeners after commit, in configured order
	opened []*trapdListener // not yet serving
	gone   []*trapdListener
	tls    *tlstm.ServerConfig
	// ssh is the SSH server to run on kept ssh: listeners (nil: keep
	// theirs); sshConf and sshID what it was made from.
	ssh     *sshtm.ServerConfig
	sshConf config.SSH
	sshID   string
	sshFP   string // the first host key's fingerprint
}

// prepare opens the listen addresses of tc that are not open yet, without
// serving them, and checks that the kept tls:, dtls: and ssh: listeners
// can take tc's settings. On error everything it opened is closed again
// and the running listeners are untouched; the error says which address
// failed and what to do.
func (ls *trapdListeners) prepare(tc *trapdSettings) (*listenPlan, error) {
	p := &listenPlan{ls: ls, tls: tc.tlsServer, sshConf: tc.ssh}
	fail := func(err error) (*listenPlan, error) {
		p.abort()
		return nil, err
	}
	var needSSH bool
	seen := map[string]bool{}
	type want struct {
		spec string
		a    transport.Address
	}
	var wants []want
	for _, spec := range tc.listen {
		a, err := notify.ParseAddress(spec)
		if err != nil {
			return fail(fmt.Errorf("listen address %s: %v", spec, err))
		}
		switch a.Domain {
		case transport.UDP, transport.TCP:
		case transport.TLS, transport.DTLS:
			if tc.tlsServer == nil {
				return fail(fmt.Errorf("listen address %s: a tls: or dtls: receiver needs [snmp] localCert and certSecName lines in snmptrapd.conf", spec))
			}
		case transport.SSH:
			needSSH = true
		default:
			return fail(fmt.Errorf("listen address %s: tsnmp trapd listens on the udp, tcp, tls, dtls and ssh domains", spec))
		}
		if seen[a.String()] {
			return fail(fmt.Errorf("listen address %s is named twice", spec))
		}
		seen[a.String()] = true
		wants = append(wants, want{spec, a})
	}
	if needSSH {
		keys, err := trapdSSHKeys(&tc.ssh, ls.stateDir, ls.log)
		if err != nil {
			return fail(fmt.Errorf("ssh: %w", err))
		}
		p.sshID = sshIdentity(&tc.ssh, keys)
		if p.sshID != ls.sshID {
			p.ssh = tc.ssh.ServerConfig(keys, ls.authorizedKeysFile)
			p.sshFP = tssh.Fingerprint(keys[0].PublicKey())
		}
	}
	for _, w := range wants {
		if l := ls.find(w.a.String()); l != nil {
			p.next = append(p.next, l)
			continue
		}
		// An address an earlier reload removed and that is still
		// closing holds its port until its Serve has returned.
		ls.awaitClosed(w.a.String())
		l, err := ls.open(w.spec, w.a, tc, p)
		if err != nil {
			if errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "permission denied") {
				err = fmt.Errorf("%w (ports below 1024 need root or CAP_NET_BIND_SERVICE)", err)
			} else if strings.Contains(err.Error(), "address already in use") {
				err = fmt.Errorf("%w (another program listens there: stop it, or choose another address)", err)
			}
			return fail(fmt.Errorf("cannot listen on %s: %w", w.spec, err))
		}
		p.opened = append(p.opened, l)
		p.next = append(p.next, l)
	}
	for _, l := range ls.list {
		if !slices.Contains(p.next, l) {
			p.gone = append(p.gone, l)
		}
	}
	return p, nil
}

// open opens one listen address without serving it.
func (ls *trapdListeners) open(spec string, a transport.Address, tc *trapdSettings, p *listenPlan) (*trapdListener, error) {
	l := &trapdListener{spec: spec, key: a.String(), done: make(chan struct{})}
	var err error
	switch a.Domain {
	case transport.UDP, transport.TCP:
		l.srv, err = transport.Listen(a, ls.h, &transport.ServerOptions{Logger: ls.log, ReadBuffer: trapdReadBuffer})
	case transport.TLS:
		var s *tlstm.Server
		s, err = tlstm.Listen(a, ls.h, tc.tlsServer, &tlstm.Options{ServerOptions: transport.ServerOptions{Logger: ls.log}})
		if err == nil {
			l.srv, l.tls = s, s
		}
	case transport.DTLS:
		var s *dtls.Server
		s, err = dtls.Listen(a, ls.h, tc.tlsServer, &dtls.Options{Options: tlstm.Options{ServerOptions: transport.ServerOptions{Logger: ls.log, ReadBuffer: trapdReadBuffer}}})
		if err == nil {
			l.srv, l.tls = s, s
		}
	case transport.SSH:
		var nl net.Listener
		if nl, err = net.Listen(a.Network, a.HostPort()); err != nil {
			break
		}
		sc, opts := p.ssh, ls.sshOptions(&tc.ssh)
		if sc == nil { // settings unchanged: those of the running ssh: listeners
			sc, opts = ls.sshCfg, ls.sshOpts
		}
		l.ssh = newSSHSocket(nl, ls.h, opts)
		l.srv, err = l.ssh.start(sc)
		if err != nil {
			l.ssh.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (ls *trapdListeners) sshOptions(c *config.SSH) *sshtm.Options {
	return &sshtm.Options{ServerOptions: transport.ServerOptions{Logger: ls.log, MaxConns: c.MaxSessions, IdleTimeout: time.Duration(c.IdleTimeout)}}
}

func (ls *trapdListeners) authorizedKeysFile(user string) string {
	if c := ls.ssh.Load(); c != nil {
		return c.AuthorizedKeysFile(user)
	}
	return ""
}

// awaitClosed waits until the removed listener at key, if one is still
// closing, has let its port go: at most closeWait.
func (ls *trapdListeners) awaitClosed(key string) {
	ls.closeMu.Lock()
	var l *trapdListener
	for _, c := range ls.closing {
		if c.key == key {
			l = c
		}
	}
	ls.closeMu.Unlock()
	if l == nil {
		return
	}
	select {
	case <-l.done:
	case <-time.After(closeWait):
	}
}

func (ls *trapdListeners) find(key string) *trapdListener {
	for _, l := range ls.list {
		if l.key == key {
			return l
		}
	}
	return nil
}

// abort closes what prepare opened; the running listeners stay as they
// were.
func (p *listenPlan) abort() {
	for _, l := range p.opened {
		l.closeNow()
	}
	p.opened = nil
}

// commit installs the new settings in the kept listeners, starts serving
// the opened ones and starts closing those no longer configured (retire:
// it does not wait for them). It returns what changed, for the log.
func (p *listenPlan) commit() (opened, closed []string) {
	ls := p.ls
	c := p.sshConf
	ls.ssh.Store(&c)
	for _, l := range p.next {
		if l.tls != nil && !slices.Contains(p.opened, l) {
			// prepare checked what Update checks (a certificate and
			// certSecName rules), so it does not fail here.
			if err := l.tls.Update(p.tls); err != nil {
				ls.log.Error("TLS settings not applied", "address", l.spec, "err", err)
			}
		}
		if l.ssh != nil && p.ssh != nil && !slices.Contains(p.opened, l) {
			if err := l.ssh.swap(p.ssh, ls.sshOptions(&p.sshConf)); err != nil {
				ls.log.Error("SSH settings not applied", "address", l.spec, "err", err)
			}
		}
	}
	if p.ssh != nil {
		ls.sshID, ls.sshCfg, ls.sshOpts = p.sshID, p.ssh, ls.sshOptions(&p.sshConf)
		ls.log.Info("ssh host key", "fingerprint", p.sshFP)
	}
	for _, l := range p.opened {
		ls.serve(l)
		opened = append(opened, l.spec)
	}
	ls.list = p.next
	for _, l := range p.gone {
		ls.retire(l)
		closed = append(closed, l.spec)
	}
	return opened, closed
}

// retire closes l on a goroutine of its own (closeOne), so that removing
// listeners neither holds up the main loop (signals) nor waits for one
// removed listener before closing the next.
func (ls *trapdListeners) retire(l *trapdListener) {
	ls.closeMu.Lock()
	ls.closing = append(ls.closing, l)
	ls.closeMu.Unlock()
	ls.closers.Add(1)
	go func() {
		defer ls.closers.Done()
		ls.closeOne(l)
		ls.closeMu.Lock()
		ls.closing = slices.DeleteFunc(ls.closing, func(x *trapdListener) bool { return x == l })
		ls.closeMu.Unlock()
	}()
}

// closeWait is how long closing a listener waits for its Serve to return
// before it says so in the log and lets it be.
const closeWait = 10 * time.Second

func (ls *trapdListeners) serve(l *trapdListener) {
	ls.wg.Add(1)
	go func() {
		defer ls.wg.Done()
		defer close(l.done)
		if err := l.srv.Serve(); err != nil {
			ls.log.Error("listener stopped", "address", l.spec, "err", err)
		}
	}()
	ls.log.Info("listening", "address", l.spec, "bound", l.srv.Addr().String())
}

// closeOne closes l and waits until its Serve has returned: the messages
// it had read are handed to the receiver by then. A udp: listener is
// drained first: the datagrams the kernel had queued for it are received
// too.
func (ls *trapdListeners) closeOne(l *trapdListener) {
	switch dr, ok := l.srv.(transport.Drainer); {
	case ok:
		dr.Drain(2 * time.Second)
	case l.ssh != nil:
		l.ssh.Close()
	default:
		l.srv.Close()
	}
	select {
	case <-l.done:
		ls.log.Info("stopped listening", "address", l.spec)
	case <-time.After(closeWait):
		ls.log.Warn("listener still closing", "address", l.spec)
	}
}

// close closes every listener, and those a reload removed that are still
// closing (a drain in progress ends: at a stop nothing is drained), and
// waits until every Serve has returned.
func (ls *trapdListeners) close() {
	for _, l := range ls.list {
		l.closeNow()
	}
	ls.list = nil
	ls.closeMu.Lock()
	closing := slices.Clone(ls.closing)
	ls.closeMu.Unlock()
	for _, l := range closing {
		l.closeNow()
	}
	ls.closers.Wait()
	ls.wg.Wait()
}

// specs returns the configured addresses of the open listeners.
func (ls *trapdListeners) specs() []string {
	var out []string
	for _, l := range ls.list {
		out = append(out, l.spec)
	}
	return out
}

// sshIdentity is what an ssh: listener's server is made of, apart from
// the authorized keys (looked up at each login): the host keys and the
// settings. Equal identities need no new server.
func sshIdentity(c *config.SSH, keys []tssh.Signer) string {
	cc := *c
	cc.AuthorizedKeys, cc.AuthorizedKeysDir = nil, ""
	var b strings.Builder
	fmt.Fprintf(&b, "%v", cc)
	for _, k := range keys {
		b.WriteString("|" + tssh.Fingerprint(k.PublicKey()))
	}
	return b.String()
}

// sshSocket is the socket of an ssh: listener. Its connections go to the
// SSH server of the running configuration: when a reload changes the host
// keys or the SSH settings, a server with the new ones takes the
// connections that arrive from then on, and the one it replaces keeps its
// sessions until they end (or tsnmp trapd stops): it is closed when the
// last of them ends.
type sshSocket struct {
	l    net.Listener
	h    transport.Handler
	opts *sshtm.Options

	mu      sync.Mutex
	cfg     *sshtm.ServerConfig
	cur     *sshView
	retired []*sshView
	closed  bool
	fed     chan struct{} // closed when the accept loop has ended
}

// sshView is what one SSH server accepts from: the connections the
// socket hands it while it is the current one.
type sshView struct {
	sock  *sshSocket
	srv   *sshtm.Server
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	open  atomic.Int64 // connections accepted and not yet closed
}

func newSSHSocket(l net.Listener, h transport.Handler, opts *sshtm.Options) *sshSocket {
	s := &sshSocket{l: l, h: h, opts: opts, fed: make(chan struct{})}
	go s.feed()
	return s
}

// start makes the first server, with cfg; its Serve serves the socket.
func (s *sshSocket) start(cfg *sshtm.ServerConfig) (transport.Server, error) {
	v, err := s.newView(cfg, s.opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cfg, s.cur = cfg, v
	s.mu.Unlock()
	return &sshSocketServer{s}, nil
}

func (s *sshSocket) newView(cfg *sshtm.ServerConfig, opts *sshtm.Options) (*sshView, error) {
	v := &sshView{sock: s, conns: make(chan net.Conn), done: make(chan struct{})}
	srv, err := sshtm.NewServer(v, s.h, cfg, opts)
	if err != nil {
		return nil, err
	}
	v.srv = srv
	return v, nil
}

// swap makes a server with cfg the one that takes new connections; the
// previous one serves its sessions until they end.
func (s *sshSocket) swap(cfg *sshtm.ServerConfig, opts *sshtm.Options) error {
	v, err := s.newView(cfg, opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		v.srv.Close()
		return net.ErrClosed
	}
	old := s.cur
	s.cfg, s.cur, s.opts = cfg, v, opts
	s.retired = append(s.retired, old)
	s.mu.Unlock()
	old.stop()
	if old.open.Load() == 0 {
		s.drop(old)
	}
	go func() {
		if err := v.srv.Serve(); err != nil {
			opts.Logger.Error("ssh listener stopped", "address", s.l.Addr().String(), "err", err)
		}
	}()
	return nil
}

// feed accepts connections and hands each to the current server.
func (s *sshSocket) feed() {
	defer close(s.fed)
	for {
		c, err := s.l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// Out of file descriptors and the like: try again shortly,
			// as the connection set does.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for {
			s.mu.Lock()
			v, closed := s.cur, s.closed
			s.mu.Unlock()
			if closed || v == nil {
				c.Close()
				break
			}
			v.open.Add(1)
			select {
			case v.conns <- &sshConn{Conn: c, v: v}:
			case <-v.done:
				v.release()
				continue // swapped meanwhile: hand it to the new server
			}
			break
		}
	}
}

// Close closes the socket and every server on it, with their sessions.
func (s *sshSocket) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	views := append([]*sshView{s.cur}, s.retired...)
	s.retired = nil
	s.mu.Unlock()
	err := s.l.Close()
	<-s.fed
	for _, v := range views {
		if v != nil {
			v.srv.Close()
		}
	}
	return err
}

// sshSocketServer is the transport.Server of an ssh: listener: Serve
// serves the first server; the servers of later reloads run on their own
// goroutines.
type sshSocketServer struct{ s *sshSocket }

func (x *sshSocketServer) Serve() error {
	x.s.mu.Lock()
	v := x.s.cur
	x.s.mu.Unlock()
	err := v.srv.Serve()
	<-x.s.fed
	return err
}

func (x *sshSocketServer) Close() error   { return x.s.Close() }
func (x *sshSocketServer) Addr() net.Addr { return x.s.l.Addr() }

// drop closes v, a retired server whose connections have all ended,
// unless the socket's Close is closing it or an earlier drop did.
func (s *sshSocket) drop(v *sshView) {
	s.mu.Lock()
	i := slices.Index(s.retired, v)
	if i >= 0 {
		s.retired = slices.Delete(s.retired, i, i+1)
	}
	s.mu.Unlock()
	if i < 0 {
		return
	}
	// Close waits for the server's connection goroutines, and the last
	// connection may be closing on one of them.
	go v.srv.Close()
}

// stop ends the view's accepting; its server keeps its connections.
func (v *sshView) stop() { v.once.Do(func() { close(v.done) }) }

// release counts one of v's connections as ended. When it was the last
// one of a retired server (stopped by a swap), that server is closed.
func (v *sshView) release() {
	if v.open.Add(-1) != 0 {
		return
	}
	select {
	case <-v.done:
		v.sock.drop(v)
	default: // the current server
	}
}

func (v *sshView) Accept() (net.Conn, error) {
	select {
	case c := <-v.conns:
		return c, nil
	case <-v.done:
		return nil, net.ErrClosed
	}
}

func (v *sshView) Close() error   { v.stop(); return nil }
func (v *sshView) Addr() net.Addr { return v.sock.l.Addr() }

// sshConn counts the connection among its server's open ones until it is
// closed.
type sshConn struct {
	net.Conn
	v    *sshView
	once sync.Once
}

func (c *sshConn) Close() error {
	c.once.Do(c.v.release)
	return c.Conn.Close()
}
