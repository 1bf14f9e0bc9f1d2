package bench

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"path/filepath"
	"sort"
	"time"

	tssh "github.com/tsnmp/tsnmp/ssh"
)

// tlsServer is a TLS 1.3 server (Go crypto/tls, the library under
// tsnmp's TLS transport) answering one byte per connection.
type tlsServer struct {
	l    net.Listener
	cert tls.Certificate
}

func startTLSServer(key crypto.Signer) (*tlsServer, error) {
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tsnmp-bench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"tsnmp-bench"}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	go serveEach(l, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		b := make([]byte, 1)
		if _, err := io.ReadFull(c, b); err == nil {
			c.Write(b)
		}
	})
	return &tlsServer{l: l, cert: cert}, nil
}

// tlsOnce connects, exchanges a byte and closes; it reports resumption.
func tlsOnce(ctx context.Context, addr string, cfg *tls.Config) (bool, error) {
	d := tls.Dialer{Config: cfg}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte{1}); err != nil {
		return false, err
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		return false, err
	}
	return c.(*tls.Conn).ConnectionState().DidResume, nil
}

// sshOnce connects with tsnmp's SSH client, opens the snmp subsystem,
// exchanges a message and closes; it returns the next resumption state.
func sshOnce(ctx context.Context, addr string, cfg *tssh.ClientConfig) ([]byte, bool, error) {
	cl, err := tssh.Dial(ctx, "tcp", addr, cfg)
	if err != nil {
		return nil, false, err
	}
	defer cl.Close()
	ch, err := cl.Subsystem("snmp")
	if err != nil {
		return nil, false, err
	}
	msg := []byte("get sysDescr.0")
	if _, err := ch.Write(msg); err != nil {
		return nil, false, err
	}
	if _, err := io.ReadFull(ch, make([]byte, len(msg))); err != nil {
		return nil, false, err
	}
	return cl.ResumptionState(), cl.Resumed(), nil
}

func runResume(ctx context.Context, env *Env, s *Section) error {
	runs, osshRuns, tsmRuns := 1000, 30, 1000
	kts := keyTypes
	if env.Quick {
		runs, osshRuns, tsmRuns = 20, 3, 20
		kts = []keyType{keyTypes[1], keyTypes[4]}
	}
	_, userKey, _ := ed25519.GenerateKey(rand.Reader)
	ak := filepath.Join(env.Dir, "authorized_keys")
	if _, err := writeOpenSSHKey(filepath.Join(env.Dir, "user_key"), userKey); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(env.Dir, "user_key.pub"), ak); err != nil {
		return err
	}
	s.Method = append(s.Method,
		fmt.Sprintf("Each run opens a connection on loopback, authenticates, exchanges one message and closes, timed from dial to close, as the paper timed `ssh host exit`. %d runs per key and mode (%d for OpenSSH, whose `ssh host true` is a whole process), modes alternating run by run, after %d warm-up run(s); the table gives the spread and the plot the latencies sorted, as the paper plots them.", runs, osshRuns, env.Warmup),
		"tsnmp SSH: full key exchange (tsnmp's default, mlkem768x25519-sha256, host key signature, publickey user authentication with an Ed25519 key), resumed with a ticket (resume-ticket@tsnmp.dev, client-side state) and with the server's session cache (resume-server@tsnmp.dev). TLS: TLS 1.3 with Go's crypto/tls (the library under tsnmp's TLS transport), full and resumed with a session ticket; server authentication only. OpenSSH: `ssh root@127.0.0.1 true` against sshd with the same host key, full handshake (OpenSSH has no resumption).")
	t := &Table{Columns: []string{"host key", "protocol and mode", "runs", "min ms", "p25 ms", "median ms", "p75 ms", "max ms", "full / this (median)"}}
	s.Tables = append(s.Tables, t)
	plot := &Plot{XLabel: "run (sorted by latency)", YLabel: "ms", LogY: true}
	plotKey := "" // the key type whose latencies the plot shows
	for ki, kt := range kts {
		err := func() error {
			return resumeKey(ctx, env, s, t, plot, &plotKey, ki, len(kts), kt, runs, osshRuns, ak, userKey)
		}()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.Note("%s: not measured: %v", kt.Name, err)
		}
	}
	s.Plot = plot
	s.Note("The paper (OpenSSH with resumption, 2009) found the gain small on a fast idle machine with 1024-bit keys, a factor of 4 on a slow one, and growing with the key length; resumed handshakes were largely independent of the key length.")
	if err := resumeTSM(ctx, env, s, kts, tsmRuns, plot, plotKey); err != nil {
		return err
	}
	s.Note("The table of SNMP sessions over TLS and DTLS times tsnmp's manager against tsnmpd's tls: (TLS 1.3) and dtls: (DTLS 1.2) listeners, one tsnmpd per key type with a CA, agent and manager certificate of that type (RSA certificates take the ECDHE_RSA suites in DTLS, ECDSA and Ed25519 ones ECDHE_ECDSA): dial, handshake with client and server certificates, one get of sysDescr.0 and close, full or resumed with the ticket the previous session left (kept on disk as tsnmp's command does), %d runs per key type and mode, modes alternating run by run. Resumed handshakes make no signatures (TLS 1.3 with a PSK and ECDHE, DTLS with tsnmp's ECDHE-PSK ticket), but they are not quite independent of the key: both ends verify the certificate chains again on resumption, as RFC 6353's mapping needs, and the manager reads its key from disk for each session, as tsnmp's command does; both cost more with long RSA keys.", tsmRuns)
	return nil
}

