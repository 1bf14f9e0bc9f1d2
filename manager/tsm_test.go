package manager

import (
	"context"
	"crypto"
	gotls "crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
)

// reportingAgent answers every TSM request with a Report of
// snmpUnknownContexts.0 whose reportable flag is set, as pysnmp sends
// its Reports.
type reportingAgent struct{}

var snmpUnknownContexts0 = snmp.OID{1, 3, 6, 1, 6, 3, 12, 1, 5, 0}

func (reportingAgent) ServeSNMP(ref *transport.StateReference, msg, out []byte) []byte {
	var hdr snmp.V3Message
	var sp snmp.ScopedPDU
	if hdr.Unmarshal(msg) != nil || sp.Unmarshal(hdr.Data) != nil {
		return nil
	}
	rep := snmp.ScopedPDU{ContextEngineID: []byte{0x80, 0, 0x1f, 0x88, 4, 1}, PDU: snmp.PDU{Type: snmp.Report, RequestID: sp.PDU.RequestID,
		VarBinds: []snmp.VarBind{{Name: snmpUnknownContexts0, Value: snmp.Value{Type: snmp.Counter32, Num: 1}}}}}
	return tsm.AppendMessage(out, hdr.MsgID, 65507, snmp.LevelFlags(snmp.AuthPriv)|snmp.FlagReportable, snmp.AppendScopedPDU(nil, &rep))
}

// startTLSAgent serves h over TLS on loopback with the PKI's server
// certificate, mapping carol by the CA's fingerprint.
func startTLSAgent(t *testing.T, p *certs.PKI, h transport.Handler) string {
	t.Helper()
	m, err := tlstm.NewCertToTSN([]tlstm.Rule{{Priority: 1, Fingerprint: certs.Compute(crypto.SHA256, p.CA.Cert), Map: tlstm.MapCN}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := tlstm.NewServer(l, h, &tlstm.ServerConfig{Certificates: []gotls.Certificate{p.Server.TLS()},
		TrustAnchors: []*x509.Certificate{p.CA.Cert}, Map: m}, &tlstm.Options{DisableTickets: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return "tls:" + s.Addr().String()
}

// TestTSMReportableReport: a Report whose reportable flag is set is
// processed as if it were clear (RFC 3412 section 6.4), over TLS.
func TestTSMReportableReport(t *testing.T) {
	p, err := certs.NewSmallPKI("")
	if err != nil {
		t.Fatal(err)
	}
	target := startTLSAgent(t, p, reportingAgent{})
	c := &tlstm.ClientConfig{Certificates: []gotls.Certificate{p.Carol.TLS()}, TrustAnchors: []*x509.Certificate{p.CA.Cert},
		TheirHostname: "localhost", DisableResumption: true}
	ctx := context.Background()
	s, err := DialSecure(ctx, target, Config{Timeout: 2 * time.Second, Retries: -1, ContextEngineID: []byte{0x80, 0, 0x1f, 0x88, 4, 1}}, c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Get(ctx, snmp.OID{1, 3, 6, 1, 2, 1, 1, 1, 0})
	var re *ReportError
	if !errors.As(err, &re) || len(re.Report.VarBinds) != 1 || !re.Report.VarBinds[0].Name.Equal(snmpUnknownContexts0) {
		t.Fatalf("got %v, want the Report of snmpUnknownContexts", err)
	}
}
