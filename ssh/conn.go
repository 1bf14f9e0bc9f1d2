package ssh

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// channelWindow is the receive window granted per channel. The window
	// is topped up only when less than half of it remains.
	channelWindow = 2 * 1024 * 1024
	// channelMaxPacket is the largest data packet we accept.
	channelMaxPacket = 32 * 1024
	// maxDataChunk is the largest data payload we send in one message.
	maxDataChunk = 32*1024 - 64
)

// ErrClosed is returned by operations on a closed channel or connection.
var ErrClosed = errors.New("ssh: closed")

// OpenChannelError is returned when the peer refuses a channel.
type OpenChannelError struct {
	Reason  uint32
	Message string
}

func (e *OpenChannelError) Error() string {
	return fmt.Sprintf("ssh: channel open refused: reason %d: %q", e.Reason, e.Message)
}

// mux is the connection protocol (RFC 4254): channels and global requests
// multiplexed over one transport.
type mux struct {
	t        *transport
	isClient bool

	// Server side.
	maxChannels int
	onSubsys    func(name string, ch *channel) (start func())
	onRefuse    func(subsystem bool) // a channel open or subsystem request refused

	mu       sync.Mutex
	channels map[uint32]*channel
	nextID   uint32
	err      error
	done     chan struct{}
	pending  int // unanswered keepalives

	// keepaliveTimer sends the next keepalive (startKeepalive).
	keepaliveTimer *time.Timer

	// park, if set, is offered the connection when it has waited
	// parkAfter for its next packet with no input buffered (loop); it
	// reports whether it took the connection over. Only the reading
	// goroutine uses park.
	park      func() bool
	parkAfter time.Duration

	adjustsSent      atomic.Int64 // WINDOW_ADJUST messages sent
	keepaliveReplies atomic.Int64 // replies to our global requests
}

func newMux(t *transport, isClient bool) *mux {
	return &mux{t: t, isClient: isClient, channels: map[uint32]*channel{}, done: make(chan struct{})}
}

// loop reads packets until the transport fails; it then tears the
// connection down (teardown) and returns false. With park set, when no
// input is buffered and no packet comes for parkAfter, loop offers the
// connection to park, which may take the wait for the next packet over:
// then loop returns true, and the owner calls loop again, on a new
// goroutine, when the next packet arrives (or teardown, if the
// connection ends while parked). Whether channels are busy does not
// matter: everything a channel waits for arrives through this loop.
func (m *mux) loop() (parked bool) {
	var err error
	for {
		if m.park != nil && m.t.pc.idle() {
			var ready bool
			if ready, err = m.t.pc.waitRead(m.parkAfter); err != nil {
				break
			}
			if !ready {
				if m.park() {
					return true
				}
				continue
			}
		}
		var p []byte
		p, err = m.t.readMessage()
		if err != nil {
			break
		}
		if p == nil {
			// A transport message (re-exchange, IGNORE): the wait
			// for the next packet may park again.
			continue
		}
		if err = m.dispatch(p); err != nil {
			break
		}
	}
	m.teardown(err)
	return false
}

// teardown ends the connection after err ended its reading: every
// channel fails, the peer is told why (best effort) and the socket is
// closed. It runs once, on the goroutine that read last.
func (m *mux) teardown(err error) {
	m.t.wipeRead()
	if err == io.EOF {
		err = ErrClosed
	}
	m.mu.Lock()
	m.err = err
	chans := m.channels
	m.channels = map[uint32]*channel{}
	if m.keepaliveTimer != nil {
		m.keepaliveTimer.Stop()
	}
	m.mu.Unlock()
	for _, ch := range chans {
		ch.fail(err)
	}
	reason := uint32(DisconnectProtocolError)
	switch {
	case errors.Is(err, errMAC):
		reason = DisconnectMACError
	case errors.Is(err, ErrClosed) || errors.Is(err, net.ErrClosed):
		// The connection was closed, by this side (Close, a parked
		// connection ended) or by the peer's end of the socket: not a
		// protocol error.
		reason = DisconnectByApplication
	}
	// After the peer's DISCONNECT the socket is closed without one.
	_ = m.t.closeAfter(err, reason, "")
	close(m.done)
}

func (m *mux) channel(id uint32) (*channel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := m.channels[id]
	if ch == nil {
		return nil, fmt.Errorf("ssh: message for unknown channel %d", id)
	}
	return ch, nil
}

