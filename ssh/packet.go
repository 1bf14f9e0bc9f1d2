package ssh

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// packetConn is the binary packet protocol (RFC 4253 section 6) over a
// stream: sequence numbers and the current cipher in each direction.
// Reads happen on one goroutine; writes are serialised by the caller.
type packetConn struct {
	conn net.Conn
	// br buffers reads while a packet is being read or the peer's data
	// is buffered; between packets it goes back to a pool and the next
	// packet's first octets are read into first (readPacket). Writes
	// take a buffer from a pool for each packet. An idle connection thus
	// keeps no buffer.
	br    *bufio.Reader
	src   prefixReader
	first [16]byte
	rand  io.Reader

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
		conn:   c,
		src:    prefixReader{conn: c},
		rand:   rand,
		readC:  none,
		writeC: none2,
	}
}

// Pooled buffers. Larger packets are read and written straight through
// (the ciphers read with io.ReadFull into buffers of their own and write
// a whole packet in one Write).
var (
	readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 8<<10) }}
	writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}
)

// prefixReader reads octets already read from conn, then conn.
type prefixReader struct {
	pre  []byte
	conn net.Conn
	// waitUntil is the read deadline waitRead left on conn (zero: none).
	// It is for the wait between packets only: a read of the rest of a
	// packet that reaches it clears it and goes on.
	waitUntil time.Time
}

func (r *prefixReader) Read(b []byte) (int, error) {
	if len(r.pre) > 0 {
		n := copy(b, r.pre)
		r.pre = r.pre[n:]
		return n, nil
	}
	n, err := r.conn.Read(b)
	if n == 0 && !r.waitUntil.IsZero() && errors.Is(err, os.ErrDeadlineExceeded) {
		r.waitUntil = time.Time{}
		if err = r.conn.SetReadDeadline(time.Time{}); err == nil {
			n, err = r.conn.Read(b)
		}
	}
	return n, err
}

// reader returns the read buffer, taking one from the pool if the
// connection holds none.
func (p *packetConn) reader() *bufio.Reader {
	if p.br == nil {
		p.br = readers.Get().(*bufio.Reader)
		p.br.Reset(&p.src)
	}
	return p.br
}

// releaseReader gives the read buffer back if it holds nothing unread.
func (p *packetConn) releaseReader() {
	if p.br != nil && p.br.Buffered() == 0 && len(p.src.pre) == 0 {
		p.br.Reset(nil)
		readers.Put(p.br)
		p.br = nil
	}
}

// write writes b through a pooled buffer, in as few Writes as its size
// allows.
func (p *packetConn) write(f func(w *bufio.Writer) error) error {
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(p.conn)
	err := f(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	writers.Put(bw)
	return err
}

func (p *packetConn) writePacket(payload []byte) error {
	if len(payload) > maxPacket-64 {
		return errors.New("ssh: packet too large")
	}
	err := p.write(func(w *bufio.Writer) error { return p.writeC.writePacket(p.writeSeq, w, p.rand, payload) })
	if err != nil {
		return err
	}
	p.writeSeq++
	p.writeBytes += uint64(len(payload))
	p.writePackets++
	return nil
}

// idle reports whether no input is buffered: the next packet's first
// octets are still in the socket.
func (p *packetConn) idle() bool { return p.br == nil && len(p.src.pre) == 0 }

// waitRead waits about d (at least 3/4 of it) for the next packet's
// first octets when no input is buffered (idle). It reports false, with
// nothing read, if none came: the caller may then hand the socket to a
// poller (Park). The read deadline it sets stays in place and is moved
// only when it is a quarter of d short: a busy connection does not set
// one for every packet.
func (p *packetConn) waitRead(d time.Duration) (bool, error) {
	until := time.Now().Add(d)
	if p.src.waitUntil.Before(until.Add(-d / 4)) {
		if err := p.conn.SetReadDeadline(until); err != nil {
			return false, err
		}
		p.src.waitUntil = until
	}
	n, err := p.conn.Read(p.first[:])
	if n > 0 {
		p.src.pre = p.first[:n]
		return true, nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return false, nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return false, err
}

func (p *packetConn) readPacket() ([]byte, error) {
	if p.idle() {
		// Wait for the packet without a buffer (through src, which
		// goes on past waitRead's deadline).
		n, err := p.src.Read(p.first[:])
		if n == 0 {
			if err == nil {
				err = io.ErrNoProgress
			}
			return nil, err
		}
		p.src.pre = p.first[:n]
	}
	payload, err := p.readC.readPacket(p.readSeq, p.reader())
	p.releaseReader()
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
	if _, err := p.conn.Write([]byte(softwareVersion + "\r\n")); err != nil {
		return nil, nil, err
	}
	for lines := 0; lines < 64; lines++ {
		line, err := readVersionLine(p.reader())
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
