package notify

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// LinkEvent is a change of an interface's ifOperStatus that calls for
// linkUp or linkDown (RFC 2863): Up is true for linkUp.
type LinkEvent struct {
	Index       uint32
	Up          bool
	AdminStatus int // ifAdminStatus: up(1), down(2)
	OperStatus  int // ifOperStatus
}

// LinkWatcher turns the kernel's RTNLGRP_LINK announcements into link
// events. It has a netlink socket of its own: mib/ifmib's watch only
// tells its cache that something changed, is dialled at the first
// request, and must not carry the notification originator's state.
type LinkWatcher struct {
	fd     int
	closed atomic.Bool
	mu     sync.Mutex
	oper   map[uint32]int
	done   chan struct{}
}

// WatchLinks opens the watch in the calling thread's network namespace,
// learns every link's current state with a dump, and calls fn for each
// event until Close.
func WatchLinks(fn func(LinkEvent)) (*LinkWatcher, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: unix.RTMGRP_LINK}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// A receive timeout lets Close end the reader: shutdown(2) does not
	// wake a netlink socket's reader.
	tv := unix.NsecToTimeval(int64(200e6))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, err
	}
	w := &LinkWatcher{fd: fd, oper: map[uint32]int{}, done: make(chan struct{})}
	// The dump's answers arrive on the same socket before the
	// announcements that follow it; they set the initial states silently.
	req := make([]byte, unix.NLMSG_HDRLEN+unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.RTM_GETLINK)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], 1)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	go w.run(fn)
	return w, nil
}

// Close stops the watch.
func (w *LinkWatcher) Close() error {
	w.closed.Store(true)
	<-w.done
	return unix.Close(w.fd)
}

func (w *LinkWatcher) run(fn func(LinkEvent)) {
	defer close(w.done)
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(w.fd, buf, 0)
		if w.closed.Load() {
			return
		}
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return
		}
		if n == 0 {
			return
		}
		for b := buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			l := int(binary.NativeEndian.Uint32(b[0:]))
			if l < unix.NLMSG_HDRLEN || l > len(b) {
				break
			}
			typ := binary.NativeEndian.Uint16(b[4:])
			seq := binary.NativeEndian.Uint32(b[8:])
			if typ == unix.RTM_NEWLINK {
				if ev, ok := w.parse(b[unix.NLMSG_HDRLEN:l], seq == 1); ok {
					fn(ev)
				}
			}
			b = b[min((l+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1), len(b)):]
		}
	}
}

// operStatus maps the kernel's IF_OPER_* to ifOperStatus.
var operStatus = [...]int{0: 4, 1: 6, 2: 2, 3: 7, 4: 3, 5: 5, 6: 1}

// parse reads an RTM_NEWLINK message and returns the event it makes, if
// any; dump answers only record the state.
func (w *LinkWatcher) parse(b []byte, dump bool) (LinkEvent, bool) {
	if len(b) < unix.SizeofIfInfomsg {
		return LinkEvent{}, false
	}
	index := binary.NativeEndian.Uint32(b[4:])
	flags := binary.NativeEndian.Uint32(b[8:])
	oper := -1
	for a := b[unix.SizeofIfInfomsg:]; len(a) >= 4; {
		al := int(binary.NativeEndian.Uint16(a[0:]))
		at := binary.NativeEndian.Uint16(a[2:]) & 0x3fff
		if al < 4 || al > len(a) {
			break
		}
		if at == unix.IFLA_OPERSTATE && al >= 5 && int(a[4]) < len(operStatus) {
			oper = operStatus[a[4]]
		}
		a = a[min((al+3)&^3, len(a)):]
	}
	if oper == -1 {
		return LinkEvent{}, false
	}
	if oper == 4 && flags&unix.IFF_UP != 0 && flags&unix.IFF_RUNNING != 0 {
		oper = 1 // "unknown" but running (loopback, tun): up, as ifOperStatus shows it
	}
	admin := 2
	if flags&unix.IFF_UP != 0 {
		admin = 1
	}
	w.mu.Lock()
	old, known := w.oper[index]
	w.oper[index] = oper
	w.mu.Unlock()
	if dump || !known && oper != 1 {
		return LinkEvent{}, false
	}
	switch {
	case oper == 1 && old != 1:
		return LinkEvent{Index: index, Up: true, AdminStatus: admin, OperStatus: oper}, true
	case known && old == 1 && oper != 1 && oper != 6:
		return LinkEvent{Index: index, AdminStatus: admin, OperStatus: oper}, true
	}
	return LinkEvent{}, false
}
