package manager

import (
	"testing"

	"github.com/tsnmp/tsnmp/internal/certs"
)

// TestAnyPurposeParam: -T any_purpose=yes relaxes the check of the
// agent's extended key usage; the manager's chain comes from its store.
func TestAnyPurposeParam(t *testing.T) {
	dir := t.TempDir()
	if _, err := certs.NewPKI("", dir); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		param string
		want  bool
	}{{"", false}, {"any_purpose=yes", true}, {"any_purpose=no", false}} {
		p := TransportParams{OurIdentity: "carol", CertDirs: []string{dir}, NoResume: true}
		if tc.param != "" {
			if err := p.Parse(tc.param); err != nil {
				t.Fatal(err)
			}
		}
		c, err := p.ClientConfig("tls:127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if c.AnyPurpose != tc.want || c.ServerIdentity("localhost").AnyPurpose != tc.want {
			t.Errorf("%q: AnyPurpose %v", tc.param, c.AnyPurpose)
		}
		if n := len(c.Certificates[0].Certificate); n != 2 {
			t.Errorf("chain of %d certificates, want carol's and the CA's", n)
		}
	}
	if err := new(TransportParams).Parse("any_purpose=maybe"); err == nil {
		t.Error("any_purpose=maybe accepted")
	}
}