func (m *mux) dispatch(p []byte) error {
	switch p[0] {
	case msgChannelOpen:
		return m.handleOpen(p)
	case msgGlobalRequest:
		req, err := parseGlobalRequest(p)
		if err != nil {
			return err
		}
		if req.WantReply {
			return m.t.writePacket([]byte{msgRequestFailure})
		}
		return nil
	case msgRequestSuccess, msgRequestFailure:
		m.mu.Lock()
		m.pending = 0
		m.mu.Unlock()
		m.keepaliveReplies.Add(1)
		return nil
	case msgExtInfo, msgResumeState, msgUserAuthSuccess, msgUserAuthBanner:
		return nil
	}
	if p[0] < msgChannelOpenConfirm || p[0] > msgChannelFailure {
		if p[0] < msgUserAuthRequest {
			return fmt.Errorf("ssh: unexpected message %d", p[0])
		}
		// RFC 4253 section 11.4: answer unknown messages.
		return m.t.writePacket(newBuilder(msgUnimplemented).uint32(m.t.lastReadSeq()).b)
	}
	r := reader{b: p[1:]}
	ch, err := m.channel(r.uint32())
	if r.err != nil {
		return r.err
	}
	if err != nil {
		return err
	}
	return ch.handle(p[0], &r)
}

func (m *mux) handleOpen(p []byte) error {
	msg, err := parseChannelOpen(p)
	if err != nil {
		return err
	}
	refuse := func(reason uint32, text string) error {
		if m.onRefuse != nil {
			m.onRefuse(false)
		}
		return m.t.writePacket(newBuilder(msgChannelOpenFailure).uint32(msg.SenderID).uint32(reason).text(text).text("").b)
	}
	if m.isClient || msg.ChanType != "session" {
		return refuse(1, "channel type not supported") // administratively prohibited
	}
	if msg.MaxPacket < 64 {
		return refuse(2, "maximum packet too small")
	}
	m.mu.Lock()
	if len(m.channels) >= m.maxChannels {
		m.mu.Unlock()
		return refuse(4, "too many channels") // resource shortage
	}
	ch := m.newChannelLocked()
	ch.remoteID, ch.remoteWin, ch.remoteMax = msg.SenderID, msg.Window, msg.MaxPacket
	ch.opened = true
	m.mu.Unlock()
	return m.t.writePacket(newBuilder(msgChannelOpenConfirm).uint32(ch.remoteID).uint32(ch.localID).uint32(channelWindow).uint32(channelMaxPacket).b)
}

func (m *mux) newChannelLocked() *channel {
	for m.channels[m.nextID] != nil {
		m.nextID++
	}
	ch := &channel{m: m, localID: m.nextID, localWin: channelWindow}
	if m.isClient {
		// Only a client opens channels and sends requests that want a
		// reply: a server's channels (one per session) do without.
		ch.openResult, ch.reqResult = make(chan error, 1), make(chan bool, 1)
	}
	ch.cond.L = &ch.mu
	m.nextID++
	m.channels[ch.localID] = ch
	return ch
}

func (m *mux) removeChannel(ch *channel) {
	m.mu.Lock()
	if m.channels[ch.localID] == ch {
		delete(m.channels, ch.localID)
	}
	m.mu.Unlock()
}

// openSession opens a session channel (client side).
func (m *mux) openSession() (*channel, error) {
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return nil, m.err
	}
	ch := m.newChannelLocked()
	m.mu.Unlock()
	if err := m.t.writePacket(newBuilder(msgChannelOpen).text("session").uint32(ch.localID).uint32(channelWindow).uint32(channelMaxPacket).b); err != nil {
		return nil, err
	}
	select {
	case err := <-ch.openResult:
		if err != nil {
			m.removeChannel(ch)
			return nil, err
		}
		return ch, nil
	case <-m.done:
		return nil, m.closedErr()
	}
}

func (m *mux) closedErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	return ErrClosed
}

// startKeepalive sends keepalive@openssh.com requests every interval
// and closes the connection when max of them go unanswered. A timer
// sends them: an idle connection holds no goroutine for its keepalives,
// and a parked one wakes for the reply.
func (m *mux) startKeepalive(interval time.Duration, max int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return
	}
	m.keepaliveTimer = time.AfterFunc(interval, func() { m.sendKeepalive(interval, max) })
}

func (m *mux) sendKeepalive(interval time.Duration, max int) {
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return
	}
	m.pending++
	dead := m.pending > max
	m.mu.Unlock()
	if dead {
		_ = m.t.close(DisconnectByApplication, "keepalive timeout")
		return
	}
	if err := m.t.writePacket(newBuilder(msgGlobalRequest).text("keepalive@openssh.com").bool(true).b); err != nil {
		return
	}
	m.mu.Lock()
	if m.err == nil {
		m.keepaliveTimer.Reset(interval)
	}
	m.mu.Unlock()
}

