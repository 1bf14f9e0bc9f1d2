package manager

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// TestUnconnectedUDP: an agent that answers from another of its addresses
// (127.0.0.2 for requests to 127.0.0.1, as a device may) is reached by a
// session with UnconnectedUDP, over SNMPv2c and over SNMPv3 with engine
// discovery and authPriv, and not by a session with the default
// connected socket, which times out.
func TestUnconnectedUDP(t *testing.T) {
	a, err := loopagent.Start(loopagent.Options{NoTLS: true, Rows: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	in, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := in.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			ref := transport.StateReference{Domain: transport.UDP, Local: in.LocalAddr().(*net.UDPAddr).AddrPort(), Remote: from, SecurityLevel: snmp.NoAuthNoPriv}
			if resp := a.Agent.ServeSNMP(&ref, buf[:n], nil); resp != nil {
				out.WriteToUDPAddrPort(resp, from)
			}
		}
	}()
	target := "udp:" + in.LocalAddr().String()
	sysDescr := snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"v2c", Config{Version: snmp.V2c, Community: "public"}},
		{"v3", Config{Version: snmp.V3, User: "alice", Level: snmp.AuthPriv, AuthProtocol: usm.AuthSHA256, AuthPassword: "alice-auth-pass",
			PrivProtocol: usm.PrivAES128, PrivPassword: "alice-priv-pass"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			for _, unconnected := range []bool{true, false} {
				cfg := c.cfg
				cfg.UnconnectedUDP, cfg.Timeout, cfg.Retries = unconnected, 300*time.Millisecond, 1
				s, err := Dial(ctx, target, cfg)
				if err != nil {
					t.Fatal(err)
				}
				p, err := s.Get(ctx, sysDescr)
				s.Close()
				switch {
				case unconnected && (err != nil || len(p.VarBinds) != 1 || p.VarBinds[0].Value.Type != snmp.OctetString):
					t.Errorf("unconnected: %v %v", p, err)
				case !unconnected && !errors.Is(err, ErrTimeout):
					t.Errorf("connected: %v, want a timeout (the answers come from 127.0.0.2)", err)
				}
			}
		})
	}
}
