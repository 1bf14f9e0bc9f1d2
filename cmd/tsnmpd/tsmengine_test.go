package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestResumedSessionKeepsEngineID: a manager session that resumes an
// earlier TLS or DTLS session takes the agent's snmpEngineID from the
// cache directory instead of probing for it (RFC 5343), one request
// fewer; a wrong cached ID costs a Report, a probe and the request again,
// and is replaced. The requests are counted by the agent (snmpInPkts,
// read over UDP).
func TestResumedSessionKeepsEngineID(t *testing.T) {
	bin := buildDaemon(t)
	dir, _, conf := tlsSetup(t, "rocommunity public 127.0.0.1\n")
	udp := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	tlsTarget := fmt.Sprintf("tls:127.0.0.1:%d", testenv.FreePort(t))
	dtlsTarget := fmt.Sprintf("dtls:127.0.0.1:%d", testenv.FreePort(t))
	startDaemon(t, bin, nil, "--state-dir", t.TempDir(), "--snmpd-conf", conf, "--listen", udp, "--listen", tlsTarget, "--listen", dtlsTarget)
	inPkts := func() int64 {
		t.Helper()
		ctx := context.Background()
		var err error
		for try := 0; try < 20; try++ {
			var s *manager.Session
			if s, err = manager.Dial(ctx, udp, manager.Config{Version: snmp.V2c, Community: "public", Timeout: time.Second}); err == nil {
				var p *snmp.PDU
				p, err = s.Get(ctx, snmp.OID{1, 3, 6, 1, 2, 1, 11, 1, 0})
				s.Close()
				if err == nil {
					return int64(p.VarBinds[0].Value.Num)
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Fatalf("snmpInPkts: %v", err)
		return 0
	}
	for _, target := range []string{tlsTarget, dtlsTarget} {
		cache := t.TempDir()
		params := manager.TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, TheirHostname: "localhost",
			CertDirs: []string{dir}, CacheDir: cache}
		requests := func(what string, wantResumed bool) int64 {
			t.Helper()
			before := inPkts()
			pdu, resumed, err := secureGet(t, target, params, snmp.AuthPriv, sysDescr0)
			if err != nil || pdu.VarBinds[0].Value.Type != snmp.OctetString || resumed != wantResumed {
				t.Fatalf("%s %s: %v %v resumed=%v", target, what, err, pdu, resumed)
			}
			return inPkts() - before - 1
		}
		full := requests("full handshake", false)
		files, _ := filepath.Glob(filepath.Join(cache, "tsm-engine-*"))
		if len(files) != 1 {
			t.Fatalf("%s: %d engine files, want 1", target, len(files))
		}
		id, _ := os.ReadFile(files[0])
		resumed := requests("resumed", true)
		if full != 2 || resumed != 1 {
			t.Errorf("%s: the agent received %d requests in a full session and %d in a resumed one, want 2 (probe and get) and 1", target, full, resumed)
		}
		os.WriteFile(files[0], []byte("\x80\x00\x1f\x88\x04wrong-engine"), 0o600)
		if n := requests("wrong cached engine ID", true); n != 3 {
			t.Errorf("%s: %d requests with a wrong cached engine ID, want 3 (refused, probe, get)", target, n)
		}
		if b, _ := os.ReadFile(files[0]); string(b) != string(id) {
			t.Errorf("%s: engine file holds %x after the refusal, want %x", target, b, id)
		}
	}
}
