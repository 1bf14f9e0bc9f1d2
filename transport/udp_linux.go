package transport

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
)

// udpSocket is a UDP server's socket in blocking mode, outside the
// runtime's network poller: within a burst of requests the primary
// reader waits for the next datagram in recvmmsg(2) on its own thread,
// which the kernel wakes when the datagram arrives (see mmsgReader.read).
// Through the poller, every datagram of a walk (one request outstanding
// at a time) cost a goroutine park and wake-up: an epoll_wait return on
// some thread, a scheduler pass and a futex wake-up of another thread
// spinning for work, several times the CPU of the request itself; only
// the wait between bursts goes through it, on an epoll set of the
// reader's own (pollWait). Close shuts the socket down, which ends the
// readers' waits, and the descriptor is closed once no reader uses it.
type udpSocket struct {
	fd     int
	family int // of the socket: AF_INET or AF_INET6

	// wmu keeps the descriptor from being closed under writeTo.
	wmu     sync.RWMutex
	mu      sync.Mutex
	serving bool          // Serve runs: its readers may be in a system call on fd
	closed  atomic.Bool   // set under mu
	fdDone  chan struct{} // closed once fd is closed (made by close while Serve runs)

	zones sync.Map // interface name -> zoneIndex, for writeTo

	// waits are the epoll files of the readers that joined (readJoined),
	// woken by close.
	waits map[*os.File]bool

	// pktinfo: the socket is bound to a wildcard address, so the kernel
	// tells the readers each datagram's destination (IP_PKTINFO,
	// IPV6_RECVPKTINFO) and each reply is sent from it. A reply from
	// the address routing picks instead reaches a manager that asked
	// another of the host's addresses from an address it does not
	// expect: a connected socket (most managers') or a stateful
	// firewall drops it.
	pktinfo bool
}

// zoneIndex is an interface's index as writeTo last looked it up.
type zoneIndex struct {
	index uint32
	at    time.Time
}

// zoneLookups counts the interface index lookups of writeTo (tests).
var zoneLookups atomic.Int64

// zoneIndex returns the index of the interface an IPv6 zone names (a
// name or a number), looked up with SIOCGIFINDEX on the socket (its
// network namespace's interface) once a minute at most, as zoneNames
// does the other way: every send to a link-local peer looked it up
// before, and net.InterfaceByName dumps every interface over netlink.
func (u *udpSocket) zoneIndex(zone string) uint32 {
	if v, ok := u.zones.Load(zone); ok {
		if z := v.(zoneIndex); time.Since(z.at) < time.Minute {
			return z.index
		}
	}
	zoneLookups.Add(1)
	var index uint32
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		index = uint32(n)
	} else if ifr, err := unix.NewIfreq(zone); err == nil {
		u.wmu.RLock()
		if !u.closed.Load() && unix.IoctlIfreq(u.fd, unix.SIOCGIFINDEX, ifr) == nil {
			index = ifr.Uint32()
		}
		u.wmu.RUnlock()
	}
	u.zones.Store(zone, zoneIndex{index, time.Now()})
	return index
}

// newUDPSocket takes c's socket over: a duplicate of its descriptor, set
// to blocking, and c is closed (which also takes it out of the poller).
func newUDPSocket(c *net.UDPConn) (*udpSocket, error) {
	defer c.Close()
	fd, err := rawsys.DupBlocking(c)
	if err != nil {
		return nil, err
	}
	u := &udpSocket{fd: fd, family: unix.AF_INET6}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		u.family = unix.AF_INET
		if sa.Addr == [4]byte{} {
			err = unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
			u.pktinfo = true
		}
	case *unix.SockaddrInet6:
		if sa.Addr == [16]byte{} {
			// IPv4 datagrams of a dual-stack socket come with an
			// IPV6_PKTINFO too, their destination v4-mapped.
			err = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
			u.pktinfo = true
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("setsockopt", err)
	}
	return u, nil
}

// serve marks the socket in use by Serve's readers; false if it is closed.
func (u *udpSocket) serve() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed.Load() || u.serving {
		return false
	}
	u.serving = true
	return true
}

// served: Serve's readers have returned; the descriptor is closed if
// Close came meanwhile.
func (u *udpSocket) served() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.serving = false
	if u.closed.Load() {
		u.closeFD()
		if u.fdDone != nil {
			close(u.fdDone)
		}
	}
}

