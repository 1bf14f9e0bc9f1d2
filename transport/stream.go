package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// ErrMessageTooLarge is returned for a stream message above the size limit.
var ErrMessageTooLarge = errors.New("transport: message exceeds size limit")

// ReadStreamMessage reads one BER-framed SNMP message from a byte stream
// (RFC 3430 §2.1: messages are sent back to back, each delimited by its own
// BER length). The message is appended to buf[:0]; messages larger than max
// bytes are refused with ErrMessageTooLarge.
func ReadStreamMessage(r *bufio.Reader, buf []byte, max int) ([]byte, error) {
	hdr, err := r.Peek(2)
	if err != nil {
		return nil, err
	}
	if hdr[0] != 0x30 {
		return nil, fmt.Errorf("transport: stream message starts with 0x%02x, not a SEQUENCE", hdr[0])
	}
	n, hl := int(hdr[1]), 2
	if n >= 0x80 {
		k := n & 0x7f
		if k == 0 || k > 4 {
			return nil, errors.New("transport: bad length in stream message")
		}
		h, err := r.Peek(2 + k)
		if err != nil {
			return nil, unexpected(err)
		}
		n = 0
		for _, c := range h[2:] {
			n = n<<8 | int(c)
		}
		hl += k
	}
	if n > max-hl {
		return nil, ErrMessageTooLarge
	}
	total := hl + n
	if cap(buf) < total {
		buf = make([]byte, total)
	}
	buf = buf[:total]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, unexpected(err)
	}
	return buf, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
