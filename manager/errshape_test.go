package manager

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// TestUDPErrorShape: a datagram too large for UDP fails as the net
// package reports it, a *net.OpError naming the operation, the
// addresses and the system error.
func TestUDPErrorShape(t *testing.T) {
	f := startFake(t, func(_ int, req *snmp.Message) []*snmp.Message { return nil })
	s := dial(t, f.addr(), Config{Version: snmp.V2c, Community: "public", Timeout: 200 * time.Millisecond, Retries: -1, MaxMsgSize: 1 << 20})
	big := make([]snmp.VarBind, 0, 3000)
	for i := range 3000 {
		big = append(big, snmp.VarBind{Name: snmp.OID{1, 3, 6, 1, 4, 1, 99, uint32(i)}, Value: snmp.StringValue(strings.Repeat("x", 30))})
	}
	_, err := s.Do(context.Background(), &snmp.PDU{Type: snmp.SetRequest, VarBinds: big})
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "write" || !errors.Is(err, syscall.EMSGSIZE) {
		t.Fatalf("oversized request: %v (%T), want a write *net.OpError with EMSGSIZE", err, err)
	}
	if want := "write udp4 " + oe.Source.String() + "->" + oe.Addr.String() + ": write: message too long"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error text %q, want it to end with %q", err, want)
	}
}
