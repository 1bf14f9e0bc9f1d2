package dtls

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/dtls/v3"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// Ticket is what a manager keeps to resume a DTLS session: the agent's
// opaque ticket and the PSK both ends derived from the full handshake.
type Ticket struct {
	Ticket  []byte
	PSK     []byte
	Expires time.Time
}

// TicketStore keeps one ticket per agent.
type TicketStore interface {
	Get(key string) (*Ticket, bool)
	Put(key string, t *Ticket) // nil deletes
}

// MemoryTickets is a TicketStore in memory.
type MemoryTickets struct {
	mu sync.Mutex
	m  map[string]*Ticket
}

// Get implements TicketStore.
func (m *MemoryTickets) Get(key string) (*Ticket, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.m[key]
	return t, ok
}

// Put implements TicketStore.
func (m *MemoryTickets) Put(key string, t *Ticket) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]*Ticket{}
	}
	if t == nil {
		delete(m.m, key)
	} else {
		m.m[key] = t
	}
}

// FileTickets keeps tickets in files (mode 0600 in a 0700 directory), one
// per agent and configuration, so that separate processes resume. A file
// that cannot be read or parsed counts as absent.
type FileTickets struct {
	Dir, Scope string
}

func (f *FileTickets) path(key string) string {
	h := sha256.Sum256([]byte(f.Scope + "\x00dtls\x00" + key))
	return filepath.Join(f.Dir, "dtls-ticket-"+hex.EncodeToString(h[:12]))
}

const ticketFileMagic = "TSNMPDT1"

// Get implements TicketStore.
func (f *FileTickets) Get(key string) (*Ticket, bool) {
	b, err := os.ReadFile(f.path(key))
	if err != nil {
		return nil, false
	}
	t, err := decodeTicketFile(b)
	return t, err == nil
}

func decodeTicketFile(b []byte) (*Ticket, error) {
	if len(b) < len(ticketFileMagic)+8+pskLen+2 || string(b[:len(ticketFileMagic)]) != ticketFileMagic {
		return nil, errTicketFormat
	}
	b = b[len(ticketFileMagic):]
	t := &Ticket{Expires: time.Unix(int64(binary.BigEndian.Uint64(b)), 0)}
	t.PSK = append([]byte(nil), b[8:8+pskLen]...)
	b = b[8+pskLen:]
	n := int(binary.BigEndian.Uint16(b))
	if n == 0 || n != len(b)-2 || n > maxTicket {
		return nil, errTicketFormat
	}
	t.Ticket = append([]byte(nil), b[2:]...)
	return t, nil
}

func encodeTicketFile(t *Ticket) []byte {
	b := []byte(ticketFileMagic)
	b = binary.BigEndian.AppendUint64(b, uint64(t.Expires.Unix()))
	b = append(b, t.PSK...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(t.Ticket)))
	return append(b, t.Ticket...)
}

// Put implements TicketStore.
func (f *FileTickets) Put(key string, t *Ticket) {
	p := f.path(key)
	if t == nil {
		os.Remove(p)
		return
	}
	if len(t.PSK) != pskLen || len(t.Ticket) == 0 || len(t.Ticket) > maxTicket {
		return
	}
	if os.MkdirAll(f.Dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(f.Dir, ".tmp-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	if tmp.Chmod(0o600) != nil {
		tmp.Close()
		return
	}
	_, werr := tmp.Write(encodeTicketFile(t))
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		return
	}
	_ = os.Rename(tmp.Name(), p)
}

// Conn is a manager's DTLS session. Reads return SNMP messages only: a
// resumption ticket the agent sends is stored, not returned.
type Conn struct {
	*dtls.Conn
	resumed bool
	store   TicketStore
	key     string
	psk     []byte
	// asked counts ticket requests; got is set when a ticket arrived.
	asked atomic.Int32
	got   atomic.Bool
}

// maxTicketRequests bounds the ticket requests of a session. The first
// goes right after the handshake; the second goes with the first message,
// in case the first datagram was lost (or reached an agent that drops
// records arriving just before its side of the handshake completes, as
// tsnmp's did before holdListener).
const maxTicketRequests = 2

func (c *Conn) askTicket() {
	if c.store != nil && !c.got.Load() && c.asked.Add(1) <= maxTicketRequests {
		c.Conn.Write(ticketRequest)
	}
}

// Write implements net.Conn.
func (c *Conn) Write(b []byte) (int, error) {
	c.askTicket()
	return c.Conn.Write(b)
}

