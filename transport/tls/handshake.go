package tls

import (
	"bytes"
	gotls "crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"net"
)

// hsConn is the TCP connection under crypto/tls while it does an agent's
// handshake. It hands crypto/tls one record at a time, never an octet
// beyond the record it is reading, so that when the handshake ends
// everything the client sent after its Finished is still in the socket
// for the agent's own record layer (records.go). It keeps the records
// that pass in either direction (they may be sealed with the application
// keys: TLS 1.3 session tickets, TLS 1.2 Finished messages), and the
// secrets crypto/tls reports through its key log, so that the session
// can continue in records.go with exact keys and sequence numbers.
// Nothing of this leaves the process.
type hsConn struct {
	net.Conn
	through bool // the session stays with crypto/tls: pass everything

	hdr   [recordHeaderLen]byte
	nhdr  int
	left  int    // octets left of the record being read
	cur   []byte // the record being read, when kept
	reads [][]byte

	wpart  []byte // octets written that do not yet make a whole record
	writes [][]byte
	kept   int

	clientRandom, serverRandom []byte
	master                     []byte // TLS 1.2 master secret
	resumedMaster              []byte // a resumed TLS 1.2 session's, from the session store
	clientSecret, serverSecret []byte // TLS 1.3 application traffic secrets
}

// maxKept bounds the octets of handshake records kept per session; a
// handshake that passes more (long certificate chains) continues with
// crypto/tls.
const maxKept = 64 << 10

func (h *hsConn) keep(rec []byte) bool {
	h.kept += len(rec)
	return h.kept <= maxKept
}

// Read returns at most the rest of the record being read, or of its
// header.
func (h *hsConn) Read(b []byte) (int, error) {
	if h.through {
		return h.Conn.Read(b)
	}
	if h.left == 0 {
		n, err := h.Conn.Read(b[:min(len(b), recordHeaderLen-h.nhdr)])
		copy(h.hdr[h.nhdr:], b[:n])
		h.nhdr += n
		if h.nhdr == recordHeaderLen {
			h.nhdr = 0
			h.left = int(binary.BigEndian.Uint16(h.hdr[3:]))
			h.cur = append(make([]byte, 0, recordHeaderLen+h.left), h.hdr[:]...)
			if h.left == 0 {
				h.endRead()
			}
		}
		return n, err
	}
	n, err := h.Conn.Read(b[:min(len(b), h.left)])
	h.cur = append(h.cur, b[:n]...)
	if h.left -= n; h.left == 0 {
		h.endRead()
	}
	return n, err
}

func (h *hsConn) endRead() {
	if rec := h.cur; h.clientRandom == nil && rec[0] == recordTypeHS && len(rec) >= recordHeaderLen+6+32 && rec[recordHeaderLen] == 1 {
		// ClientHello (a resumed TLS 1.2 session logs no key).
		h.clientRandom = append([]byte(nil), rec[recordHeaderLen+6:recordHeaderLen+6+32]...)
	}
	if h.keep(h.cur) {
		h.reads = append(h.reads, h.cur)
	}
	h.cur = nil
}

// Write keeps the records crypto/tls writes.
func (h *hsConn) Write(b []byte) (int, error) {
	if !h.through {
		h.wpart = append(h.wpart, b...)
		for len(h.wpart) >= recordHeaderLen {
			n := recordHeaderLen + int(binary.BigEndian.Uint16(h.wpart[3:]))
			if len(h.wpart) < n {
				break
			}
			rec := append([]byte(nil), h.wpart[:n]...)
			if h.serverRandom == nil && rec[0] == recordTypeHS && n >= recordHeaderLen+6+32 && rec[recordHeaderLen] == 2 {
				// ServerHello: type, length (3), version (2), random.
				h.serverRandom = append([]byte(nil), rec[recordHeaderLen+6:recordHeaderLen+6+32]...)
			}
			if h.keep(rec) {
				h.writes = append(h.writes, rec)
			}
			h.wpart = h.wpart[n:]
		}
		if len(h.wpart) == 0 {
			h.wpart = nil
		}
	}
	return h.Conn.Write(b)
}

// keyLog receives crypto/tls's key log lines (NSS key log format).
type keyLog hsConn

func (k *keyLog) Write(line []byte) (int, error) {
	f := bytes.Fields(line)
	if len(f) != 3 {
		return len(line), nil
	}
	cr, err1 := hex.DecodeString(string(f[1]))
	secret, err2 := hex.DecodeString(string(f[2]))
	if err1 != nil || err2 != nil {
		return len(line), nil
	}
	h := (*hsConn)(k)
	switch string(f[0]) {
	case "CLIENT_RANDOM":
		h.clientRandom, h.master = cr, secret
	case "CLIENT_TRAFFIC_SECRET_0":
		h.clientSecret = secret
	case "SERVER_TRAFFIC_SECRET_0":
		h.serverSecret = secret
	}
	return len(line), nil
}

// records returns the record layer that continues the session whose
// handshake ended with state cs, or nil when the session stays with
// crypto/tls (a suite that is not AEAD, missing secrets, too much
// handshake data kept, or keys that do not open the records they
// must). Either way the handshake's records and secrets are dropped,
// and from now on h passes everything.
func (h *hsConn) records(cs gotls.ConnectionState) *records {
	defer h.forget()
	if h.kept > maxKept || h.left != 0 || h.nhdr != 0 || len(h.wpart) != 0 {
		return nil
	}
	p, ok := aeadSuites[cs.CipherSuite]
	if !ok || p.tls13 != (cs.Version == gotls.VersionTLS13) {
		return nil
	}
	r := newRecords(h.Conn, p)
	if p.tls13 {
		if h.clientSecret == nil || h.serverSecret == nil {
			return nil
		}
		r.in.set13(p, h.clientSecret)
		r.out.set13(p, h.serverSecret)
	} else {
		master := h.master
		if master == nil && cs.DidResume {
			master = h.resumedMaster
		}
		if master == nil || len(h.clientRandom) != 32 || len(h.serverRandom) != 32 {
			return nil
		}
		ck, sk, civ, siv := p.keys12(master, h.clientRandom, h.serverRandom)
		r.in.set(ck, civ)
		r.out.set(sk, siv)
		clear(ck)
		clear(sk)
	}
	r.in.seq = sealedWith(p, &r.in, h.reads)
	r.out.seq = sealedWith(p, &r.out, h.writes)
	if !p.tls13 && (r.in.seq == 0 || r.out.seq == 0) {
		// Each side's Finished is sealed with the new keys: these
		// keys are not the session's.
		return nil
	}
	return r
}

// sealedWith returns how many of recs open with h's key in sequence,
// starting from h's sequence number: the records crypto/tls sealed or
// opened with that key.
func sealedWith(p suiteParams, h *half, recs [][]byte) uint64 {
	t := &records{suite: p, in: *h}
	defer t.in.wipe()
	for _, rec := range recs {
		t.open(append([]byte(nil), rec...))
	}
	return t.in.seq
}

// forget drops the handshake's records and secrets.
func (h *hsConn) forget() {
	h.through = true
	for _, s := range [][]byte{h.master, h.resumedMaster, h.clientSecret, h.serverSecret} {
		clear(s)
	}
	for _, r := range h.reads {
		clear(r)
	}
	for _, r := range h.writes {
		clear(r)
	}
	h.reads, h.writes, h.cur, h.wpart = nil, nil, nil, nil
	h.master, h.resumedMaster, h.clientSecret, h.serverSecret = nil, nil, nil, nil
	h.clientRandom, h.serverRandom = nil, nil
}