func (u *udpSocket) closeFD() error {
	u.wmu.Lock()
	defer u.wmu.Unlock()
	return unix.Close(u.fd)
}

// writeTo sends b to to, outside the readers' batches: from from, when
// the socket is bound to a wildcard address and from is valid (a
// request's destination, as a reader found it; IPv6 link-local with its
// zone), else from the address routing picks.
func (u *udpSocket) writeTo(b []byte, from netip.Addr, to netip.AddrPort) error {
	var sa unix.Sockaddr
	a := to.Addr()
	if u.family == unix.AF_INET {
		if !a.Unmap().Is4() {
			return &net.AddrError{Err: "not an IPv4 address", Addr: to.String()}
		}
		sa = &unix.SockaddrInet4{Port: int(to.Port()), Addr: a.Unmap().As4()}
	} else {
		sa6 := &unix.SockaddrInet6{Port: int(to.Port()), Addr: a.As16()}
		if z := a.Zone(); z != "" {
			sa6.ZoneId = u.zoneIndex(z)
		}
		sa = sa6
	}
	var oob []byte
	if u.pktinfo && from.IsValid() {
		var ifindex uint32
		if z := from.Zone(); z != "" && from.IsLinkLocalUnicast() {
			ifindex = u.zoneIndex(z)
		}
		var c ctlBuf
		oob = c.bytes(putPktinfo(&c, u.family, from, ifindex))
	}
	u.wmu.RLock()
	defer u.wmu.RUnlock()
	if u.closed.Load() {
		return net.ErrClosed
	}
	for {
		err := unix.Sendmsg(u.fd, b, oob, sa, 0)
		switch {
		case err == unix.EINTR:
		case err != nil && len(oob) > 0:
			oob = nil // from cannot be the source any more (see mmsgReader.send)
		default:
			return err
		}
	}
}

// closeWait bounds how long close waits for Serve's readers to let go of
// the descriptor: a reader still answering a slow request (an AgentX
// subagent's) closes it when it returns.
const closeWait = time.Second

// close shuts the socket down: readers waiting in recvmmsg return (Linux
// wakes them on shutdown even when the socket is not connected, and
// later reads return at once). The descriptor itself is closed when no
// reader can be using it any more, so that its number is not reused under
// a reader's system call; with wait, close waits for that, at most
// closeWait, so that the address is free for another program when it
// returns (Serve's own goroutine, which closes the descriptor when it
// returns, does not wait).
func (u *udpSocket) close(wait bool) error {
	u.mu.Lock()
	if u.closed.Load() {
		u.mu.Unlock()
		return net.ErrClosed
	}
	u.closed.Store(true)
	for f := range u.waits {
		f.SetReadDeadline(time.Unix(1, 0))
	}
	if !u.serving {
		defer u.mu.Unlock()
		return u.closeFD()
	}
	unix.Shutdown(u.fd, unix.SHUT_RDWR)
	if !wait {
		u.mu.Unlock()
		return nil
	}
	done := make(chan struct{})
	u.fdDone = done
	u.mu.Unlock()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	return nil
}

// stopReceiving makes the kernel drop the datagrams that arrive from now
// on, with a socket filter that accepts nothing; those already queued
// stay to be read.
func (u *udpSocket) stopReceiving() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed.Load() {
		return net.ErrClosed
	}
	drop := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
	return unix.SetsockoptSockFprog(u.fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: 1, Filter: &drop[0]})
}

// pending reports whether a datagram waits in the socket's receive queue
// (SIOCINQ: the size of the next one).
func (u *udpSocket) pending() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed.Load() {
		return false
	}
	n, err := unix.IoctlGetInt(u.fd, unix.SIOCINQ)
	return err == nil && n > 0
}

