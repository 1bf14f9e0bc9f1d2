package manager

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in, network, host string
		port              int
	}{
		{"127.0.0.1", "udp", "127.0.0.1", 161},
		{"127.0.0.1:1161", "udp", "127.0.0.1", 1161},
		{"udp:127.0.0.1:1161", "udp", "127.0.0.1", 1161},
		{"tcp:localhost", "tcp", "localhost", 161},
		{"TCP:host:99", "tcp", "host", 99},
		{"udp6:[::1]:1161", "udp6", "::1", 1161},
		{"tcp6:[::1]", "tcp6", "::1", 161},
		{"udp6:::1", "udp6", "::1", 161},
		{"[::1]:1161", "udp6", "::1", 1161},
		{"tcp:[::1]:1161", "tcp6", "::1", 1161},
		{"udpv6:[fe80::1]:5", "udp6", "fe80::1", 5},
	} {
		got, err := ParseTarget(tc.in)
		if err != nil || got.Network != tc.network || got.Host != tc.host || got.Port != tc.port || got.Spec != tc.in {
			t.Errorf("ParseTarget(%q) = %+v, %v", tc.in, got, err)
		}
	}
	for _, bad := range []string{"", "udp:", "[::1", "[::1]x", "host:0", "host:70000", "host:x", "tcp:[]:5"} {
		if _, err := ParseTarget(bad); !errors.Is(err, ErrBadTarget) {
			t.Errorf("ParseTarget(%q) error = %v, want ErrBadTarget", bad, err)
		}
	}
}

func TestRTOEstimator(t *testing.T) {
	e := newRTOEstimator(time.Second, 20*time.Millisecond, 10*time.Second)
	if e.RTO() != time.Second {
		t.Fatalf("initial RTO %v", e.RTO())
	}
	e.Sample(100 * time.Millisecond)
	srtt, rttvar, rto := e.State()
	if srtt != 100*time.Millisecond || rttvar != 50*time.Millisecond || rto != 300*time.Millisecond {
		t.Fatalf("after first sample: %v %v %v", srtt, rttvar, rto)
	}
	e.Sample(200 * time.Millisecond)
	srtt, rttvar, rto = e.State()
	// RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5
	if srtt != 112500*time.Microsecond || rttvar != 62500*time.Microsecond || rto != srtt+4*rttvar {
		t.Fatalf("after second sample: %v %v %v", srtt, rttvar, rto)
	}
	if got := e.Backoff(); got != 2*rto {
		t.Fatalf("backoff %v, want %v", got, 2*rto)
	}
	for range 10 {
		e.Backoff()
	}
	if e.RTO() != 10*time.Second {
		t.Fatalf("RTO not bounded by max: %v", e.RTO())
	}
	for range 50 {
		e.Sample(time.Microsecond)
	}
	if e.RTO() != 20*time.Millisecond {
		t.Fatalf("RTO not bounded by min: %v", e.RTO())
	}
}

// fakeAgent answers requests on a loopback UDP socket with handle, which
// returns the messages to send back (none to drop the request).
type fakeAgent struct {
	conn     *net.UDPConn
	requests atomic.Int32
	wg       sync.WaitGroup
}

func startFake(t testing.TB, handle func(n int, req *snmp.Message) []*snmp.Message) *fakeAgent {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeAgent{conn: c}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			var m snmp.Message
			if m.Unmarshal(buf[:n]) != nil {
				continue
			}
			k := int(f.requests.Add(1))
			for _, r := range handle(k, &m) {
				c.WriteToUDP(snmp.AppendMessage(nil, r), from)
			}
		}
	}()
	t.Cleanup(func() { c.Close(); f.wg.Wait() })
	return f
}

func (f *fakeAgent) addr() string { return "udp:" + f.conn.LocalAddr().String() }