// MaxReadMessage is the largest SNMP message a Conn can receive:
// pion/dtls reads each datagram into a buffer of 8,192 octets (fixed in
// pion/dtls v3, not configurable), less a record's header, the GCM
// explicit nonce and the tag. A larger datagram arrives cut and is
// dropped, so a manager offers this as its msgMaxSize over DTLS and the
// agent sizes its responses to it.
const MaxReadMessage = 8192 - headerLen - 8 - tagLen

// MaxMessage returns the largest SNMP message the session can receive
// (MaxReadMessage).
func (c *Conn) MaxMessage() int { return MaxReadMessage }

// Resumed reports whether the session was resumed with a ticket.
func (c *Conn) Resumed() bool { return c.resumed }

// Read implements net.Conn.
func (c *Conn) Read(b []byte) (int, error) {
	for {
		n, err := c.Conn.Read(b)
		if err != nil || n == 0 || b[0] != 0 {
			return n, err
		}
		if rest, ok := bytes.CutPrefix(b[:n], ticketReply); ok && c.store != nil && c.psk != nil && len(rest) > 0 {
			c.store.Put(c.key, &Ticket{Ticket: append([]byte(nil), rest...), PSK: c.psk, Expires: time.Now().Add(DefaultTicketLifetime)})
			c.got.Store(true)
		}
	}
}

// Dial opens a DTLS session to addr on network ("udp", "udp4", "udp6").
// With a ticket in store it first tries to resume (ECDHE-PSK); if the
// agent refuses the ticket (rotated out, expired, unknown) it falls back to
// a full handshake. After a full handshake it asks the agent for a ticket
// (unless c.DisableResumption or store is nil).
func Dial(ctx context.Context, network, addr string, c *tlstm.ClientConfig, store TicketStore) (*Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ua, err := net.ResolveUDPAddr(network, addr)
	if err != nil {
		return nil, err
	}
	if c.DisableResumption {
		store = nil
	}
	key := ua.String()
	if store != nil {
		if t, ok := store.Get(key); ok && time.Now().Before(t.Expires) {
			conn, err := handshake(ctx, network, ua, resumeOptions(t), resumeTimeout)
			if err == nil {
				c.Stats.Inc(tlstm.SessionOpens)
				return &Conn{Conn: conn, resumed: true}, nil
			}
			// Refused: forget the ticket, do a full handshake.
			store.Put(key, nil)
		}
	}
	opts, err := fullOptions(host, c)
	if err != nil {
		return nil, err
	}
	conn, err := handshake(ctx, network, ua, opts, 10*time.Second)
	if err != nil {
		c.Stats.Inc(tlstm.SessionOpenErrors)
		return nil, err
	}
	c.Stats.Inc(tlstm.SessionOpens)
	dc := &Conn{Conn: conn}
	if store != nil {
		st, _ := conn.ConnectionState()
		if psk, err := st.ExportKeyingMaterial(exporterLabel, nil, pskLen); err == nil {
			dc.store, dc.key, dc.psk = store, key, psk
			dc.askTicket()
		}
	}
	return dc, nil
}

// fullOptions are the options of a full handshake with c's certificate
// to the agent host.
func fullOptions(host string, c *tlstm.ClientConfig) ([]dtls.ClientOption, error) {
	if len(c.Certificates) == 0 {
		return nil, errors.New("dtls: no local certificate (our_identity or localCert)")
	}
	id := c.ServerIdentity(host)
	opts := []dtls.ClientOption{
		dtls.WithCertificates(c.LocalCertificates()...),
		dtls.WithInsecureSkipVerify(true), // verification is RFC 6353's, below
		dtls.WithVerifyConnection(func(st *dtls.State) error {
			chain, err := parseChain(st.PeerCertificates)
			if err != nil {
				return err
			}
			return id.Verify(chain)
		}),
		dtls.WithExtendedMasterSecret(dtls.RequireExtendedMasterSecret),
		dtls.WithCipherSuites(clientSuites(c.CipherSuites)...),
	}
	if net.ParseIP(id.Hostname) == nil {
		opts = append(opts, dtls.WithServerName(id.Hostname))
	}
	return opts, nil
}

func resumeOptions(t *Ticket) []dtls.ClientOption {
	psk := t.PSK
	return []dtls.ClientOption{
		dtls.WithPSK(func([]byte) ([]byte, error) { return psk, nil }),
		dtls.WithPSKIdentityHint(t.Ticket),
		dtls.WithCipherSuites(pskSuites...),
		dtls.WithExtendedMasterSecret(dtls.RequireExtendedMasterSecret),
	}
}