// mmsgReader reads and writes batches with recvmmsg(2) and sendmmsg(2);
// its message headers point at its own buffers, set up once.
type mmsgReader struct {
	u       *udpSocket
	log     *slog.Logger
	in      [udpBatch]unix.Mmsghdr
	inIov   [udpBatch]unix.Iovec
	inName  [udpBatch]unix.RawSockaddrAny
	inBuf   [udpBatch][]byte
	out     [udpBatch]unix.Mmsghdr
	outIov  [udpBatch]unix.Iovec
	outName [udpBatch]unix.RawSockaddrAny
	outBufs [udpBatch][]byte
	zones   zoneNames

	// On a socket with pktinfo: the control messages received with the
	// datagrams and sent with the replies, and each datagram's
	// destination as request found it.
	inCtl  [udpBatch]ctlBuf
	outCtl [udpBatch]ctlBuf
	dst    [udpBatch]pktDst

	// wait is the epoll instance through which this reader waits while
	// it has joined (readJoined); nil before, and noWait when it cannot
	// be had (the reader then blocks in recvmmsg as the primary does).
	wait   *pollWait
	noWait bool

	// burst: the primary reader answered a request and has not been
	// idle for burstWait since (read).
	burst bool
}

// pollWait is an epoll instance of its own holding the socket, itself
// registered with the runtime's network poller: a reader parked on it
// waits for the socket's next datagram without a thread blocked in a
// system call, so holds no P. The socket is in the set only while the
// reader has joined: the runtime's poller is woken by every datagram
// while it is.
type pollWait struct {
	f     *os.File
	rc    syscall.RawConn
	added bool
}

func (u *udpSocket) newReader(log *slog.Logger) udpReader {
	r := &mmsgReader{u: u, log: log}
	for i := range r.in {
		r.inBuf[i] = make([]byte, 65536)
		r.inIov[i].Base = &r.inBuf[i][0]
		r.inIov[i].SetLen(len(r.inBuf[i]))
		r.in[i].Hdr.Iov = &r.inIov[i]
		r.in[i].Hdr.Iovlen = 1
		r.in[i].Hdr.Name = (*byte)(unsafe.Pointer(&r.inName[i]))
		r.outBufs[i] = make([]byte, 0, 65536)
		r.out[i].Hdr.Iov = &r.outIov[i]
		r.out[i].Hdr.Iovlen = 1
		r.out[i].Hdr.Name = (*byte)(unsafe.Pointer(&r.outName[i]))
		if u.pktinfo {
			r.in[i].Hdr.Control = (*byte)(unsafe.Pointer(&r.inCtl[i]))
		}
	}
	return r
}

// burstWait is how long the primary reader waits for the next request
// in the kernel, unseen by the runtime, before it waits through the
// runtime's network poller: longer than a manager takes between the
// requests of a walk, short enough that a reader idle between bursts
// holds no P. As SO_RCVTIMEO the kernel rounds it up to its clock tick
// (4 ms at 250 Hz).
const burstWait = 2 * time.Millisecond

// read waits for at least one datagram and reads what is queued. Between
// bursts of requests the primary reader waits through the runtime's
// network poller (waitIdle), holding no P and no thread in a system call;
// once a request came, it waits for the next in recvmmsg(2), made without
// telling the runtime (internal/rawsys) and bounded by burstWait (the
// socket's SO_RCVTIMEO while the burst lasts): one system call per
// request, where a ppoll(2) before the receive took two (0.86 to 0.89 of
// the agent's CPU per walk from cached readings, 0.95 and 1.00 with fresh
// ones, alternated walk by walk). A blocking read seen by the runtime woke its
// monitor thread at the start of every burst, which then polled every
// 20 µs for a millisecond: 0.7 ms of the 1.2 ms a lone GetBulk of
// sysUpTime cost, 1 to 2 ms of a walk. With a single P the reader blocks
// in recvmmsg without a bound, seen by the runtime (readBlocking): a P
// held by a raw wait would keep every other goroutine waiting.
func (r *mmsgReader) read() (int, error) {
	for {
		if r.u.closed.Load() {
			return 0, net.ErrClosed
		}
		if !r.burst {
			// Checked once per burst: GOMAXPROCS takes the scheduler's
			// lock.
			if runtime.GOMAXPROCS(0) < 2 {
				return r.readBlocking()
			}
			n, err := r.waitIdle()
			if n > 0 && err == nil {
				r.startBurst()
			}
			if err != nil || n > 0 {
				return n, err
			}
			continue
		}
		// MSG_WAITFORONE: wait for the first datagram (SO_RCVTIMEO
		// bounds the wait, and a signal ends it), then take only what
		// is already queued.
		n, errno := r.recv(unix.MSG_WAITFORONE, true)
		if r.u.closed.Load() {
			return 0, net.ErrClosed
		}
		switch errno {
		case 0:
			if n > 0 {
				return n, nil
			}
		case unix.EINTR:
			// The runtime's signal: let it preempt this goroutine or
			// stop the world before waiting again.
			runtime.Gosched()
		case unix.EAGAIN:
			// Nothing for burstWait: the burst is over.
			r.endBurst()
		case unix.ECONNREFUSED, unix.EHOSTUNREACH, unix.ENETUNREACH:
			// An ICMP error for an earlier reply (see readBlocking).
		default:
			return 0, &net.OpError{Op: "recvmmsg", Net: "udp", Err: errno}
		}
	}
}

