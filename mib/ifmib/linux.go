package ifmib

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/jsimonetti/rtnetlink/v2"
	"golang.org/x/sys/unix"
)

// link is what one RTM_GETLINK dump tells about an interface.
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

// stats are the kernel's 64-bit interface counters (IFLA_STATS64).
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

// kernel reads interfaces from the Linux kernel: one rtnetlink dump for
// all of them, and an ethtool ioctl for the speed of one.
type kernel struct {
	conn *rtnetlink.Conn
	fd   int // AF_INET datagram socket for ioctls, -1 until needed
}

// links dumps every interface with a single RTM_GETLINK request. The
// connection is kept for the next dump and re-dialled after an error.
func (k *kernel) links() ([]link, error) {
	if k.conn == nil {
		c, err := rtnetlink.Dial(nil)
		if err != nil {
			return nil, err
		}
		k.conn = c
	}
	msgs, err := k.conn.Link.List()
	if err != nil {
		k.conn.Close()
		k.conn = nil
		return nil, err
	}
	out := make([]link, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		a := m.Attributes
		if a == nil {
			continue
		}
		l := link{
			index:  m.Index,
			name:   a.Name,
			arphrd: m.Type,
			flags:  m.Flags,
			oper:   uint8(a.OperationalState),
			mtu:    a.MTU,
			addr:   a.Address,
		}
		if a.Alias != nil {
			l.alias = *a.Alias
		}
		if s := a.Stats64; s != nil {
			l.stats = stats{
				rxBytes: s.RXBytes, rxPackets: s.RXPackets, rxMulticast: s.Multicast,
				rxErrors: s.RXErrors, rxDropped: s.RXDropped + s.RXMissedErrors, rxNoHandler: s.RXNoHandler,
				txBytes: s.TXBytes, txPackets: s.TXPackets, txErrors: s.TXErrors, txDropped: s.TXDropped,
			}
		}
		out = append(out, l)
	}
	return out, nil
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
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(k.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
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

func (k *kernel) close() error {
	var errs []error
	if k.conn != nil {
		errs = append(errs, k.conn.Close())
		k.conn = nil
	}
	if k.fd >= 0 {
		errs = append(errs, unix.Close(k.fd))
		k.fd = -1
	}
	return errors.Join(errs...)
}