// channel is one session channel. It implements io.ReadWriteCloser.
type channel struct {
	m                 *mux
	localID, remoteID uint32

	openResult chan error
	reqResult  chan bool

	mu        sync.Mutex
	cond      sync.Cond // L is &mu
	opened    bool
	started   bool // a subsystem is running (server)
	buf       []byte
	localWin  uint32 // bytes the peer may still send
	remoteWin uint32 // bytes we may still send
	remoteMax uint32
	eof       bool // peer sent EOF
	sentEOF   bool
	sentClose bool
	gone      bool // peer sent CLOSE or the connection failed
	err       error
	// resume is the parked handler's continuation (Park), started when
	// data, EOF or the channel's end arrives; parks counts Parks.
	resume func()
	parks  uint64
}

// Parker is implemented by the channels a SubsystemHandler receives. A
// handler that would wait for the peer's next data parks instead, so
// that an idle channel holds no goroutine: if Park reports true, the
// handler must return at once, and resume runs on a new goroutine when
// data, EOF or the channel's end arrives, continuing the handler (it may
// park again). The channel is finished (EOF, exit-status, CLOSE) when a
// run of the handler or of a continuation returns without parking.
type Parker interface {
	// Wait waits at most d for data, EOF or the channel's end and
	// reports whether one is there: a handler waits a little on its
	// goroutine before it parks, so that a busy session does not start
	// a goroutine for every message.
	Wait(d time.Duration) bool
	// Park reports false, and the handler goes on reading, if data, EOF
	// or an error is there already.
	Park(resume func()) bool
}

// Wait implements Parker.
func (ch *channel) Wait(d time.Duration) bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ready := func() bool { return len(ch.buf) > 0 || ch.eof || ch.gone }
	if ready() {
		return true
	}
	expired := false
	t := time.AfterFunc(d, func() {
		ch.mu.Lock()
		expired = true
		ch.cond.Broadcast()
		ch.mu.Unlock()
	})
	defer t.Stop()
	for !ready() && !expired {
		ch.cond.Wait()
	}
	return ready()
}

// Park implements Parker.
func (ch *channel) Park(resume func()) bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if len(ch.buf) > 0 || ch.eof || ch.gone {
		return false
	}
	ch.resume = resume
	ch.parks++
	return true
}

// wakeLocked takes the parked handler's continuation, if any; the caller
// starts it (startHandler) once ch.mu is released.
func (ch *channel) wakeLocked() func() {
	r := ch.resume
	ch.resume = nil
	return r
}

// startHandler runs a subsystem handler, or the continuation of a parked
// one, on a goroutine of its own, and finishes the channel when it
// returns without having parked.
func (ch *channel) startHandler(run func()) {
	if run == nil {
		return
	}
	go func() {
		ch.mu.Lock()
		parks := ch.parks
		ch.mu.Unlock()
		run()
		ch.mu.Lock()
		parked := ch.parks != parks
		ch.mu.Unlock()
		if !parked {
			ch.finish(0)
		}
	}()
}

func (ch *channel) fail(err error) {
	ch.mu.Lock()
	ch.gone = true
	if ch.err == nil {
		ch.err = err
	}
	ch.cond.Broadcast()
	wake := ch.wakeLocked()
	ch.mu.Unlock()
	ch.startHandler(wake)
	select {
	case ch.openResult <- err:
	default:
	}
	select {
	case ch.reqResult <- false:
	default:
	}
}