// startBurst bounds the socket's blocking receives by burstWait
// (SO_RCVTIMEO) for the burst that begins; endBurst lifts the bound, so
// that a reader blocked in recvmmsg between bursts (readBlocking) is not
// woken every burstWait. A reader that cannot set it waits through the
// poller for every datagram instead.
func (r *mmsgReader) startBurst() {
	tv := unix.NsecToTimeval(int64(burstWait))
	r.burst = rawsys.SetsockoptTimeval(r.u.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) == nil
}

func (r *mmsgReader) endBurst() {
	r.burst = false
	var tv unix.Timeval
	rawsys.SetsockoptTimeval(r.u.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
}

// waitIdle waits through the poller (readJoined) and then takes the
// socket out of the reader's epoll set, so that the datagrams of the
// burst do not wake the runtime's poller.
func (r *mmsgReader) waitIdle() (int, error) {
	n, err := r.readJoined()
	r.leave()
	return n, err
}

// readBlocking waits for a datagram in a blocking recvmmsg(2).
func (r *mmsgReader) readBlocking() (int, error) {
	for {
		// MSG_WAITFORONE: wait for the first datagram, then take only
		// what is already queued.
		n, errno := r.recv(unix.MSG_WAITFORONE, false)
		if r.u.closed.Load() {
			return 0, net.ErrClosed
		}
		switch errno {
		case 0:
			return n, nil
		case unix.EINTR, unix.EAGAIN:
			continue
		case unix.ECONNREFUSED, unix.EHOSTUNREACH, unix.ENETUNREACH:
			// An ICMP error for an earlier reply, reported on the
			// next read: nothing to do with the requests waiting.
			continue
		}
		return 0, &net.OpError{Op: "recvmmsg", Net: "udp", Err: errno}
	}
}

// recv reads a batch with recvmmsg(2) and flags, without telling the
// runtime when raw is set: for a read that cannot wait (MSG_DONTWAIT) or
// whose wait SO_RCVTIMEO bounds (a burst's).
func (r *mmsgReader) recv(flags int, raw bool) (int, syscall.Errno) {
	for i := range r.in {
		r.in[i].Hdr.Namelen = unix.SizeofSockaddrAny
		if r.u.pktinfo {
			r.in[i].Hdr.SetControllen(len(ctlBuf{}) * 8)
		}
	}
	if raw {
		return rawsys.Recvmmsg(r.u.fd, &r.in[0], udpBatch, flags)
	}
	n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(r.u.fd), uintptr(unsafe.Pointer(&r.in[0])), udpBatch, uintptr(flags), 0, 0)
	return int(n), errno
}

// readJoined is read for a reader that joined the primary one, and the
// primary one's wait between bursts: it takes the datagrams queued now
// or, if there are none, waits for the next through the runtime's
// network poller (pollWait) and takes what is queued then, which may be
// nothing (0) when another reader was first. A
// second reader blocked in recvmmsg kept a P in a system call: with every
// P so held, the runtime's monitor took it back at its next round,
// started a thread to run it and went back to polling every 20 µs, and
// after the slow request the blocked reader, not the primary one,
// answered the next request of a walk, on a thread that had slept.
func (r *mmsgReader) readJoined() (int, error) {
	if r.wait == nil && !r.noWait && r.openWait() != nil {
		r.noWait = true
	}
	if r.noWait {
		return r.readBlocking()
	}
	if !r.wait.added {
		if err := epollCtl(r.wait.rc, unix.EPOLL_CTL_ADD, r.u.fd); err != nil {
			return r.readBlocking()
		}
		r.wait.added = true
	}
	var n int
	var errno syscall.Errno
	calls := 0
	err := r.wait.rc.Read(func(uintptr) bool {
		calls++
		n, errno = r.recv(unix.MSG_DONTWAIT, true)
		// Wait once for the socket to become readable, then return
		// whatever the read found.
		return errno != unix.EAGAIN || calls > 1
	})
	if r.u.closed.Load() {
		return 0, net.ErrClosed
	}
	if err != nil {
		// The epoll file failed (it is never closed before the
		// reader ends): read as the primary reader does.
		r.noWait = true
		return r.readBlocking()
	}
	switch errno {
	case 0:
		return n, nil
	case unix.EINTR, unix.EAGAIN, unix.ECONNREFUSED, unix.EHOSTUNREACH, unix.ENETUNREACH:
		return 0, nil
	}
	return 0, &net.OpError{Op: "recvmmsg", Net: "udp", Err: errno}
}

