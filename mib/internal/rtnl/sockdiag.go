package rtnl

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Socket is an inet_diag_msg: one TCP or UDP socket as sock_diag reports
// it.
type Socket struct {
	Family       uint8
	State        uint8 // TCP_* (TCP_ESTABLISHED = 1 ... TCP_CLOSING = 11)
	SrcPort      uint16
	DstPort      uint16
	Src, Dst     []byte // 4 or 16 bytes
	Interface    uint32
	UID, Inode   uint32
	RQueue, WQue uint32
}

const sizeofInetDiagMsg = 72

// ParseSocket decodes an inet_diag_msg.
func ParseSocket(b []byte) (Socket, error) {
	if len(b) < sizeofInetDiagMsg {
		return Socket{}, ErrShort
	}
	s := Socket{Family: b[0], State: b[1]}
	s.SrcPort = binary.BigEndian.Uint16(b[4:])
	s.DstPort = binary.BigEndian.Uint16(b[6:])
	n := 4
	switch s.Family {
	case unix.AF_INET:
	case unix.AF_INET6:
		n = 16
	default:
		return s, ErrShort
	}
	s.Src = append([]byte(nil), b[8:8+n]...)
	s.Dst = append([]byte(nil), b[24:24+n]...)
	s.Interface = binary.NativeEndian.Uint32(b[40:])
	s.RQueue = binary.NativeEndian.Uint32(b[56:])
	s.WQue = binary.NativeEndian.Uint32(b[60:])
	s.UID = binary.NativeEndian.Uint32(b[64:])
	s.Inode = binary.NativeEndian.Uint32(b[68:])
	return s, nil
}

// Sockets dumps the sockets of a family (AF_INET or AF_INET6) and protocol
// (IPPROTO_TCP or IPPROTO_UDP) in every state, with one SOCK_DIAG_BY_FAMILY
// request on a NETLINK_SOCK_DIAG socket.
func Sockets(family, protocol uint8) ([]Socket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 5}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return nil, err
	}
	// struct inet_diag_req_v2: family, protocol, ext, pad, states, id (48).
	body := make([]byte, 56)
	body[0], body[1] = family, protocol
	binary.NativeEndian.PutUint32(body[4:], 0xffffffff) // every state
	req := make([]byte, unix.NLMSG_HDRLEN+len(body))
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], 1)
	copy(req[unix.NLMSG_HDRLEN:], body)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	buf := make([]byte, 64<<10)
	var out []Socket
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		done, err := Messages(buf[:n], func(typ uint16, b []byte) {
			if typ != unix.SOCK_DIAG_BY_FAMILY {
				return
			}
			if s, err := ParseSocket(b); err == nil {
				out = append(out, s)
			}
		})
		if err != nil || done {
			return out, err
		}
	}
}