func (ch *channel) handle(msgType byte, r *reader) error {
	switch msgType {
	case msgChannelOpenConfirm:
		remoteID, win, max := r.uint32(), r.uint32(), r.uint32()
		if r.err != nil {
			return r.err
		}
		ch.mu.Lock()
		if ch.opened {
			ch.mu.Unlock()
			return errors.New("ssh: duplicate channel open confirmation")
		}
		if max == 0 {
			ch.mu.Unlock()
			return errors.New("ssh: channel maximum packet size is zero")
		}
		ch.opened, ch.remoteID, ch.remoteWin, ch.remoteMax = true, remoteID, win, max
		ch.mu.Unlock()
		ch.openResult <- nil // buffered; sent once per channel
	case msgChannelOpenFailure:
		reason, text := r.uint32(), r.text()
		ch.mu.Lock()
		opened := ch.opened
		ch.opened = true // no further open replies are valid
		ch.mu.Unlock()
		if opened {
			return errors.New("ssh: unexpected channel open failure")
		}
		ch.m.removeChannel(ch)
		ch.openResult <- &OpenChannelError{Reason: reason, Message: text}
	case msgChannelWindowAdjust:
		n := r.uint32()
		if r.err != nil {
			return r.err
		}
		ch.mu.Lock()
		if uint64(ch.remoteWin)+uint64(n) > 1<<32-1 {
			ch.mu.Unlock()
			return errors.New("ssh: channel window overflow")
		}
		ch.remoteWin += n
		ch.cond.Broadcast()
		ch.mu.Unlock()
	case msgChannelData, msgChannelExtendedData:
		if msgType == msgChannelExtendedData {
			r.uint32()
		}
		data := r.string()
		if err := r.done(); err != nil {
			return err
		}
		ch.mu.Lock()
		if uint32(len(data)) > ch.localWin || len(data) > channelMaxPacket {
			ch.mu.Unlock()
			return errors.New("ssh: peer exceeded channel window")
		}
		ch.localWin -= uint32(len(data))
		if msgType == msgChannelExtendedData {
			// Stderr is discarded; its window counts as consumed.
			inc := ch.windowIncLocked()
			ch.mu.Unlock()
			return ch.sendAdjust(inc)
		}
		ch.buf = append(ch.buf, data...)
		ch.cond.Broadcast()
		wake := ch.wakeLocked()
		ch.mu.Unlock()
		ch.startHandler(wake)
	case msgChannelEOF:
		ch.mu.Lock()
		ch.eof = true
		ch.cond.Broadcast()
		wake := ch.wakeLocked()
		ch.mu.Unlock()
		ch.startHandler(wake)
	case msgChannelClose:
		ch.m.removeChannel(ch)
		ch.mu.Lock()
		ch.gone, ch.eof = true, true
		send := !ch.sentClose
		ch.sentClose = true
		ch.cond.Broadcast()
		wake := ch.wakeLocked()
		ch.mu.Unlock()
		ch.startHandler(wake)
		if send {
			return ch.m.t.writePacket(newBuilder(msgChannelClose).uint32(ch.remoteID).b)
		}
	case msgChannelRequest:
		return ch.handleRequest(r)
	case msgChannelSuccess, msgChannelFailure:
		select {
		case ch.reqResult <- msgType == msgChannelSuccess:
		default:
			return errors.New("ssh: unexpected channel request reply")
		}
	}
	return nil
}

func (ch *channel) handleRequest(r *reader) error {
	name, wantReply := r.text(), r.bool()
	if name == "subsystem" && !ch.m.isClient {
		sub := r.text()
		if err := r.done(); err != nil {
			return err
		}
		ch.mu.Lock()
		first := !ch.started
		ch.started = true
		ch.mu.Unlock()
		var start func()
		if first && ch.m.onSubsys != nil {
			start = ch.m.onSubsys(sub, ch)
		}
		if start == nil && first {
			ch.mu.Lock()
			ch.started = false
			ch.mu.Unlock()
		}
		if start == nil {
			if ch.m.onRefuse != nil {
				ch.m.onRefuse(true)
			}
		}
		if wantReply {
			reply := byte(msgChannelFailure)
			if start != nil {
				reply = msgChannelSuccess
			}
			if err := ch.m.t.writePacket(newBuilder(reply).uint32(ch.remoteID).b); err != nil {
				return err
			}
		}
		// The handler starts after the reply so its data follows it.
		if start != nil {
			start()
		}
		return nil
	}
	if r.err != nil {
		return r.err
	}
	if wantReply {
		return ch.m.t.writePacket(newBuilder(msgChannelFailure).uint32(ch.remoteID).b)
	}
	return nil
}

// windowIncLocked returns how much window to hand back to the peer: zero
// until less than half of the window remains, so that a WINDOW_ADJUST is
// not sent after every message. The caller sends it with sendAdjust.
func (ch *channel) windowIncLocked() uint32 {
	if ch.localWin >= channelWindow/2 || ch.gone {
		return 0
	}
	inc := channelWindow - ch.localWin - uint32(len(ch.buf))
	if inc < channelWindow/2 {
		return 0
	}
	ch.localWin += inc
	return inc
}

func (ch *channel) sendAdjust(inc uint32) error {
	if inc == 0 {
		return nil
	}
	ch.m.adjustsSent.Add(1)
	return ch.m.t.writePacket(newBuilder(msgChannelWindowAdjust).uint32(ch.remoteID).uint32(inc).b)
}