// openWait makes the reader's pollWait.
func (r *mmsgReader) openWait() error {
	f, rc, err := rawsys.NewEpollFile("udp-wait")
	if err != nil {
		return err
	}
	u := r.u
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed.Load() {
		f.Close()
		return net.ErrClosed
	}
	if u.waits == nil {
		u.waits = map[*os.File]bool{}
	}
	u.waits[f] = true
	r.wait = &pollWait{f: f, rc: rc}
	return nil
}

// epollCtl adds the socket fd to, or removes it from, the epoll set rc.
func epollCtl(rc syscall.RawConn, op, fd int) error {
	var err error
	if cerr := rc.Control(func(ep uintptr) {
		err = rawsys.EpollCtl(int(ep), op, fd, unix.EPOLLIN)
	}); cerr != nil {
		return cerr
	}
	return err
}

// leave takes the socket out of the reader's epoll set: the reader no
// longer reads until it joins again.
func (r *mmsgReader) leave() {
	if r.wait != nil && r.wait.added {
		epollCtl(r.wait.rc, unix.EPOLL_CTL_DEL, r.u.fd)
		r.wait.added = false
	}
}

// close releases the reader's epoll instance.
func (r *mmsgReader) close() {
	if r.wait == nil {
		return
	}
	r.u.mu.Lock()
	delete(r.u.waits, r.wait.f)
	r.u.mu.Unlock()
	r.wait.f.Close()
	r.wait = nil
}

func (r *mmsgReader) request(i int) ([]byte, netip.AddrPort, netip.Addr, bool) {
	h := &r.in[i]
	if h.Hdr.Flags&unix.MSG_TRUNC != 0 {
		return nil, netip.AddrPort{}, netip.Addr{}, false
	}
	ap, ok := r.addrPort(&r.inName[i])
	var to netip.Addr
	if r.u.pktinfo {
		r.dst[i] = parsePktinfo(r.inCtl[i].bytes(int(h.Hdr.Controllen)))
		to = r.dst[i].addr.Unmap()
		if to.IsLinkLocalUnicast() && to.Is6() && r.dst[i].ifindex != 0 {
			to = to.WithZone(r.zones.name(r.u.fd, r.dst[i].ifindex))
		}
	}
	return r.inBuf[i][:h.Len], ap, to, ok
}

// ctlBuf holds a control message: room for an in6_pktinfo, 8-byte
// aligned as a cmsghdr must be.
type ctlBuf [8]uint64

// bytes returns the first n bytes of c.
func (c *ctlBuf) bytes(n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(c)), len(c)*8)[:min(n, len(c)*8)]
}

// pktDst is what the kernel told of a datagram's destination.
type pktDst struct {
	addr    netip.Addr // the destination address of the datagram
	src     netip.Addr // the address to reply from; invalid: let routing choose
	ifindex uint32     // the interface it came in on (IPv6)
}

// parsePktinfo reads the IP_PKTINFO or IPV6_PKTINFO message of a received
// datagram's control data.
func parsePktinfo(b []byte) pktDst {
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		n := int(h.Len)
		if n < unix.SizeofCmsghdr || n > len(b) {
			break
		}
		data := b[unix.CmsgLen(0):n]
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			p := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			// ipi_spec_dst is the address to answer from: the
			// destination itself, or for a broadcast or multicast
			// one the receiving interface's address.
			return pktDst{addr: netip.AddrFrom4(p.Addr), src: netip.AddrFrom4(p.Spec_dst)}
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			p := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			d := pktDst{addr: netip.AddrFrom16(p.Addr), ifindex: p.Ifindex}
			if !d.addr.IsMulticast() {
				d.src = d.addr
			}
			return d
		}
		b = b[min(unix.CmsgSpace(n-unix.CmsgLen(0)), len(b)):]
	}
	return pktDst{}
}

