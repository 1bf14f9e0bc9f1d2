package ifmib

import (
	"cmp"
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/tsnmp/tsnmp/internal/rawsys"
	"github.com/tsnmp/tsnmp/internal/rowsort"
	"github.com/tsnmp/tsnmp/mib/internal/rtnl"
)

// link is what the kernel tells about an interface.
type link struct {
	index  uint32
	name   string
	arphrd uint16 // ifi_type
	flags  uint32 // IFF_*
	oper   uint8  // IF_OPER_* (IFLA_OPERSTATE)
	mtu    uint32
	addr   []byte
	alias  string
	stats  stats
}

// stats are the kernel's 64-bit interface counters (struct
// rtnl_link_stats64).
type stats struct {
	rxBytes, rxPackets, rxMulticast, rxErrors, rxDropped, rxNoHandler uint64
	txBytes, txPackets, txErrors, txDropped                           uint64
}

// rxUcast returns the received packets that were not multicast (Linux
// counts no broadcasts).
func (s *stats) rxUcast() uint64 {
	if s.rxMulticast > s.rxPackets {
		return 0
	}
	return s.rxPackets - s.rxMulticast
}

// kernel reads interfaces from the Linux kernel.
//
// An RTM_GETLINK dump carries everything about every interface, but costs
// about 1.5 KB and several microseconds of kernel time per interface. The
// attributes IF-MIB needs besides the counters (name, type, flags,
// operstate, MTU, address, alias) change rarely, and the kernel announces
// every change on the RTNLGRP_LINK multicast group. So the kernel keeps
// the attributes of the last RTM_GETLINK dump and, while no announcement
// arrived since, takes only the counters with an RTM_GETSTATS dump
// (IFLA_STATS_LINK_64 alone: about 230 bytes an interface, a fifth of the
// time). A lost announcement (ENOBUFS), an interrupted dump, a stats dump
// that names other interfaces than the links, or a failed watch all fall
// back to full dumps, so no attribute is served stale for longer than one
// refresh. A failed watch is dialled again at the next refresh.
//
// Dumps are read with a 64 KB buffer, which lets the kernel fill 32 KB
// per read (it sizes dump messages by the reader's largest buffer); a
// page-sized buffer, as general netlink libraries use, costs three times
// the kernel time for 1,000 interfaces.
//
// Not safe for concurrent use; the MIB serializes calls.
type kernel struct {
	nl    int        // NETLINK_ROUTE socket for dumps, -1 until dialled
	watch *linkWatch // nil until dialled
	fd    int        // AF_INET datagram socket for ioctls, -1 until needed
	seq   uint32
	buf   []byte

	info    []link         // attributes of the last RTM_GETLINK dump, by ifindex
	pos     map[uint32]int // ifindex -> position in info
	noStats bool           // RTM_GETSTATS unsupported: always dump links

	linkDumps, statsDumps atomic.Uint64
}

func newKernel() kernel { return kernel{nl: -1, fd: -1} }

// linkWatch listens for RTNLGRP_LINK announcements.
type linkWatch struct {
	conn    *netlink.Conn
	changed atomic.Bool // an interface changed since the last links dump
	dead    atomic.Bool // the watch stopped: trust no cached attributes
}

func (w *linkWatch) run() {
	for {
		_, err := w.conn.Receive()
		w.changed.Store(true)
		if err != nil && !errors.Is(err, unix.ENOBUFS) {
			w.dead.Store(true) // closed, or the socket failed
			return
		}
	}
}

// dial opens the dump and watch sockets in the calling thread's network
// namespace. The watch joins its group before the first dump, so no change
// falls between the two.
func (k *kernel) dial() error {
	w, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{Groups: unix.RTMGRP_LINK})
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err == nil {
		// A dump answers at once; the timeout only guards against a
		// kernel that never does.
		tv := unix.Timeval{Sec: 5}
		err = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		if err == nil {
			err = unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
		}
		if err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		w.Close()
		return err
	}
	k.nl, k.watch = fd, &linkWatch{conn: w}
	k.info, k.pos = nil, nil
	if k.buf == nil {
		k.buf = make([]byte, 64<<10)
	}
	go k.watch.run()
	return nil
}

// links returns every interface with current counters: from a full
// RTM_GETLINK dump when an interface may have changed, else from the cached
// attributes and an RTM_GETSTATS dump. The sockets are kept for the next
// call and re-dialled after an error.
func (k *kernel) links() ([]link, error) {
	if k.nl >= 0 && k.watch.dead.Load() {
		k.closeNetlink() // the watch failed: start afresh
	}
	if k.nl < 0 {
		if err := k.dial(); err != nil {
			return nil, err
		}
	}
	var err error
	if k.info == nil || k.noStats || k.watch.changed.Swap(false) {
		err = k.dumpLinks()
	} else if err = k.dumpStats(); errors.Is(err, errStale) {
		err = k.dumpLinks()
	}
	if err != nil {
		k.closeNetlink()
		return nil, err
	}
	return slices.Clone(k.info), nil
}

