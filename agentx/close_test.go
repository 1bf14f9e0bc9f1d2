package agentx

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestNothingAfterClose: once the master has closed a session (here by
// agentxSessionAdminStatus down(2)), a request that found the session's
// region before the close is not sent: the subagent reads nothing after
// its Close-PDU, and the request fails with genErr. A subagent's own
// Close-PDU is answered after its subtrees are gone.
func TestNothingAfterClose(t *testing.T) {
	var tree mib.Tree
	m, sock := startMaster(t, &tree, Config{Timeout: 300 * time.Millisecond, PingInterval: -1})
	m.RegisterMIB(&tree)
	sub := snmp.OID{1, 3, 6, 1, 4, 1, 99999, 7}
	a := dialRaw(t, sock, 0, "closed subagent")
	if r := a.call(&PDU{Type: TypeRegister, Priority: 127, Subtree: sub}); r.Error != 0 {
		t.Fatalf("register: %d", r.Error)
	}
	reg, inside, _ := m.Region("", sub)
	if !inside {
		t.Fatal("the registered subtree is not served")
	}
	name, _ := snmp.ParseOID("1.3.6.1.2.1.74.1.3.2.1.4.1." + itoa(a.sid))
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	st, ok := tree.Setter(name)
	if !ok {
		t.Fatal("agentxSessionAdminStatus is not writable")
	}
	if e := st.CommitSet(r, []snmp.VarBind{{Name: name, Value: snmp.IntegerValue(2)}}); e != snmp.NoError {
		t.Fatalf("commit down: %v", e)
	}
	if p := a.read(); p.Type != TypeClose {
		t.Fatalf("subagent got %+v, want its Close-PDU", p)
	}
	// The region found before the close.
	if v := reg.H.Get(r, append(sub.Clone(), 1, 0)); v.Type != snmp.NoSuchObject || r.Failure() != snmp.GenErr {
		t.Errorf("a request to the closed session: %v, status %v; want genErr", v, r.Failure())
	}
	a.c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	hdr := make([]byte, HeaderLen)
	if _, err := io.ReadFull(a.c, hdr); !errors.Is(err, os.ErrDeadlineExceeded) {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("after its Close-PDU the subagent read a PDU of type %d (err %v)", hdr[1], err)
		}
	}

	b := dialRaw(t, sock, 0, "closing subagent")
	if r := b.call(&PDU{Type: TypeRegister, Priority: 127, Subtree: sub}); r.Error != 0 {
		t.Fatalf("register again: %d", r.Error)
	}
	if r := b.call(&PDU{Type: TypeClose, Reason: ReasonShutdown}); r.Type != TypeResponse || r.Error != 0 {
		t.Fatalf("close: %+v", r)
	}
	if _, inside, _ := m.Region("", sub); inside {
		t.Fatal("the subtree of a session is still served after the master answered its Close-PDU")
	}
}