// Read reads channel data.
func (ch *channel) Read(p []byte) (int, error) {
	ch.mu.Lock()
	for len(ch.buf) == 0 {
		if ch.eof || ch.gone {
			err := ch.err
			if ch.eof || err == nil {
				err = io.EOF
			}
			ch.mu.Unlock()
			return 0, err
		}
		if ch.sentClose {
			ch.mu.Unlock()
			return 0, ErrClosed
		}
		ch.cond.Wait()
	}
	n := copy(p, ch.buf)
	ch.buf = ch.buf[n:]
	if len(ch.buf) == 0 {
		ch.buf = nil
	}
	inc := ch.windowIncLocked()
	ch.mu.Unlock()
	// The adjust is sent without holding the channel lock, so a slow socket
	// never stalls the goroutine that delivers incoming data.
	return n, ch.sendAdjust(inc)
}

// Write sends data, blocking while the peer's window is exhausted.
func (ch *channel) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		ch.mu.Lock()
		for ch.remoteWin == 0 && !ch.gone && !ch.sentEOF && !ch.sentClose {
			ch.cond.Wait()
		}
		if ch.gone || ch.sentEOF || ch.sentClose {
			err := ch.err
			ch.mu.Unlock()
			if err == nil {
				err = ErrClosed
			}
			return written, err
		}
		n := min(len(p), int(ch.remoteWin), int(ch.remoteMax), maxDataChunk)
		ch.remoteWin -= uint32(n)
		ch.mu.Unlock()
		msg := newBuilder(msgChannelData).uint32(ch.remoteID).string(p[:n]).b
		if err := ch.m.t.writeData(msg); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// CloseWrite sends EOF: the peer reads io.EOF after the data sent so far.
func (ch *channel) CloseWrite() error {
	ch.mu.Lock()
	if ch.sentEOF || ch.gone || ch.sentClose {
		ch.mu.Unlock()
		return nil
	}
	ch.sentEOF = true
	ch.cond.Broadcast()
	ch.mu.Unlock()
	return ch.m.t.writePacket(newBuilder(msgChannelEOF).uint32(ch.remoteID).b)
}

// finish ends a server-side session channel: EOF, the exit status that
// OpenSSH clients expect (RFC 4254 section 6.10), then CLOSE.
func (ch *channel) finish(status uint32) {
	_ = ch.CloseWrite()
	ch.mu.Lock()
	gone := ch.gone || ch.sentClose
	ch.mu.Unlock()
	if !gone {
		_ = ch.m.t.writePacket(newBuilder(msgChannelRequest).uint32(ch.remoteID).text("exit-status").bool(false).uint32(status).b)
	}
	_ = ch.Close()
}

// Close closes the channel in both directions.
func (ch *channel) Close() error {
	ch.mu.Lock()
	if ch.sentClose {
		ch.mu.Unlock()
		return nil
	}
	ch.sentClose = true
	gone := ch.gone
	ch.cond.Broadcast()
	ch.mu.Unlock()
	if gone {
		return nil
	}
	return ch.m.t.writePacket(newBuilder(msgChannelClose).uint32(ch.remoteID).b)
}

// RemoteAddr returns the address of the connection's peer.
func (ch *channel) RemoteAddr() net.Addr { return ch.m.t.conn.RemoteAddr() }

// LocalAddr returns the connection's local address.
func (ch *channel) LocalAddr() net.Addr { return ch.m.t.conn.LocalAddr() }

// request sends a channel request and waits for the reply.
func (ch *channel) request(name string, payload []byte) (bool, error) {
	msg := newBuilder(msgChannelRequest).uint32(ch.remoteID).text(name).bool(true).raw(payload).b
	if err := ch.m.t.writePacket(msg); err != nil {
		return false, err
	}
	select {
	case ok := <-ch.reqResult:
		return ok, nil
	case <-ch.m.done:
		return false, ch.m.closedErr()
	}
}

// Channel is implemented by the io.ReadWriteCloser values that
// (*Client).Subsystem returns and that SubsystemHandler receives.
type Channel interface {
	io.ReadWriteCloser
	// CloseWrite sends EOF; the peer reads io.EOF after the data sent so far.
	CloseWrite() error
	RemoteAddr() net.Addr
	LocalAddr() net.Addr
}

var (
	_ Channel = (*channel)(nil)
	_ Parker  = (*channel)(nil)
)