func reply(req *snmp.Message, vbs ...snmp.VarBind) *snmp.Message {
	return &snmp.Message{Version: req.Version, Community: req.Community,
		PDU: snmp.PDU{Type: snmp.Response, RequestID: req.PDU.RequestID, VarBinds: vbs}}
}

var sysDescr0 = snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}

func dial(t *testing.T, target string, cfg Config) *Session {
	t.Helper()
	s, err := Dial(context.Background(), target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRequestIDMatching(t *testing.T) {
	f := startFake(t, func(_ int, req *snmp.Message) []*snmp.Message {
		wrongID := reply(req, snmp.VarBind{Name: sysDescr0, Value: snmp.StringValue("wrong id")})
		wrongID.PDU.RequestID++
		wrongVersion := reply(req, snmp.VarBind{Name: sysDescr0, Value: snmp.StringValue("wrong version")})
		wrongVersion.Version = snmp.V1
		notResponse := reply(req, snmp.VarBind{Name: sysDescr0, Value: snmp.StringValue("not a response")})
		notResponse.PDU.Type = snmp.SNMPv2Trap
		return []*snmp.Message{wrongID, wrongVersion, notResponse, reply(req, snmp.VarBind{Name: sysDescr0, Value: snmp.StringValue("right")})}
	})
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: 2 * time.Second})
	resp, err := s.Get(context.Background(), sysDescr0)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.VarBinds[0].Value.Bytes); got != "right" {
		t.Fatalf("got %q", got)
	}
}

func TestRetransmitFixed(t *testing.T) {
	var ids []int32
	var mu sync.Mutex
	f := startFake(t, func(n int, req *snmp.Message) []*snmp.Message {
		mu.Lock()
		ids = append(ids, req.PDU.RequestID)
		mu.Unlock()
		if n < 3 {
			return nil // lose the first two
		}
		return []*snmp.Message{reply(req, snmp.VarBind{Name: sysDescr0, Value: snmp.StringValue("x")})}
	})
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: 30 * time.Millisecond, Retries: 3, Retransmit: RetransmitFixed})
	var mine atomic.Int64
	if _, err := s.Get(CountRetransmissions(context.Background(), &mine), sysDescr0); err != nil {
		t.Fatal(err)
	}
	if n := mine.Load(); n != 2 {
		t.Fatalf("CountRetransmissions counted %d, want 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 3 || ids[0] != ids[1] || ids[1] != ids[2] {
		t.Fatalf("request ids of the attempts: %v", ids)
	}
	if n := s.Retransmissions(); n != 2 {
		t.Fatalf("Retransmissions() = %d, want 2", n)
	}
}

func TestTimeoutAndRetries(t *testing.T) {
	f := startFake(t, func(int, *snmp.Message) []*snmp.Message { return nil })
	s := dial(t, f.addr(), Config{Version: snmp.V1, Community: "public", Timeout: 20 * time.Millisecond, Retries: 2})
	_, err := s.Get(context.Background(), sysDescr0)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if n := f.requests.Load(); n != 3 {
		t.Fatalf("agent saw %d requests, want 3 (1 + 2 retries)", n)
	}
	if n := s.Retransmissions(); n != 2 {
		t.Fatalf("Retransmissions() = %d, want 2", n)
	}
	s2 := dial(t, f.addr(), Config{Version: snmp.V1, Community: "public", Timeout: 20 * time.Millisecond, Retries: -1})
	f.requests.Store(0)
	if _, err := s2.Get(context.Background(), sysDescr0); !errors.Is(err, ErrTimeout) || f.requests.Load() != 1 {
		t.Fatalf("no retries: err %v, %d requests", err, f.requests.Load())
	}
}

