package main

import (
	"context"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

func TestZZTmp(t *testing.T) {
	params := manager.TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, TheirHostname: "localhost", CertDirs: []string{"/tmp/nsdbg"}, NoResume: true, MinVersion: "1.0"}
	c, err := params.ClientConfig("x")
	if err != nil {
		t.Fatal(err)
	}
	s, err := manager.DialSecure(context.Background(), "tls:127.0.0.1:19162", manager.Config{Timeout: 3 * time.Second, Retries: -1, ContextEngineID: nil}, c)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0})
	t.Log(p, err)
}
