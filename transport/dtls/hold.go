package dtls

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"

	dtlsnet "github.com/pion/dtls/v3/pkg/net"
	"github.com/pion/dtls/v3/pkg/protocol"
	"github.com/pion/dtls/v3/pkg/protocol/recordlayer"
)

// A client may send application data as soon as it has the agent's
// Finished. pion/dtls marks the agent's side of the handshake complete a
// moment after sending that Finished, and of the records that arrive in
// between it keeps one and drops the rest (its conn.go: early application
// data goes into a channel of one without blocking). A tsnmp manager sends
// its ticket request and its first message at once, so the message was
// often lost there.
//
// holdListener closes that gap below pion/dtls: it passes each peer's
// datagrams through, except that a datagram carrying application data
// that arrives after the agent sent a record of epoch 1 (its Finished) and
// before the handshake is complete waits until it is complete (or the
// association closes). The wait costs only the peer's own association:
// once the agent has sent its Finished, the handshake needs nothing more
// from the peer.
type holdListener struct {
	dtlsnet.PacketListener
	mu    sync.Mutex
	conns map[string]*holdConn // associations whose handshake is not complete
}

func newHoldListener(l net.Listener) *holdListener {
	return &holdListener{PacketListener: dtlsnet.PacketListenerFromListener(l), conns: map[string]*holdConn{}}
}

// Accept implements dtlsnet.PacketListener.
func (l *holdListener) Accept() (net.PacketConn, net.Addr, error) {
	pc, a, err := l.PacketListener.Accept()
	if err != nil {
		return pc, a, err
	}
	c := &holdConn{PacketConn: pc, l: l, key: a.String(), ready: make(chan struct{})}
	l.mu.Lock()
	l.conns[c.key] = c
	l.mu.Unlock()
	return c, a, nil
}

// established releases the held records of the association with a, whose
// handshake is complete, and hands it session x: later records that may
// carry a message wake x. It returns how many such records came before.
func (l *holdListener) established(a net.Addr, x *session) int {
	l.mu.Lock()
	c := l.conns[a.String()]
	l.mu.Unlock()
	if c == nil {
		return 0
	}
	c.mu.Lock()
	c.sess = x
	n := c.early
	c.mu.Unlock()
	c.release()
	return n
}

type holdConn struct {
	net.PacketConn
	l        *holdListener
	key      string
	finished atomic.Bool // the agent has sent a record of epoch 1
	done     atomic.Bool // released: nothing more is held
	ready    chan struct{}
	once     sync.Once

	mu    sync.Mutex
	sess  *session // once established
	early int      // records for sess that came before it
}

func (c *holdConn) release() {
	c.once.Do(func() {
		c.done.Store(true)
		close(c.ready)
		c.l.mu.Lock()
		if c.l.conns[c.key] == c {
			delete(c.l.conns, c.key)
		}
		c.l.mu.Unlock()
	})
}

// ReadFrom implements net.PacketConn.
func (c *holdConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, a, err := c.PacketConn.ReadFrom(b)
	if err != nil {
		return n, a, err
	}
	if k := messageRecords(b[:n]); k > 0 {
		c.mu.Lock()
		x := c.sess
		if x == nil {
			c.early += k
		}
		c.mu.Unlock()
		if x != nil {
			x.wake(k)
		} else if !c.done.Load() && c.finished.Load() && hasRecord(b[:n], protocol.ContentTypeApplicationData) {
			<-c.ready
		}
	}
	return n, a, err
}

// WriteTo implements net.PacketConn.
func (c *holdConn) WriteTo(b []byte, a net.Addr) (int, error) {
	if !c.done.Load() && !c.finished.Load() && hasRecord(b, 0) {
		c.finished.Store(true)
	}
	return c.PacketConn.WriteTo(b, a)
}

// Close implements net.PacketConn.
func (c *holdConn) Close() error {
	c.release()
	return c.PacketConn.Close()
}

// hasRecord reports whether a datagram holds a record (RFC 6347 §4.1,
// without connection IDs) of content type typ (0: any) and a nonzero
// epoch.
func hasRecord(b []byte, typ protocol.ContentType) bool {
	for len(b) >= recordlayer.FixedHeaderSize {
		if (typ == 0 || protocol.ContentType(b[0]) == typ) && binary.BigEndian.Uint16(b[3:]) != 0 {
			return true
		}
		b = b[min(len(b), recordlayer.FixedHeaderSize+int(binary.BigEndian.Uint16(b[11:]))):]
	}
	return false
}

// messageRecords counts the records of a datagram, of a nonzero epoch,
// that bring the session something to read: application data, or an
// alert.
func messageRecords(b []byte) int {
	n := 0
	for len(b) >= recordlayer.FixedHeaderSize {
		t := protocol.ContentType(b[0])
		if (t == protocol.ContentTypeApplicationData || t == protocol.ContentTypeAlert) && binary.BigEndian.Uint16(b[3:]) != 0 {
			n++
		}
		b = b[min(len(b), recordlayer.FixedHeaderSize+int(binary.BigEndian.Uint16(b[11:]))):]
	}
	return n
}

// startsHandshake accepts a new peer only with a datagram whose first
// record is a handshake message (as pion/dtls's own listener does).
func startsHandshake(b []byte) bool {
	return len(b) >= recordlayer.FixedHeaderSize && protocol.ContentType(b[0]) == protocol.ContentTypeHandshake
}