func TestAdaptiveKarn(t *testing.T) {
	f := startFake(t, func(n int, req *snmp.Message) []*snmp.Message {
		if n == 1 {
			return nil // the first exchange needs a retransmission
		}
		return []*snmp.Message{reply(req, snmp.VarBind{Name: sysDescr0, Value: snmp.StringValue("x")})}
	})
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: 30 * time.Millisecond, Retries: 2,
		Retransmit: RetransmitAdaptive, MinRTO: time.Millisecond})
	if _, err := s.Get(context.Background(), sysDescr0); err != nil {
		t.Fatal(err)
	}
	srtt, _, rto := s.RTT()
	if srtt != 0 {
		t.Fatalf("a retransmitted exchange was sampled (Karn's rule): srtt %v", srtt)
	}
	if rto != 60*time.Millisecond {
		t.Fatalf("RTO after one expiry = %v, want the doubled 60ms", rto)
	}
	if _, err := s.Get(context.Background(), sysDescr0); err != nil {
		t.Fatal(err)
	}
	if srtt, _, _ = s.RTT(); srtt == 0 {
		t.Fatal("a clean exchange was not sampled")
	}
}

func TestContextCancel(t *testing.T) {
	f := startFake(t, func(int, *snmp.Message) []*snmp.Message { return nil })
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := s.Get(ctx, sysDescr0); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	s.Close()
	if _, err := s.Get(context.Background(), sysDescr0); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// table serves GetNext/GetBulk over a sorted list of OIDs.
func tableHandler(names []snmp.OID, tooBigAbove int, v1 bool) func(int, *snmp.Message) []*snmp.Message {
	next := func(o snmp.OID) (snmp.VarBind, bool) {
		for _, n := range names {
			if n.Compare(o) > 0 {
				return snmp.VarBind{Name: n, Value: snmp.IntegerValue(int64(n[len(n)-1]))}, true
			}
		}
		return snmp.VarBind{Name: o, Value: snmp.ExceptionValue(snmp.EndOfMibView)}, false
	}
	return func(_ int, req *snmp.Message) []*snmp.Message {
		r := reply(req)
		switch req.PDU.Type {
		case snmp.GetNextRequest:
			vb, ok := next(req.PDU.VarBinds[0].Name)
			if !ok && v1 {
				r.PDU.ErrorStatus, r.PDU.ErrorIndex = snmp.NoSuchName, 1
				r.PDU.VarBinds = req.PDU.VarBinds
				break
			}
			r.PDU.VarBinds = []snmp.VarBind{vb}
		case snmp.GetBulkRequest:
			if tooBigAbove > 0 && req.PDU.MaxRepetitions() > tooBigAbove {
				r.PDU.ErrorStatus = snmp.TooBig
				break
			}
			o := req.PDU.VarBinds[0].Name
			for range req.PDU.MaxRepetitions() {
				vb, _ := next(o)
				r.PDU.VarBinds = append(r.PDU.VarBinds, vb)
				o = vb.Name
			}
		}
		return []*snmp.Message{r}
	}
}

func TestWalks(t *testing.T) {
	root := snmp.OID{1, 3, 6, 1, 4, 1, 99}
	var names []snmp.OID
	for i := uint32(1); i <= 25; i++ {
		names = append(names, root.Append(i))
	}
	names = append(names, snmp.OID{1, 3, 6, 1, 4, 1, 100, 1})
	for _, tc := range []struct {
		name  string
		v     snmp.Version
		bulk  bool
		big   int
		reuse bool
	}{
		{"v1 getnext", snmp.V1, false, 0, false},
		{"v2c getnext", snmp.V2c, false, 0, false},
		{"v2c bulk", snmp.V2c, true, 0, false},
		{"v2c bulk tooBig", snmp.V2c, true, 3, false},
		{"v2c getnext reuse", snmp.V2c, false, 0, true},
		{"v2c bulk reuse", snmp.V2c, true, 0, true},
		{"v2c bulk tooBig reuse", snmp.V2c, true, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, tableHandler(names, tc.big, tc.v == snmp.V1))
			s := dial(t, f.addr(), Config{Version: tc.v, Community: "c", Timeout: time.Second})
			var got []snmp.OID
			fn := func(vb snmp.VarBind) error { got = append(got, vb.Name.Clone()); return nil }
			_, err := s.WalkWith(context.Background(), root, WalkOptions{Bulk: tc.bulk, MaxRepetitions: 10, Reuse: tc.reuse}, fn)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 25 {
				t.Fatalf("walked %d: %v", len(got), got)
			}
			for i, o := range got {
				if !o.Equal(root.Append(uint32(i + 1))) {
					t.Fatalf("varbind %d is %v", i, o)
				}
			}
		})
	}
	// The end of the MIB view inside the subtree.
	f := startFake(t, tableHandler(names[:25], 0, false))
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "c"})
	var n int
	st, err := s.WalkWith(context.Background(), root, WalkOptions{Bulk: true, Exceptions: true}, func(vb snmp.VarBind) error {
		n++
		if n == 26 && vb.Value.Type != snmp.EndOfMibView {
			t.Errorf("last varbind %v", vb)
		}
		return nil
	})
	if err != nil || n != 26 || st.VarBinds != 26 {
		t.Fatalf("walk to end of view: %d varbinds, %+v, %v", n, st, err)
	}
	// ErrStopWalk ends early without error.
	n = 0
	err = s.Walk(context.Background(), root, func(snmp.VarBind) error {
		n++
		if n == 3 {
			return ErrStopWalk
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("stop: %d, %v", n, err)
	}
}

func TestWalkNotIncreasing(t *testing.T) {
	root := snmp.OID{1, 3, 6, 1, 4, 1, 99}
	f := startFake(t, func(_ int, req *snmp.Message) []*snmp.Message {
		return []*snmp.Message{reply(req, snmp.VarBind{Name: root.Append(1), Value: snmp.IntegerValue(1)})}
	})
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "c"})
	calls := 0
	err := s.Walk(context.Background(), root, func(snmp.VarBind) error { calls++; return nil })
	var ni *NotIncreasingError
	if !errors.As(err, &ni) || calls != 1 || !ni.Prev.Equal(root.Append(1)) {
		t.Fatalf("err = %v after %d callbacks", err, calls)
	}
	if _, err := s.WalkWith(context.Background(), root, WalkOptions{NoCheckIncreasing: true}, func(snmp.VarBind) error {
		calls++
		if calls > 5 {
			return ErrStopWalk
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestStatusError(t *testing.T) {
	f := startFake(t, func(_ int, req *snmp.Message) []*snmp.Message {
		r := reply(req, req.PDU.VarBinds...)
		r.PDU.ErrorStatus, r.PDU.ErrorIndex = snmp.NotWritable, 1
		return []*snmp.Message{r}
	})
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "c"})
	resp, err := s.Set(context.Background(), snmp.VarBind{Name: sysDescr0, Value: snmp.StringValue("x")})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != snmp.NotWritable || resp == nil {
		t.Fatalf("err = %v", err)
	}
	if o, ok := se.FailedObject(); !ok || !o.Equal(sysDescr0) {
		t.Fatalf("failed object %v", o)
	}
	if _, err := s.GetBulk(context.Background(), 0, 5, sysDescr0); !errors.As(err, &se) {
		t.Fatalf("GetBulk: %v", err)
	}
	s1 := dial(t, f.addr(), Config{Version: snmp.V1, Community: "c"})
	if _, err := s1.GetBulk(context.Background(), 0, 5, sysDescr0); err == nil {
		t.Fatal("GetBulk on SNMPv1 did not fail")
	}
}

// TestTCPFraming checks stream framing (two responses in one segment, a
// response split across segments), request matching on TCP and that
// TCP_NODELAY is set.
func TestTCPFraming(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		var reqs []*snmp.Message
		for len(reqs) < 2 {
			b, err := transport.ReadStreamMessage(r, nil, 65535)
			if err != nil {
				return
			}
			m := new(snmp.Message)
			if m.Unmarshal(b) != nil {
				return
			}
			reqs = append(reqs, m)
		}
		var out []byte
		for i := len(reqs) - 1; i >= 0; i-- { // answer out of order, back to back
			out = snmp.AppendMessage(out, reply(reqs[i], snmp.VarBind{Name: reqs[i].PDU.VarBinds[0].Name, Value: snmp.IntegerValue(int64(i))}))
		}
		c.Write(out[:5])
		time.Sleep(10 * time.Millisecond)
		c.Write(out[5:])
	}()
	s := dial(t, "tcp:"+l.Addr().String(), Config{Version: snmp.V2c, Community: "c", Timeout: 5 * time.Second})
	raw, err := s.conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var nodelay int
	raw.Control(func(fd uintptr) {
		nodelay, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY)
	})
	if err != nil || nodelay == 0 {
		t.Fatalf("TCP_NODELAY = %d, %v", nodelay, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := snmp.OID{1, 3, 6, 1, uint32(i)}
			resp, err := s.Get(context.Background(), o)
			if err == nil && !resp.VarBinds[0].Name.Equal(o) {
				err = errors.New("response matched to the wrong request")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	<-done
}

func TestPool(t *testing.T) {
	f := startFake(t, func(_ int, req *snmp.Message) []*snmp.Message {
		return []*snmp.Message{reply(req, snmp.VarBind{Name: sysDescr0, Value: snmp.StringValue("x")})}
	})
	p := &Pool{}
	defer p.Close()
	cfg := Config{Version: snmp.V2c, Community: "c"}
	s1, err := p.Get(context.Background(), f.addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := p.Get(context.Background(), f.addr(), cfg)
	if s1 != s2 {
		t.Fatal("pool opened a second socket for the same target")
	}
	cfg.Community = "other"
	if s3, _ := p.Get(context.Background(), f.addr(), cfg); s3 == s1 {
		t.Fatal("pool shared a session across configurations")
	}
	cfg.Community = "c"
	s1.Close()
	s4, err := p.Get(context.Background(), f.addr(), cfg)
	if err != nil || s4 == s1 {
		t.Fatal("pool kept a closed session")
	}
	if _, err := s4.Get(context.Background(), sysDescr0); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseCommunityResponse(f *testing.F) {
	m := &snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.Response, RequestID: 7,
		VarBinds: []snmp.VarBind{{Name: sysDescr0, Value: snmp.StringValue("x")}}}}
	f.Add(snmp.AppendMessage(nil, m))
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x03})
	f.Fuzz(func(t *testing.T, b []byte) {
		if p := parseCommunityResponse(b, snmp.V2c, 7, nil); p != nil && (p.Type != snmp.Response || p.RequestID != 7) {
			t.Fatalf("accepted %v", p)
		}
		(&communityProcessor{}).peek(b)
	})
}

func FuzzV3Response(f *testing.F) {
	cfg := Config{Version: snmp.V3, User: "u", Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA256, AuthPassword: "password1", PrivProtocol: usm.PrivAES128, PrivPassword: "password2"}
	cfg.normalize()
	v, err := newV3State(&cfg)
	if err != nil {
		f.Fatal(err)
	}
	engine := []byte{0x80, 0, 0x1f, 0x88, 0x80, 1, 2, 3, 4}
	probe := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: engine, PDU: snmp.PDU{Type: snmp.Report, RequestID: 1}})
	msg, err := v.usm.GenerateRequest(nil, &snmp.V3Message{MsgID: 1, MaxSize: 1500, Flags: snmp.LevelFlags(snmp.AuthPriv)}, engine, "u", probe)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(msg)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := v.peek(b)
		if !ok {
			return
		}
		discoveryAnswer(&r.hdr)
		if p := v.acceptResponse(r, engine, 1, nil); p != nil && p.Type != snmp.Report && p.Type != snmp.Response {
			t.Fatalf("accepted %v", p.Type)
		}
	})
}