// resumeTimeout bounds a resumption attempt: an agent that cannot use the
// ticket and does not say so (a PSK mismatch shows only as a bad Finished,
// which DTLS drops silently) costs at most this before the full handshake.
const resumeTimeout = 2 * time.Second

func handshake(ctx context.Context, network string, ua *net.UDPAddr, opts []dtls.ClientOption, timeout time.Duration) (*dtls.Conn, error) {
	pc, err := net.ListenUDP(network, nil)
	if err != nil {
		return nil, err
	}
	conn, err := dtls.ClientWithOptions(pc, ua, opts...)
	if err != nil {
		pc.Close()
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		conn.Close()
		pc.Close()
		return nil, err
	}
	return conn, nil
}

// clientSuites restricts the certificate suites to those configured (IANA
// numbers, as crypto/tls's); none configured, or none in common, means all.
func clientSuites(want []uint16) []dtls.CipherSuiteID {
	var out []dtls.CipherSuiteID
	for _, cs := range certSuites {
		for _, w := range want {
			if uint16(cs) == w {
				out = append(out, cs)
			}
		}
	}
	if len(out) == 0 {
		return certSuites
	}
	return out
}

// A Sender sends SNMP messages over a DTLS session as records it seals
// itself: pion/dtls runs the handshake, the listener's record layer
// (record.go) protects the records, which the caller sends on the
// session's socket as it likes (in batches, say). It is for load
// generators (tsnmp bench), which send many messages at once; it reads
// nothing.
type Sender struct {
	conn  *net.UDPConn
	wr    protection
	epoch uint16
	seq   uint64
}

// senderConn is the socket pion/dtls runs a Sender's handshake on; cut
// ends pion/dtls's use of it.
type senderConn struct {
	*net.UDPConn
	cut atomic.Bool
}

func (c *senderConn) ReadFrom(b []byte) (int, net.Addr, error) {
	if c.cut.Load() {
		return 0, nil, net.ErrClosed
	}
	n, a, err := c.UDPConn.ReadFrom(b)
	if c.cut.Load() {
		return 0, nil, net.ErrClosed
	}
	return n, a, err
}

func (c *senderConn) WriteTo(b []byte, _ net.Addr) (int, error) {
	if c.cut.Load() {
		return len(b), nil
	}
	return c.UDPConn.Write(b)
}

func (c *senderConn) Close() error { return nil }

// DialSender opens a session to addr on network with a full handshake, as
// Dial does without resumption.
func DialSender(ctx context.Context, network, addr string, c *tlstm.ClientConfig) (*Sender, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ua, err := net.ResolveUDPAddr(network, addr)
	if err != nil {
		return nil, err
	}
	opts, err := fullOptions(host, c)
	if err != nil {
		return nil, err
	}
	uc, err := net.DialUDP(network, nil, ua)
	if err != nil {
		return nil, err
	}
	sc := &senderConn{UDPConn: uc}
	conn, err := dtls.ClientWithOptions(sc, ua, opts...)
	if err != nil {
		uc.Close()
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		conn.Close()
		uc.Close()
		return nil, err
	}
	// pion/dtls sends nothing more: the record layer owns the sequence
	// numbers it has not used.
	sc.cut.Store(true)
	uc.SetReadDeadline(time.Unix(1, 0))
	st, _ := conn.ConnectionState()
	conn.Close()
	k, err := takeKeys(&st)
	if err != nil {
		uc.Close()
		return nil, err
	}
	return &Sender{conn: uc, wr: k.wr, epoch: k.epoch, seq: k.seq}, nil
}

// Seal appends to dst a record carrying msg, with the session's next
// sequence number. It is not safe for concurrent use.
func (s *Sender) Seal(dst, msg []byte) []byte {
	n := len(dst)
	b := append(dst, make([]byte, s.wr.prefix())...)
	b = append(b, msg...)
	rec := s.wr.seal(b[n:], typeApplicationData, uint64(s.epoch)<<48|s.seq)
	s.seq++
	if len(rec) > 0 && &rec[0] == &b[n] {
		return b[:n+len(rec)]
	}
	return append(dst, rec...)
}

// Conn returns the session's socket, connected to the agent.
func (s *Sender) Conn() *net.UDPConn { return s.conn }

// Close sends a close_notify alert and closes the socket.
func (s *Sender) Close() error {
	b := append(make([]byte, s.wr.prefix(), s.wr.prefix()+2+tagLen), alertWarning, alertCloseNotify)
	s.conn.Write(s.wr.seal(b, typeAlert, uint64(s.epoch)<<48|s.seq))
	s.seq++
	return s.conn.Close()
}
