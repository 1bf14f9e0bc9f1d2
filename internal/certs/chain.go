package certs

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
)

// maxChainLen bounds the certificates CompleteChain appends.
const maxChainLen = 8

// CompleteChain returns chain (DER, the end-entity certificate first, then
// the CAs the identity file holds) followed by the issuers found in pool,
// each the issuer of the certificate before it (by name and signature), up
// to and including a self-signed root. This is the chain Net-SNMP's tools
// send: its agents map a peer by the fingerprint of a CA only when that CA
// is in the chain the peer sent. Certificates already in chain are not
// repeated; a certificate whose issuer is not in pool ends the chain.
func CompleteChain(chain [][]byte, pool []*x509.Certificate) [][]byte {
	if len(chain) == 0 {
		return chain
	}
	out := append([][]byte(nil), chain...)
	last, err := x509.ParseCertificate(out[len(out)-1])
	if err != nil {
		return out
	}
	for len(out) < maxChainLen && !selfSigned(last) {
		var next *x509.Certificate
		for _, c := range pool {
			if bytes.Equal(c.RawSubject, last.RawIssuer) && last.CheckSignatureFrom(c) == nil && !contains(out, c.Raw) {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		out = append(out, next.Raw)
		last = next
	}
	return out
}

func selfSigned(c *x509.Certificate) bool {
	return bytes.Equal(c.RawSubject, c.RawIssuer) && c.CheckSignatureFrom(c) == nil
}

func contains(chain [][]byte, der []byte) bool {
	for _, c := range chain {
		if bytes.Equal(c, der) {
			return true
		}
	}
	return false
}

// CACerts returns the CA certificates under the store's directories
// (tls/ca-certs, and CAs kept in tls/certs), where the issuers of a local
// certificate are looked for.
func (s Store) CACerts() []*x509.Certificate {
	var out []*x509.Certificate
	for _, dir := range append(s.candidates(CADir), s.candidates(CertsDir)...) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			cs, err := ReadCerts(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			for _, c := range cs {
				if c.IsCA || c.Version < 3 {
					out = append(out, c)
				}
			}
		}
	}
	return out
}