func (r *mmsgReader) addrPort(name *unix.RawSockaddrAny) (netip.AddrPort, bool) {
	switch name.Addr.Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(name))
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), port(sa.Port)), true
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(name))
		a := netip.AddrFrom16(sa.Addr).Unmap()
		if sa.Scope_id != 0 && a.Is6() {
			a = a.WithZone(r.zones.name(r.u.fd, sa.Scope_id))
		}
		return netip.AddrPortFrom(a, port(sa.Port)), true
	}
	return netip.AddrPort{}, false
}

// port reads a sockaddr's port, kept in network byte order.
func port(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}

func (r *mmsgReader) outBuf(k int) []byte { return r.outBufs[k] }

func (r *mmsgReader) queue(k, i int, resp []byte) {
	r.outBufs[k] = resp[:0]
	r.outName[k] = r.inName[i]
	r.out[k].Hdr.Namelen = r.in[i].Hdr.Namelen
	r.out[k].Hdr.Control = nil
	r.out[k].Hdr.SetControllen(0)
	if d := r.dst[i]; r.u.pktinfo && d.src.IsValid() {
		r.setSource(k, d)
	}
	if len(resp) == 0 {
		r.outIov[k].Base = nil
	} else {
		r.outIov[k].Base = &resp[0]
	}
	r.outIov[k].SetLen(len(resp))
}

// setSource makes reply k go out from d's source address.
func (r *mmsgReader) setSource(k int, d pktDst) {
	if n := putPktinfo(&r.outCtl[k], r.u.family, d.src, d.ifindex); n > 0 {
		r.out[k].Hdr.Control = (*byte)(unsafe.Pointer(&r.outCtl[k]))
		r.out[k].Hdr.SetControllen(n)
	}
}

// putPktinfo writes into c the control message (IP_PKTINFO or
// IPV6_PKTINFO) that makes a datagram of a socket of family go out from
// src, and returns its length: 0 when src cannot be an IPv4 socket's.
// ifindex is the interface of an IPv6 link-local src.
func putPktinfo(c *ctlBuf, family int, src netip.Addr, ifindex uint32) int {
	h := (*unix.Cmsghdr)(unsafe.Pointer(c))
	data := unsafe.Add(unsafe.Pointer(c), unix.CmsgLen(0))
	if family == unix.AF_INET {
		if src = src.Unmap(); !src.Is4() {
			return 0
		}
		h.Level, h.Type = unix.IPPROTO_IP, unix.IP_PKTINFO
		h.SetLen(unix.CmsgLen(unix.SizeofInet4Pktinfo))
		*(*unix.Inet4Pktinfo)(data) = unix.Inet4Pktinfo{Spec_dst: src.As4()}
		return unix.CmsgSpace(unix.SizeofInet4Pktinfo)
	}
	if !src.IsLinkLocalUnicast() {
		ifindex = 0
	}
	h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_PKTINFO
	h.SetLen(unix.CmsgLen(unix.SizeofInet6Pktinfo))
	*(*unix.Inet6Pktinfo)(data) = unix.Inet6Pktinfo{Addr: src.As16(), Ifindex: ifindex} // IPv4 v4-mapped
	return unix.CmsgSpace(unix.SizeofInet6Pktinfo)
}

// send sends the replies, first without waiting and without telling the
// runtime (see read), then, for any the socket's buffer had no room for,
// in a blocking sendmmsg(2).
func (r *mmsgReader) send(k int) {
	sent := 0
	if n, errno := rawsys.Sendmmsg(r.u.fd, &r.out[0], k); errno == 0 {
		sent = n
	}
	for sent < k {
		n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(r.u.fd), uintptr(unsafe.Pointer(&r.out[sent])), uintptr(k-sent), 0, 0, 0)
		switch errno {
		case 0:
			sent += int(n)
		case unix.EINTR:
		default:
			if r.out[sent].Hdr.Control != nil {
				// The address the request came to cannot be the
				// source (it was removed meanwhile: EINVAL for IPv6,
				// ENETUNREACH for IPv4): reply from the one routing
				// picks.
				r.out[sent].Hdr.Control = nil
				r.out[sent].Hdr.SetControllen(0)
				continue
			}
			// The first datagram failed (a firewall, an unreachable
			// source): skip it.
			if r.log.Enabled(context.Background(), slog.LevelDebug) {
				to, _ := r.addrPort(&r.outName[sent])
				r.log.Debug("udp send failed", "to", to, "err", errno)
			}
			sent++
		}
	}
}

