package pcap

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// capture builds a little-endian Ethernet pcap holding frames.
func capture(frames ...[]byte) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := make([]byte, 24)
	le.PutUint32(hdr[0:], 0xa1b2c3d4)
	le.PutUint32(hdr[20:], 1)
	b.Write(hdr)
	for _, f := range frames {
		rec := make([]byte, 16)
		le.PutUint32(rec[8:], uint32(len(f)))
		le.PutUint32(rec[12:], uint32(len(f)))
		b.Write(rec)
		b.Write(f)
	}
	return b.Bytes()
}

func TestRead(t *testing.T) {
	// IPv4 UDP 1000 -> 161 with 5 bytes, and IPv6 TCP SYN 2000 -> 10161
	// with 3 bytes.
	v4 := make([]byte, 14+20+8+5)
	v4[14], v4[14+3], v4[14+9] = 0x45, 33, 17
	binary.BigEndian.PutUint16(v4[34:], 1000)
	binary.BigEndian.PutUint16(v4[36:], 161)
	v6 := make([]byte, 14+40+20+3)
	v6[14], v6[14+6] = 0x60, 6
	binary.BigEndian.PutUint16(v6[14+4:], 23)
	binary.BigEndian.PutUint16(v6[54:], 2000)
	binary.BigEndian.PutUint16(v6[56:], 10161)
	v6[54+12], v6[54+13] = 5<<4, FlagSYN
	ps, err := Read(bytes.NewReader(capture(v4, v6, []byte{1, 2, 3})))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("%d packets", len(ps))
	}
	if p := ps[0]; p.Len != 47 || p.Version != 4 || p.IPLen != 33 || p.Proto != 17 || p.SrcPort != 1000 || p.DstPort != 161 || p.Payload != 5 {
		t.Errorf("IPv4: %+v", p)
	}
	if p := ps[1]; p.Version != 6 || p.IPLen != 63 || p.Proto != 6 || p.DstPort != 10161 || p.Payload != 3 || p.Flags != FlagSYN {
		t.Errorf("IPv6: %+v", p)
	}
	if p := ps[2]; p.Version != 0 || p.Len != 3 {
		t.Errorf("runt frame: %+v", p)
	}
	// A record cut short at the end is dropped without an error.
	full := capture(v4, v4)
	if ps, err := Read(bytes.NewReader(full[:len(full)-4])); err != nil || len(ps) != 1 {
		t.Errorf("truncated tail: %d packets, %v", len(ps), err)
	}
	if _, err := Read(bytes.NewReader([]byte("not a pcap file at all...."))); err == nil {
		t.Error("garbage accepted")
	}
}

func FuzzRead(f *testing.F) {
	f.Add(capture(make([]byte, 60)))
	f.Fuzz(func(t *testing.T, b []byte) {
		Read(bytes.NewReader(b))
	})
}
