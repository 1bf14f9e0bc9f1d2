// Package pcap reads the classic pcap files tcpdump writes, enough to count
// what experiments put on the wire: frame and IP lengths, ports and the
// TCP or UDP payload of each packet.
package pcap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Packet is one captured frame.
type Packet struct {
	Time time.Time
	// Len is the frame's length on the wire (link header included).
	Len int
	// Version is the IP version (4 or 6), 0 for a frame that is not IP.
	Version int
	// IPLen is the IP packet's length: what it costs at the IP level.
	IPLen            int
	Proto            uint8 // 6 TCP, 17 UDP
	SrcPort, DstPort uint16
	Payload          int   // bytes above TCP or UDP
	Flags            uint8 // TCP flags
}

// TCP flags.
const (
	FlagFIN = 0x01
	FlagSYN = 0x02
	FlagRST = 0x04
)

// Read parses a pcap file of Ethernet (loopback), Linux cooked or raw IP
// frames. A record cut short at the end (tcpdump stopped while writing)
// ends the file without an error.
func Read(r io.Reader) ([]Packet, error) {
	br := bufio.NewReader(r)
	var gh [24]byte
	if _, err := io.ReadFull(br, gh[:]); err != nil {
		return nil, fmt.Errorf("pcap: header: %w", err)
	}
	var bo binary.ByteOrder
	nano := false
	switch binary.LittleEndian.Uint32(gh[:4]) {
	case 0xa1b2c3d4:
		bo = binary.LittleEndian
	case 0xa1b23c4d:
		bo, nano = binary.LittleEndian, true
	case 0xd4c3b2a1:
		bo = binary.BigEndian
	case 0x4d3cb2a1:
		bo, nano = binary.BigEndian, true
	default:
		return nil, errors.New("pcap: not a pcap file")
	}
	var skip int
	switch link := bo.Uint32(gh[20:24]); link {
	case 1: // Ethernet
		skip = 14
	case 101, 228, 229: // raw IP
		skip = 0
	case 113: // Linux cooked
		skip = 16
	default:
		return nil, fmt.Errorf("pcap: link type %d not supported", link)
	}
	var out []Packet
	var rh [16]byte
	buf := make([]byte, 0, 256)
	for {
		if _, err := io.ReadFull(br, rh[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return out, nil
			}
			return out, err
		}
		sec, frac := int64(bo.Uint32(rh[0:4])), int64(bo.Uint32(rh[4:8]))
		incl, orig := int(bo.Uint32(rh[8:12])), int(bo.Uint32(rh[12:16]))
		if incl > 1<<18 {
			return out, errors.New("pcap: record too large")
		}
		if cap(buf) < incl {
			buf = make([]byte, incl)
		}
		data := buf[:incl]
		if _, err := io.ReadFull(br, data); err != nil {
			return out, nil
		}
		if !nano {
			frac *= 1000
		}
		p := Packet{Time: time.Unix(sec, frac), Len: orig}
		if len(data) > skip {
			parseIP(data[skip:], &p)
		}
		out = append(out, p)
	}
}

func parseIP(ip []byte, p *Packet) {
	var l4 []byte
	var l4len int
	switch ip[0] >> 4 {
	case 4:
		if len(ip) < 20 {
			return
		}
		ihl := int(ip[0]&15) * 4
		if len(ip) < ihl {
			return
		}
		p.Version, p.IPLen, p.Proto = 4, int(binary.BigEndian.Uint16(ip[2:4])), ip[9]
		l4, l4len = ip[ihl:], p.IPLen-ihl
	case 6:
		if len(ip) < 40 {
			return
		}
		p.Version, p.IPLen, p.Proto = 6, 40+int(binary.BigEndian.Uint16(ip[4:6])), ip[6]
		l4, l4len = ip[40:], p.IPLen-40
	default:
		return
	}
	if len(l4) < 8 {
		return
	}
	p.SrcPort, p.DstPort = binary.BigEndian.Uint16(l4[0:2]), binary.BigEndian.Uint16(l4[2:4])
	switch p.Proto {
	case 17:
		p.Payload = l4len - 8
	case 6:
		if len(l4) >= 14 {
			p.Flags = l4[13]
			p.Payload = l4len - int(l4[12]>>4)*4
		}
	}
}