// zoneNames names interfaces by index for IPv6 link-local sources, as
// the net package does, looking the name up again after a minute. The
// name comes from the socket (SIOCGIFNAME), so it is the interface of the
// socket's network namespace whatever namespace the reading thread is in.
type zoneNames struct {
	at    time.Time
	names map[uint32]string
}

func (z *zoneNames) name(fd int, index uint32) string {
	if time.Since(z.at) > time.Minute {
		z.names, z.at = map[uint32]string{}, time.Now()
	}
	if n, ok := z.names[index]; ok {
		return n
	}
	n := strconv.FormatUint(uint64(index), 10)
	if ifr, err := unix.NewIfreq(""); err == nil {
		ifr.SetUint32(index)
		if unix.IoctlIfreq(fd, unix.SIOCGIFNAME, ifr) == nil {
			n = ifr.Name()
		}
	}
	z.names[index] = n
	return n
}

// control runs f with the socket's descriptor.
func (u *udpSocket) control(f func(fd uintptr)) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed.Load() {
		return net.ErrClosed
	}
	f(uintptr(u.fd))
	return nil
}

// datagramSockets is how many sockets a DatagramServer binds: one per CPU.
func datagramSockets() int { return runtime.GOMAXPROCS(0) }

// setReusePort lets sockets share an address, the kernel spreading
// datagrams over them by source (SO_REUSEPORT).
func setReusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
		return err
	}
	return serr
}

// inode returns the inode number of the socket, which /proc/net/udp
// lists it by.
func (u *udpSocket) inode() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(u.fd, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// exclusive checks, once a DatagramServer's sockets are bound, that no
// other socket shares their address: SO_REUSEPORT lets any socket of the
// same user that sets it too join the group, silently, so the kernel's
// own check of bind(2) does not hold. It reads the calling thread's
// network namespace's socket tables (/proc/thread-self/net/udp and udp6)
// and refuses, with EADDRINUSE, any other UDP socket on the same port
// whose address is the same or a wildcard on either side. Two groups
// bound at the same moment cannot both pass: each checks after its own
// bind, so the one that checks last sees the other's sockets (both may
// fail; neither serves half the peers).
func exclusive(local netip.AddrPort, socks []*udpServer) error {
	ours := map[uint64]bool{}
	for _, s := range socks {
		ino, err := s.sock.inode()
		if err != nil {
			return err
		}
		ours[ino] = true
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, table := range []string{"/proc/thread-self/net/udp", "/proc/thread-self/net/udp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			if os.IsNotExist(err) {
				continue // no IPv6 in the kernel
			}
			return err
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 {
				continue
			}
			a, ok := procAddrPort(f[1])
			ino, err := strconv.ParseUint(f[9], 10, 64)
			if !ok || err != nil || ours[ino] || a.Port() != local.Port() {
				continue
			}
			if x, y := a.Addr().Unmap(), local.Addr().Unmap().WithZone(""); x == y || x.IsUnspecified() || y.IsUnspecified() {
				return &net.OpError{Op: "listen", Net: "udp", Addr: net.UDPAddrFromAddrPort(local),
					Err: os.NewSyscallError("bind", unix.EADDRINUSE)}
			}
		}
	}
	return nil
}

// procAddrPort parses a local_address of /proc/net/udp ("0100007F:00A1")
// or udp6: the address as 32-bit words in host order (little-endian
// here), then the port.
func procAddrPort(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || (len(h) != 8 && len(h) != 32) {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return netip.AddrPort{}, false
	}
	for i := 0; i+4 <= len(raw); i += 4 {
		w := binary.LittleEndian.Uint32(raw[i:])
		binary.BigEndian.PutUint32(raw[i:], w)
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a, uint16(port)), true
}
