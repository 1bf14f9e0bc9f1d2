package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
	"context"
)

func TestZZTmp2(t *testing.T) {
	params := manager.TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, TheirHostname: "localhost", CertDirs: []string{"/tmp/nsdbg"}, NoResume: true, MinVersion: "1.0"}
	c, _ := params.ClientConfig("x")
	conn, err := tlstm.Dial(context.Background(), "tcp", "127.0.0.1:19162", c)
	if err != nil {
		t.Fatal(err)
	}
	sc := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: nil, PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: 5, VarBinds: []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 6, 3, 10, 2, 1, 1, 0}, Value: snmp.Value{Type: snmp.Null}}}}})
	conn.Write(tsm.AppendMessage(nil, 77, 65507, 7, sc))
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 1000)
	for {
		n, err := conn.Read(buf)
		fmt.Printf("%d %v %x\n", n, err, buf[:n])
		if err != nil {
			break
		}
	}
}