var errStale = errors.New("ifmib: interfaces changed")

// dumpLinks replaces the cached attributes and counters with an
// RTM_GETLINK dump.
func (k *kernel) dumpLinks() error {
	k.linkDumps.Add(1)
	info := make([]link, 0, len(k.info))
	err := k.dump(unix.RTM_GETLINK, make([]byte, unix.SizeofIfInfomsg), func(typ uint16, b []byte) error {
		if typ != unix.RTM_NEWLINK {
			return nil
		}
		l, err := parseLink(b)
		info = append(info, l)
		return err
	})
	if err != nil {
		return err
	}
	rowsort.Stable(info, func(a, b *link) int { return cmp.Compare(a.index, b.index) })
	k.info = info
	k.pos = make(map[uint32]int, len(info))
	for i := range info {
		k.pos[info[i].index] = i
	}
	return nil
}

// dumpStats refreshes the cached counters with an RTM_GETSTATS dump. It
// returns errStale when the dump names other interfaces than the cache.
func (k *kernel) dumpStats() error {
	k.statsDumps.Add(1)
	req := make([]byte, sizeofIfStatsMsg)
	binary.NativeEndian.PutUint32(req[8:], 1<<(unix.IFLA_STATS_LINK_64-1)) // filter_mask
	n := 0
	err := k.dump(unix.RTM_GETSTATS, req, func(typ uint16, b []byte) error {
		if typ != unix.RTM_NEWSTATS {
			return nil
		}
		if len(b) < sizeofIfStatsMsg {
			return rtnl.ErrShort
		}
		i, ok := k.pos[binary.NativeEndian.Uint32(b[4:])]
		if !ok {
			return errStale
		}
		n++
		return rtnl.Attrs(b[sizeofIfStatsMsg:], func(typ uint16, v []byte) {
			if typ == unix.IFLA_STATS_LINK_64 {
				k.info[i].stats = parseStats64(v)
			}
		})
	})
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL):
		k.noStats = true // before Linux 4.7
		return errStale
	case err != nil:
		return err
	case n != len(k.info):
		return errStale
	}
	return nil
}

// setAlias sets the alias (IFLA_IFALIAS) of interface index; an empty
// alias removes it. It needs CAP_NET_ADMIN in the socket's network
// namespace. The next links call dumps the links again.
func (k *kernel) setAlias(index uint32, alias []byte) error {
	if k.nl < 0 {
		if err := k.dial(); err != nil {
			return err
		}
	}
	attrLen := unix.SizeofRtAttr + len(alias)
	body := make([]byte, unix.SizeofIfInfomsg+rtnl.Align(attrLen))
	binary.NativeEndian.PutUint32(body[4:], index) // ifi_index
	a := body[unix.SizeofIfInfomsg:]
	binary.NativeEndian.PutUint16(a[0:], uint16(attrLen))
	binary.NativeEndian.PutUint16(a[2:], unix.IFLA_IFALIAS)
	copy(a[unix.SizeofRtAttr:], alias)
	err := k.exchange(unix.RTM_NEWLINK, unix.NLM_F_ACK, body, func(uint16, []byte) error { return nil })
	k.watch.changed.Store(true) // the announcement may not have arrived yet
	return err
}

// sizeofIfStatsMsg is the size of struct if_stats_msg.
const sizeofIfStatsMsg = 12

// dump sends an rtnetlink dump request of type typ and calls fn with the
// type and payload of every message of the answer. After an error from fn
// the rest of the answer is read and dropped, so that the socket is ready
// for the next request, and the error is returned.
func (k *kernel) dump(typ uint16, body []byte, fn func(typ uint16, b []byte) error) error {
	return k.exchange(typ, unix.NLM_F_DUMP, body, fn)
}

