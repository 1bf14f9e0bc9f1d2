//go:build !linux

package transport

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/net/ipv4"
)

// udpSocket is a UDP server's socket, read through the runtime's network
// poller.
type udpSocket struct {
	conn *net.UDPConn
}

func newUDPSocket(c *net.UDPConn) (*udpSocket, error) { return &udpSocket{conn: c}, nil }

func (u *udpSocket) serve() bool { return true }
func (u *udpSocket) served()     {}
func (u *udpSocket) close(bool) error {
	return u.conn.Close()
}

// stopReceiving and pending are Linux's (Drain); elsewhere Drain closes
// at once.
func (u *udpSocket) stopReceiving() error { return nil }
func (u *udpSocket) pending() bool        { return false }

// writeTo sends b to to, outside the readers' batches, from the address
// routing picks.
func (u *udpSocket) writeTo(b []byte, _ netip.Addr, to netip.AddrPort) error {
	_, err := u.conn.WriteToUDPAddrPort(b, to)
	return err
}

type pollReader struct {
	pc   *ipv4.PacketConn
	log  *slog.Logger
	in   []ipv4.Message
	out  []ipv4.Message
	bufs [][]byte // out's buffers, kept for reuse
}

func (u *udpSocket) newReader(log *slog.Logger) udpReader {
	r := &pollReader{pc: ipv4.NewPacketConn(u.conn), log: log, in: make([]ipv4.Message, udpBatch), out: make([]ipv4.Message, udpBatch), bufs: make([][]byte, udpBatch)}
	for i := range r.in {
		r.in[i].Buffers = [][]byte{make([]byte, 65536)}
		r.bufs[i] = make([]byte, 0, 65536)
		r.out[i].Buffers = [][]byte{nil}
	}
	return r
}

func (r *pollReader) read() (int, error) {
	for {
		n, err := r.pc.ReadBatch(r.in, 0)
		var ne net.Error
		if err != nil && errors.As(err, &ne) && ne.Timeout() {
			continue
		}
		return n, err
	}
}

// readJoined is read: every reader waits through the poller here.
func (r *pollReader) readJoined() (int, error) { return r.read() }
func (r *pollReader) leave()                   {}
func (r *pollReader) close()                   {}

func (r *pollReader) request(i int) ([]byte, netip.AddrPort, netip.Addr, bool) {
	from, ok := r.in[i].Addr.(*net.UDPAddr)
	if !ok {
		return nil, netip.AddrPort{}, netip.Addr{}, false
	}
	ap := from.AddrPort()
	return r.in[i].Buffers[0][:r.in[i].N], netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), netip.Addr{}, true
}

func (r *pollReader) outBuf(k int) []byte { return r.bufs[k] }

func (r *pollReader) queue(k, i int, resp []byte) {
	r.bufs[k] = resp[:0]
	r.out[k].Buffers[0], r.out[k].Addr = resp, r.in[i].Addr
}

func (r *pollReader) send(k int) {
	for sent := 0; sent < k; {
		m, err := r.pc.WriteBatch(r.out[sent:k], 0)
		if err != nil && sent+m < k {
			// Skip the datagram that failed.
			r.log.Debug("udp send failed", "to", r.out[sent+m].Addr, "err", err)
			m++
		} else if err != nil {
			return
		}
		sent += m
	}
}

// control runs f with the socket's descriptor.
func (u *udpSocket) control(f func(fd uintptr)) error {
	rc, err := u.conn.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(f)
}

// datagramSockets is how many sockets a DatagramServer binds: one, as
// SO_REUSEPORT does not spread datagrams by source everywhere.
func datagramSockets() int { return 1 }

func setReusePort(_, _ string, _ syscall.RawConn) error { return nil }

// exclusive has nothing to check: one socket, bound without SO_REUSEPORT.
func exclusive(netip.AddrPort, []*udpServer) error { return nil }
