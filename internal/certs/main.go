package certs

import (
	"crypto"
	"flag"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"
)

const usage = `usage: tsnmp cert COMMAND [flags]

commands:
  ca      -dir DIR -name NAME [-cn CN] [-key TYPE] [-days N]
          create a certificate authority (DIR/tls/ca-certs/NAME.crt)
  server  -dir DIR -name NAME -ca CANAME [-cn CN] [-dns NAME,...] [-ip ADDR,...] [-key TYPE] [-days N]
          create a server (agent) certificate signed by CANAME
  client  -dir DIR -name NAME -ca CANAME [-cn CN] [-email ADDR,...] [-dns ...] [-ip ...] [-key TYPE] [-days N]
          create a client (manager) certificate; without -ca it is self-signed
  fingerprint [-hash sha256] FILE|NAME...
          print fingerprints (-dir DIR finds NAME under DIR/tls)

Key types: ecdsa (P-256, default), p384, ed25519, rsa2048, rsa3072, rsa4096,
and rsa1024 (insecure; for key-length measurements only).
Files follow Net-SNMP's layout, so DIR can be Net-SNMP's configuration
directory too: tls/certs/NAME.crt, tls/private/NAME.key (0600),
tls/ca-certs/NAME.crt. Each command prints the matching configuration lines.
`

// Main runs `tsnmp cert ARGS...` and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 1
		}
		return 0
	}
	cmd := args[0]
	fs := flag.NewFlagSet("tsnmp cert "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".", "directory (Net-SNMP layout under DIR/tls)")
	name := fs.String("name", "", "base name of the files")
	cn := fs.String("cn", "", "subject common name (default: the name)")
	kt := fs.String("key", "ecdsa", "key type")
	days := fs.Int("days", 0, "validity in days (default 365, CA 3650)")
	caName := fs.String("ca", "", "base name of the signing CA")
	dns := fs.String("dns", "", "subjectAltName dNSNames, comma separated")
	ips := fs.String("ip", "", "subjectAltName iPAddresses, comma separated")
	emails := fs.String("email", "", "subjectAltName rfc822Names, comma separated")
	hashName := fs.String("hash", "sha256", "fingerprint hash: md5, sha1, sha224, sha256, sha384, sha512")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	h, ok := ParseHashFlag(*hashName)
	if !ok {
		fmt.Fprintf(stderr, "tsnmp cert: unknown hash %q\n", *hashName)
		return 2
	}
	switch cmd {
	case "fingerprint", "fp", "show":
		st := Store{Dirs: []string{*dir}}
		status := 0
		for _, a := range fs.Args() {
			p, cs, err := st.CertFile(a)
			if err != nil {
				fmt.Fprintf(stderr, "tsnmp cert: %v\n", err)
				status = 1
				continue
			}
			for _, c := range cs {
				fmt.Fprintf(stdout, "%s: %s %s\n", p, c.Subject.String(), Compute(h, c))
			}
		}
		return status
	case "ca", "server", "client":
	default:
		fmt.Fprintf(stderr, "tsnmp cert: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if *name == "" {
		fmt.Fprintf(stderr, "tsnmp cert %s: -name is required\n", cmd)
		return 2
	}
	if *cn == "" {
		*cn = *name
	}
	t := Template{CommonName: *cn, CA: cmd == "ca", Server: cmd == "server", Client: cmd == "client",
		DNSNames: split(*dns), Emails: split(*emails), Validity: time.Duration(*days) * 24 * time.Hour}
	for _, s := range split(*ips) {
		ip := net.ParseIP(s)
		if ip == nil {
			fmt.Fprintf(stderr, "tsnmp cert: bad IP address %q\n", s)
			return 2
		}
		t.IPs = append(t.IPs, ip)
	}
	if cmd == "server" && len(t.DNSNames) == 0 && len(t.IPs) == 0 {
		t.DNSNames = []string{*cn}
	}
	if InsecureKeyType(*kt) {
		fmt.Fprintf(stderr, "tsnmp cert: warning: %s keys are insecure; use them for measurements only\n", *kt)
	}
	key, err := GenerateKey(*kt)
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp cert: %v\n", err)
		return 2
	}
	var parent *Issued
	if *caName != "" {
		st := Store{Dirs: []string{*dir}}
		kp, err := st.KeyPair(*caName)
		if err != nil {
			fmt.Fprintf(stderr, "tsnmp cert: CA %s: %v\n", *caName, err)
			return 1
		}
		parent = &Issued{Cert: kp.Leaf, Key: kp.PrivateKey.(crypto.Signer)}
	} else if cmd == "server" {
		fmt.Fprintf(stderr, "tsnmp cert server: -ca is required\n")
		return 2
	}
	is, err := Issue(t, key, parent)
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp cert: %v\n", err)
		return 1
	}
	p, err := is.Save(*dir, *name)
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp cert: %v\n", err)
		return 1
	}
	fp := Compute(h, is.Cert)
	fmt.Fprintf(stdout, "created %s\nfingerprint %s\n\n", p, fp)
	abs, _ := filepath.Abs(*dir)
	printConfig(stdout, cmd, *name, fp, t, abs)
	return 0
}

func printConfig(w io.Writer, cmd, name string, fp Fingerprint, t Template, dir string) {
	switch cmd {
	case "ca":
		fmt.Fprintf(w, "# snmpd.conf (tsnmpd or Net-SNMP), to trust clients this CA signed\n"+
			"[snmp] trustCert %s\ncertSecName 100 %s --cn\n\n", name, fp)
		fmt.Fprintf(w, "# tsnmpd.yaml\ntls:\n  cert_dir: %s\n  trust_certs: [%s]\n  cert_to_name:\n    - {priority: 100, fingerprint: %q, map: cn}\n",
			dir, name, fp.String())
	case "server":
		fmt.Fprintf(w, "# snmpd.conf (tsnmpd or Net-SNMP)\n[snmp] localCert %s\n\n", name)
		fmt.Fprintf(w, "# tsnmpd.yaml\ntls:\n  cert_dir: %s\n  local_certs: [%s]\n\n", dir, name)
		fmt.Fprintf(w, "# manager: pin this server\ntsnmp get -v3 -T their_identity=%q ... tls:HOST sysDescr.0\n", fp.String())
	case "client":
		sn := t.CommonName
		fmt.Fprintf(w, "# agent snmpd.conf: map this certificate to %q\ncertSecName 10 %s --sn %s\nrouser -s tsm %s authpriv\n\n", sn, fp, sn, sn)
		fmt.Fprintf(w, "# agent tsnmpd.yaml\ntls:\n  cert_to_name:\n    - {priority: 10, fingerprint: %q, map: specified, name: %s}\nuser_access:\n  - {user: %s, model: tsm, level: priv}\n\n", fp.String(), sn, sn)
		fmt.Fprintf(w, "# manager (snmp.conf, or -T our_identity=%s)\n[snmp] localCert %s\n", name, name)
	}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