// exchange sends an rtnetlink request of type typ with the given flags
// besides NLM_F_REQUEST and reads the answer up to its NLMSG_DONE or its
// acknowledgement (NLMSG_ERROR), calling fn as dump does.
func (k *kernel) exchange(typ, flags uint16, body []byte, fn func(typ uint16, b []byte) error) error {
	k.seq++
	// Without telling the runtime (internal/rawsys): the kernel answers
	// at once.
	if err := rawsys.Send(k.nl, rtnl.Request(typ, flags, k.seq, body), 0); err != nil {
		return err
	}
	var fnErr, endErr error
	for done := false; !done; {
		n, err := rawsys.RecvWait(k.nl, k.buf, 5*time.Second)
		if err != nil {
			return err
		}
		err = rtnl.Each(k.buf[:n], func(h rtnl.Header, data []byte) bool {
			if h.Seq != k.seq {
				return true // left from an earlier dump
			}
			if h.Flags&unix.NLM_F_DUMP_INTR != 0 {
				k.watch.changed.Store(true) // inconsistent: read again next time
			}
			if done, endErr = h.End(data); done {
				return false // done, or an acknowledgement
			}
			if fnErr == nil {
				fnErr = fn(h.Type, data)
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	if endErr != nil {
		return endErr
	}
	return fnErr
}

// parseLink decodes an RTM_NEWLINK message: struct ifinfomsg and the
// attributes IF-MIB uses. Nothing in the result refers to b.
func parseLink(b []byte) (link, error) {
	if len(b) < unix.SizeofIfInfomsg {
		return link{}, rtnl.ErrShort
	}
	l := link{
		arphrd: binary.NativeEndian.Uint16(b[2:]),
		index:  binary.NativeEndian.Uint32(b[4:]),
		flags:  binary.NativeEndian.Uint32(b[8:]),
	}
	err := rtnl.Attrs(b[unix.SizeofIfInfomsg:], func(typ uint16, v []byte) {
		switch typ {
		case unix.IFLA_IFNAME:
			l.name = rtnl.CString(v)
		case unix.IFLA_MTU:
			if len(v) >= 4 {
				l.mtu = binary.NativeEndian.Uint32(v)
			}
		case unix.IFLA_ADDRESS:
			l.addr = slices.Clone(v)
		case unix.IFLA_OPERSTATE:
			if len(v) >= 1 {
				l.oper = v[0]
			}
		case unix.IFLA_IFALIAS:
			l.alias = rtnl.CString(v)
		case unix.IFLA_STATS64:
			l.stats = parseStats64(v)
		}
	})
	return l, err
}

// parseStats64 decodes the counters IF-MIB uses from struct
// rtnl_link_stats64, tolerating the shorter struct of older kernels.
func parseStats64(b []byte) stats {
	field := func(i int) uint64 {
		if len(b) < 8*(i+1) {
			return 0
		}
		return binary.NativeEndian.Uint64(b[8*i:])
	}
	return stats{
		rxPackets: field(0), txPackets: field(1), rxBytes: field(2), txBytes: field(3),
		rxErrors: field(4), txErrors: field(5),
		rxDropped: field(6) + field(15), // rx_dropped + rx_missed_errors
		txDropped: field(7), rxMulticast: field(8), rxNoHandler: field(23),
	}
}

// ethtoolCmd is struct ethtool_cmd from <linux/ethtool.h>.
type ethtoolCmd struct {
	cmd           uint32
	supported     uint32
	advertising   uint32
	speed         uint16
	duplex        uint8
	port          uint8
	phyAddress    uint8
	transceiver   uint8
	autoneg       uint8
	mdioSupport   uint8
	maxtxpkt      uint32
	maxrxpkt      uint32
	speedHi       uint16
	ethTpMdix     uint8
	ethTpMdixCtrl uint8
	lpAdvertising uint32
	reserved      [2]uint32
}

// ifreqData is struct ifreq with ifr_data set.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// speedMbps returns the link speed in Mb/s that ETHTOOL_GSET reports for
// the interface name, and false when the driver has none (no ethtool link
// settings, or SPEED_UNKNOWN).
func (k *kernel) speedMbps(name string) (uint32, bool) {
	if k.fd < 0 {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return 0, false
		}
		k.fd = fd
	}
	if len(name) >= unix.IFNAMSIZ {
		return 0, false
	}
	cmd := ethtoolCmd{cmd: unix.ETHTOOL_GSET}
	var ifr ifreqData
	copy(ifr.name[:], name)
	ifr.data = unsafe.Pointer(&cmd)
	errno := rawsys.Ioctl(k.fd, unix.SIOCETHTOOL, unsafe.Pointer(&ifr))
	runtime.KeepAlive(&cmd)
	if errno != 0 {
		return 0, false
	}
	s := uint32(cmd.speedHi)<<16 | uint32(cmd.speed)
	if s == 0 || s == 0xffff || s == 0xffffffff { // SPEED_UNKNOWN in 16 or 32 bits
		return 0, false
	}
	return s, true
}

func (k *kernel) closeNetlink() error {
	var errs []error
	if k.nl >= 0 {
		errs = append(errs, unix.Close(k.nl), k.watch.conn.Close())
		k.nl, k.watch = -1, nil
	}
	k.info, k.pos = nil, nil
	return errors.Join(errs...)
}

func (k *kernel) close() error {
	errs := []error{k.closeNetlink()}
	if k.fd >= 0 {
		errs = append(errs, unix.Close(k.fd))
		k.fd = -1
	}
	return errors.Join(errs...)
}
