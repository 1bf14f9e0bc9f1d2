package ssh

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
)

// packetConn is the binary packet protocol (RFC 4253 section 6) over a
// stream: sequence numbers and the current cipher in each direction.
// Reads happen on one goroutine; writes are serialised by the caller.
type packetConn struct {
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	rand io.Reader

	readSeq, writeSeq uint32
	readC, writeC     packetCipher

	readBytes  atomic.Uint64 // since the last key exchange; read under transport.mu by writers
	writeBytes uint64
	// Packets since the last key exchange; a re-exchange starts well before
	// the 32-bit sequence number could repeat (RFC 4344 section 3.1).
	readPackets  atomic.Uint32
	writePackets uint32
}

func newPacketConn(c net.Conn, rand io.Reader) *packetConn {
	none, _ := newNoneCipher(nil, nil, nil, nil)
	none2, _ := newNoneCipher(nil, nil, nil, nil)
	return &packetConn{
		conn: c,
		// Small buffers: an idle connection keeps them. Larger packets
		// are read and written straight through (the ciphers read
		// with io.ReadFull and write a whole packet in one Write).
		br:     bufio.NewReaderSize(c, 8<<10),
		bw:     bufio.NewWriterSize(c, 4<<10),
		rand:   rand,
		readC:  none,
		writeC: none2,
	}
}

func (p *packetConn) writePacket(payload []byte) error {
	if len(payload) > maxPacket-64 {
		return errors.New("ssh: packet too large")
	}
	if err := p.writeC.writePacket(p.writeSeq, p.bw, p.rand, payload); err != nil {
		return err
	}
	p.writeSeq++
	p.writeBytes += uint64(len(payload))
	p.writePackets++
	return p.bw.Flush()
}

func (p *packetConn) readPacket() ([]byte, error) {
	payload, err := p.readC.readPacket(p.readSeq, p.br)
	if err != nil {
		return nil, err
	}
	p.readSeq++
	p.readBytes.Add(uint64(len(payload)))
	p.readPackets.Add(1)
	return payload, nil
}

const softwareVersion = "SSH-2.0-tsnmp_1.0"

// exchangeVersions sends our identification string and reads the peer's
// (RFC 4253 section 4.2). A client skips lines that precede the peer's
// version line; a server does not accept any.
func exchangeVersions(p *packetConn, isClient bool) (ours, theirs []byte, err error) {
	ours = []byte(softwareVersion)
	if _, err := p.bw.WriteString(softwareVersion + "\r\n"); err != nil {
		return nil, nil, err
	}
	if err := p.bw.Flush(); err != nil {
		return nil, nil, err
	}
	for lines := 0; lines < 64; lines++ {
		line, err := readVersionLine(p.br)
		if err != nil {
			return nil, nil, err
		}
		if bytes.HasPrefix(line, []byte("SSH-")) {
			if !bytes.HasPrefix(line, []byte("SSH-2.0-")) && !bytes.HasPrefix(line, []byte("SSH-1.99-")) {
				return nil, nil, fmt.Errorf("ssh: unsupported protocol version %q", line)
			}
			return ours, line, nil
		}
		if !isClient {
			return nil, nil, errors.New("ssh: client sent data before its version line")
		}
	}
	return nil, nil, errors.New("ssh: too many lines before version line")
}

func readVersionLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for len(line) < 255 {
		b, err := r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("ssh: reading version: %w", err)
		}
		if b == '\n' {
			return bytes.TrimSuffix(line, []byte("\r")), nil
		}
		line = append(line, b)
	}
	return nil, errors.New("ssh: version line too long")
}