// resumeKey measures every mode with one host key type.
func resumeKey(ctx context.Context, env *Env, s *Section, t *Table, plot *Plot, plotKey *string, ki, nkeys int, kt keyType, runs, osshRuns int, ak string, userKey ed25519.PrivateKey) error {
	{
		key, err := kt.gen()
		if err != nil {
			return err
		}
		type mode struct {
			name string
			run  func() error
		}
		var modes []mode
		// tsnmp SSH servers: tickets only, cache only.
		srvT, err := startSSHServer(key, ak, func(c *tssh.ServerConfig) { c.Resumption = &tssh.ResumptionConfig{Tickets: true} })
		if err != nil {
			return fmt.Errorf("%s: tsnmp ssh server: %w", kt.Name, err)
		}
		env.Defer(srvT.Close)
		srvC, err := startSSHServer(key, ak, func(c *tssh.ServerConfig) { c.Resumption = &tssh.ResumptionConfig{ServerCache: true} })
		if err != nil {
			return err
		}
		env.Defer(srvC.Close)
		base, err := sshClientConfig(userKey)
		if err != nil {
			return err
		}
		full := *base
		modes = append(modes, mode{"tsnmp SSH full", func() error { _, _, err := sshOnce(ctx, srvT.addr, &full); return err }})
		for _, rs := range []struct {
			name string
			srv  *sshServer
		}{{"tsnmp SSH resumed (ticket)", srvT}, {"tsnmp SSH resumed (server cache)", srvC}} {
			cfg := *base
			cfg.Resumption = true
			var state []byte
			modes = append(modes, mode{rs.name, func() error {
				c := cfg
				c.ResumptionState = state
				st, resumed, err := sshOnce(ctx, rs.srv.addr, &c)
				if err != nil {
					return err
				}
				if state != nil && !resumed {
					return errors.New("not resumed")
				}
				state = st
				return nil
			}})
		}
		ts, err := startTLSServer(key)
		if err != nil {
			return fmt.Errorf("%s: TLS: %w", kt.Name, err)
		}
		env.Defer(func() { ts.l.Close() })
		pool := x509.NewCertPool()
		leaf, _ := x509.ParseCertificate(ts.cert.Certificate[0])
		pool.AddCert(leaf)
		tlsFull := &tls.Config{RootCAs: pool, ServerName: "tsnmp-bench", ClientSessionCache: nil}
		tlsRes := &tls.Config{RootCAs: pool, ServerName: "tsnmp-bench", ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		modes = append(modes, mode{"TLS 1.3 full", func() error { _, err := tlsOnce(ctx, ts.l.Addr().String(), tlsFull); return err }})
		first := true
		modes = append(modes, mode{"TLS 1.3 resumed", func() error {
			r, err := tlsOnce(ctx, ts.l.Addr().String(), tlsRes)
			if err == nil && !r && !first {
				err = errors.New("not resumed")
			}
			first = false
			return err
		}})
		lat := map[string][]float64{}
		// Warm-up doubles as the first connection that hands out state.
		for r := 0; r < runs+env.Warmup; r++ {
			if r%50 == 0 {
				env.Step(ki*runs+r, nkeys*runs, fmt.Sprintf("%s run %d/%d", kt.Name, r, runs))
			}
			for j := range modes {
				m := modes[(j+r)%len(modes)]
				d, err := timed(m.run)
				if err != nil {
					return fmt.Errorf("%s %s: %w", kt.Name, m.name, err)
				}
				if r >= env.Warmup {
					lat[m.name] = append(lat[m.name], float64(d)/1e6)
				}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		order := []string{}
		for _, m := range modes {
			order = append(order, m.name)
		}
		// OpenSSH, full handshakes as whole processes.
		sshd, err := startSshd(env, filepath.Join(env.Dir, "sshd-"+kt.Name), key)
		if err != nil {
			s.Note("OpenSSH with %s: %v", kt.Name, err)
		} else {
			for r := 0; r < osshRuns+env.Warmup; r++ {
				env.Step(ki*runs+runs-1, nkeys*runs, fmt.Sprintf("%s OpenSSH run %d/%d", kt.Name, r, osshRuns))
				d, err := timed(func() error { return sshd.run(ctx, nil, "true") })
				if err != nil {
					return fmt.Errorf("%s OpenSSH: %w", kt.Name, err)
				}
				if r >= env.Warmup {
					lat["OpenSSH ssh full (process)"] = append(lat["OpenSSH ssh full (process)"], float64(d)/1e6)
				}
			}
			order = append(order, "OpenSSH ssh full (process)")
			sshd.proc.Stop()
		}
		fullMed := map[string]float64{"tsnmp": Summarize(lat["tsnmp SSH full"]).Median, "TLS": Summarize(lat["TLS 1.3 full"]).Median}
		for _, name := range order {
			sm := Summarize(lat[name])
			ratio := "-"
			switch name {
			case "tsnmp SSH resumed (ticket)", "tsnmp SSH resumed (server cache)":
				ratio = Ratio(fullMed["tsnmp"], sm.Median)
			case "TLS 1.3 resumed":
				ratio = Ratio(fullMed["TLS"], sm.Median)
			}
			t.Add(kt.Name, name, fmt.Sprint(sm.N), Num(sm.Min), Num(sm.P25), Num(sm.Median), Num(sm.P75), Num(sm.Max), ratio)
			if *plotKey == "" {
				ys := append([]float64(nil), lat[name]...)
				sort.Float64s(ys)
				xs := make([]float64, len(ys))
				for i := range xs {
					xs[i] = float64(i + 1)
				}
				plot.Series = append(plot.Series, Series{Name: name, X: xs, Y: ys})
			}
		}
		if *plotKey == "" {
			*plotKey = kt.Name
			plot.Title = "Sorted handshake latencies, " + kt.Name + " host key and certificates"
		}
		srvT.Close()
		srvC.Close()
		ts.l.Close()
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := readFile(src)
	if err != nil {
		return err
	}
	return writeFile(dst, b)
}

// resumeTSM times SNMP sessions over tsnmpd's tls: and dtls: listeners,
// full handshakes against handshakes resumed with the ticket kept from the
// previous session, with one tsnmpd per key type whose CA, agent and
// manager certificates have keys of that type. The latencies of key type
// plotKey join the plot.
func resumeTSM(ctx context.Context, env *Env, s *Section, kts []keyType, runs int, plot *Plot, plotKey string) error {
	t := &Table{Title: "SNMP sessions over TLS and DTLS to tsnmpd (CA, agent and manager certificates with keys of the type given, client and server authentication, one get per session)",
		Columns: []string{"certificate key", "protocol and mode", "runs", "min ms", "p25 ms", "median ms", "p75 ms", "max ms", "full / this (median)"}}
	s.Tables = append(s.Tables, t)
	for ki, kt := range kts {
		err := resumeTSMKey(ctx, env, s, t, kt, ki, len(kts), runs, plot, kt.Name == plotKey)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			t.Add(kt.Name, "TLS and DTLS: not measured (see the notes)", "0", "-", "-", "-", "-", "-", "-")
			s.Note("TLS and DTLS to tsnmpd with %s certificates: not measured: %v", kt.Name, err)
		}
	}
	return nil
}

// resumeTSMKey measures TLS and DTLS, full and resumed, against a tsnmpd
// with certificates of key type kt. A transport that fails is reported as
// not measured in its rows; the other one goes on.
func resumeTSMKey(ctx context.Context, env *Env, s *Section, t *Table, kt keyType, ki, nkeys, runs int, plot *Plot, plotted bool) error {
	a, proc, err := startTLSAgent(env, kt)
	if err != nil {
		return err
	}
	defer proc.Stop()
	type mode struct {
		name, transport string
		dtls            bool
		cache           string
		resume          bool
	}
	var modes []mode
	for _, dtls := range []bool{false, true} {
		name := "TLS"
		if dtls {
			name = "DTLS"
		}
		cache := filepath.Join(env.Dir, "tsm-tickets-"+name+"-"+kt.Name)
		modes = append(modes, mode{"tsnmp SNMP/" + name + " full", name, dtls, "", false},
			mode{"tsnmp SNMP/" + name + " resumed", name, dtls, cache, true})
	}
	lat := map[string][]float64{}
	failed := map[string]error{}
	// missed counts resumed sessions that fell back to a full handshake
	// (a lost ticket); they are left out of the resumed latencies.
	missed := map[string]int{}
	warm := env.Warmup
	if warm < 1 {
		warm = 1 // the first resumed session is full and hands out the ticket
	}
	for r := 0; r < runs+warm; r++ {
		if r%50 == 0 {
			env.Step(ki*runs+r, nkeys*runs, fmt.Sprintf("TLS and DTLS to tsnmpd, %s certificates, run %d/%d", kt.Name, r, runs))
		}
		for j := range modes {
			m := modes[(j+r)%len(modes)]
			if failed[m.transport] != nil {
				continue
			}
			var resumed bool
			d, err := timed(func() error {
				var e error
				resumed, e = a.getTLS(ctx, m.dtls, m.cache)
				return e
			})
			switch {
			case err != nil:
				failed[m.transport] = fmt.Errorf("%s: %w", m.name, err)
			case r < warm:
			case resumed && !m.resume:
				failed[m.transport] = fmt.Errorf("%s: resumed without a ticket", m.name)
			case !resumed && m.resume:
				if missed[m.name]++; missed[m.name] > runs/10 {
					failed[m.transport] = fmt.Errorf("%s: %d sessions not resumed", m.name, missed[m.name])
				}
			default:
				lat[m.name] = append(lat[m.name], float64(d)/1e6)
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(failed) == 2 {
			break
		}
	}
	if len(failed) == 2 {
		return fmt.Errorf("%v; %v", failed["TLS"], failed["DTLS"])
	}
	var full float64
	for _, m := range modes {
		if err := failed[m.transport]; err != nil {
			if m.resume {
				t.Add(kt.Name, "tsnmp SNMP/"+m.transport+": not measured (see the notes)", "0", "-", "-", "-", "-", "-", "-")
				s.Note("%s to tsnmpd with %s certificates: not measured: %v", m.transport, kt.Name, err)
			}
			continue
		}
		sm := Summarize(lat[m.name])
		ratio := "-"
		if m.resume {
			ratio = Ratio(full, sm.Median)
			if n := missed[m.name]; n > 0 {
				s.Note("%s, %s certificates: %d of %d sessions fell back to a full handshake (the ticket was lost) and are not counted.", m.name, kt.Name, n, runs)
			}
		} else {
			full = sm.Median
		}
		t.Add(kt.Name, m.name, fmt.Sprint(sm.N), Num(sm.Min), Num(sm.P25), Num(sm.Median), Num(sm.P75), Num(sm.Max), ratio)
		if plotted {
			ys := append([]float64(nil), lat[m.name]...)
			sort.Float64s(ys)
			xs := make([]float64, len(ys))
			for i := range xs {
				xs[i] = float64(i + 1)
			}
			plot.Series = append(plot.Series, Series{Name: m.name, X: xs, Y: ys})
		}
	}
	return nil
}
