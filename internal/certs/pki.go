package certs

import (
	"crypto/tls"
	"net"
	"time"
)

// PKI is a small certificate hierarchy for tests and examples: a CA, an
// agent certificate for localhost (127.0.0.1, ::1), and client
// certificates with the names tests map: alice (rfc822Name
// alice@example.com), bob (dNSName bob.example.com), carol (common name
// only), dave (self-signed, for pinning), eve (expired, from the CA) and
// mallory (from a CA nobody trusts).
type PKI struct {
	CA, Server, OtherCA          *Issued
	Alice, Bob, Carol, Dave, Eve *Issued
	Mallory                      *Issued
}

// NewPKI generates the hierarchy with keys of type kt ("" for ECDSA P-256);
// when dir is not empty it also saves every certificate and key there in
// Net-SNMP's layout, under its lower-case name ("ca", "server", ...).
func NewPKI(kt, dir string) (*PKI, error) {
	p, err := newPKI(kt, true)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		for name, is := range map[string]*Issued{"ca": p.CA, "otherca": p.OtherCA, "server": p.Server, "alice": p.Alice,
			"bob": p.Bob, "carol": p.Carol, "dave": p.Dave, "eve": p.Eve, "mallory": p.Mallory} {
			if _, err := is.Save(dir, name); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// NewSmallPKI generates only the CA, the agent's certificate and carol's,
// with keys of type kt: enough for a handshake, and quick to make even
// with RSA-4096 keys.
func NewSmallPKI(kt string) (*PKI, error) { return newPKI(kt, false) }

func newPKI(kt string, all bool) (*PKI, error) {
	p := &PKI{}
	var err error
	mk := func(t Template, parent *Issued) *Issued {
		if err != nil {
			return nil
		}
		k, kerr := GenerateKey(kt)
		if kerr != nil {
			err = kerr
			return nil
		}
		var is *Issued
		is, err = Issue(t, k, parent)
		return is
	}
	p.CA = mk(Template{CommonName: "tsnmp test CA", CA: true}, nil)
	p.Server = mk(Template{CommonName: "localhost", Server: true, DNSNames: []string{"localhost"},
		IPs: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}}, p.CA)
	p.Carol = mk(Template{CommonName: "carol", Client: true}, p.CA)
	if all {
		p.OtherCA = mk(Template{CommonName: "untrusted CA", CA: true}, nil)
		p.Alice = mk(Template{CommonName: "Alice", Client: true, Emails: []string{"alice@Example.COM"}}, p.CA)
		p.Bob = mk(Template{CommonName: "Bob", Client: true, DNSNames: []string{"Bob.Example.com"}, IPs: []net.IP{net.ParseIP("192.0.2.7")}}, p.CA)
		p.Dave = mk(Template{CommonName: "dave", Client: true}, nil)
		p.Eve = mk(Template{CommonName: "eve", Client: true, NotBefore: time.Now().Add(-48 * time.Hour), Validity: 24 * time.Hour}, p.CA)
		p.Mallory = mk(Template{CommonName: "mallory", Client: true, Emails: []string{"mallory@example.com"}}, p.OtherCA)
	}
	return p, err
}

// TLS returns is as a tls.Certificate with the chain up to (not
// including) the root.
func (i *Issued) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{i.Cert.Raw}, PrivateKey: i.Key, Leaf: i.Cert}
}

// ChainPKI is a two-level hierarchy for chain tests: a root CA, an
// intermediate CA it signed, and an agent certificate for localhost and a
// client certificate (common name "chained") both issued by the
// intermediate.
type ChainPKI struct {
	Root, Intermediate, Server, Client *Issued
}

// NewChainPKI generates the hierarchy (ECDSA P-256); when dir is not empty
// it also saves it there in Net-SNMP's layout as "root", "intermediate",
// "server" and "chained".
func NewChainPKI(dir string) (*ChainPKI, error) {
	p := &ChainPKI{}
	var err error
	mk := func(t Template, parent *Issued) *Issued {
		if err != nil {
			return nil
		}
		k, kerr := GenerateKey("")
		if kerr != nil {
			err = kerr
			return nil
		}
		var is *Issued
		is, err = Issue(t, k, parent)
		return is
	}
	p.Root = mk(Template{CommonName: "tsnmp test root CA", CA: true}, nil)
	p.Intermediate = mk(Template{CommonName: "tsnmp test intermediate CA", CA: true}, p.Root)
	p.Server = mk(Template{CommonName: "localhost", Server: true, DNSNames: []string{"localhost"},
		IPs: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}}, p.Intermediate)
	p.Client = mk(Template{CommonName: "chained", Client: true}, p.Intermediate)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		for name, is := range map[string]*Issued{"root": p.Root, "intermediate": p.Intermediate, "server": p.Server, "chained": p.Client} {
			if _, err := is.Save(dir, name); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}
