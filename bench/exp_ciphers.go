package bench

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"time"

	tssh "github.com/tsnmp/tsnmp/ssh"
)

// paperCiphers are the blog's transfer times of a 259 MB file (OpenSSH
// 6.x, 2013): ciphers with hmac-md5, MACs with aes128-ctr.
var paperCiphers = map[string]float64{
	"aes128-ctr": 12.0, "aes192-ctr": 13.3, "aes256-ctr": 14.5,
	"mac:hmac-sha1": 12.5, "mac:hmac-sha2-256": 14.0, "mac:hmac-sha2-512": 14.5,
}

// sshTransfer sends data through tsnmp's SSH to the sink subsystem and
// waits for its acknowledgement; the time includes the handshake.
func sshTransfer(ctx context.Context, addr string, cfg *tssh.ClientConfig, data []byte) error {
	cl, err := tssh.Dial(ctx, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	ch, err := cl.Subsystem("sink")
	if err != nil {
		return err
	}
	for off := 0; off < len(data); off += 32 << 10 {
		end := min(off+32<<10, len(data))
		if _, err := ch.Write(data[off:end]); err != nil {
			return err
		}
	}
	c, ok := ch.(tssh.Channel)
	if !ok {
		return errors.New("bench: channel without CloseWrite")
	}
	if err := c.CloseWrite(); err != nil {
		return err
	}
	_, err = io.ReadFull(ch, make([]byte, 1))
	return err
}

func runCiphers(ctx context.Context, env *Env, s *Section) error {
	size := 64 << 20
	if env.Quick {
		size = 4 << 20
	}
	data := make([]byte, size)
	rand.Read(data)
	file := filepath.Join(env.Dir, "payload")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return err
	}
	_, userKey, _ := ed25519.GenerateKey(rand.Reader)
	ak := filepath.Join(env.Dir, "authorized_keys")
	if _, err := writeOpenSSHKey(filepath.Join(env.Dir, "user_key"), userKey); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(env.Dir, "user_key.pub"), ak); err != nil {
		return err
	}
	_, hostKey, _ := ed25519.GenerateKey(rand.Reader)
	all := append(tssh.SupportedCiphers(), tssh.CipherNone)
	srv, err := startSSHServer(hostKey, ak, func(c *tssh.ServerConfig) {
		c.AllowNone = true
		c.Ciphers = all
		c.MACs = append(tssh.SupportedMACs(), tssh.MACNone)
	})
	if err != nil {
		return err
	}
	env.Defer(srv.Close)
	sshd, sshdErr := startSshd(env, filepath.Join(env.Dir, "sshd"), hostKey,
		"Ciphers "+join(tssh.SupportedCiphers()), "MACs "+join(tssh.SupportedMACs()))
	if sshdErr != nil {
		s.Note("OpenSSH column empty: %v", sshdErr)
	}
	base, err := sshClientConfig(userKey)
	if err != nil {
		return err
	}
	// OpenSSH's connection set-up alone (process, handshake, remote
	// command), to give its throughput net of set-up as well.
	setup := math.NaN()
	if sshd != nil {
		var st []float64
		for r := 0; r < env.Reps+env.Warmup; r++ {
			d, err := timed(func() error { return sshd.run(ctx, nil, "true") })
			if err != nil {
				return err
			}
			if r >= env.Warmup {
				st = append(st, d.Seconds())
			}
		}
		setup = Summarize(st).Median
		s.Note("OpenSSH set-up alone (`ssh root@127.0.0.1 true`, median of %d) took %s s; the net column subtracts it.", len(st), Num(setup))
	}
	type combo struct{ kind, cipher, mac string }
	var combos []combo
	for _, c := range all {
		mac := tssh.MACHMACSHA256ETM
		if c == tssh.CipherNone {
			mac = tssh.MACNone
		} else if aead(c) {
			mac = "(AEAD)"
		}
		combos = append(combos, combo{"cipher", c, mac})
	}
	for _, m := range tssh.SupportedMACs() {
		combos = append(combos, combo{"mac", tssh.CipherAES128CTR, m})
	}
	if env.Quick {
		combos = []combo{combos[0], combos[3], combos[len(all)-1], combos[len(all)+1]}
	}
	s.Method = append(s.Method, fmt.Sprintf("%d MB of random data go through one SSH connection on loopback per run: tsnmp's SSH client to tsnmp's SSH server (the data written to a subsystem channel, in-process), and OpenSSH's `ssh -c CIPHER -m MAC root@127.0.0.1 'cat > /dev/null'` to sshd with the same host key. Times are from connect to the end of the transfer (handshake included, as for the blog's file transfers); MB/s is size over time. %d runs per combination after %d warm-up, tsnmp and OpenSSH alternating; medians shown. Varying the cipher uses hmac-sha2-256-etm (AEAD ciphers carry their own MAC); varying the MAC uses aes128-ctr. `none` (tsnmp only, AllowNone) is the floor.", size>>20, env.Reps, env.Warmup))
	t := &Table{Columns: []string{"varied", "cipher", "MAC", "tsnmp MB/s", "OpenSSH MB/s", "tsnmp / OpenSSH", "OpenSSH MB/s net of set-up", "tsnmp spread s", "OpenSSH spread s", "OpenSSH relative to aes128-ctr", "paper s (259 MB, 2013)", "paper relative to aes128-ctr"}}
	s.Tables = append(s.Tables, t)
	plot := &Plot{Title: "SSH bulk throughput (median MB/s)", YLabel: "MB/s", XLabel: "cipher / MAC"}
	ser := []Series{{Name: "tsnmp SSH"}, {Name: "OpenSSH"}, {Name: "OpenSSH net of set-up"}}
	var refOpen float64 = math.NaN()
	for ci, cb := range combos {
		env.Step(ci, len(combos), cb.cipher+" "+cb.mac)
		cfg := *base
		cfg.Ciphers = []string{cb.cipher}
		if cb.mac != "(AEAD)" {
			cfg.MACs = []string{cb.mac}
		}
		if cb.cipher == tssh.CipherNone {
			cfg.AllowNone = true
		}
		runs := []struct {
			name string
			run  func() error
		}{{"tsnmp", func() error { return sshTransfer(ctx, srv.addr, &cfg, data) }}}
		if sshd != nil && cb.cipher != tssh.CipherNone {
			opts := []string{"-c", cb.cipher}
			if cb.mac != "(AEAD)" {
				opts = append(opts, "-m", cb.mac)
			}
			runs = append(runs, struct {
				name string
				run  func() error
			}{"OpenSSH", func() error {
				f, err := os.Open(file)
				if err != nil {
					return err
				}
				defer f.Close()
				return sshd.run(ctx, f, "cat > /dev/null", opts...)
			}})
		}
		secs := map[string][]float64{}
		for r := 0; r < env.Reps+env.Warmup; r++ {
			for j := range runs {
				x := runs[(j+r)%len(runs)]
				d, err := timed(x.run)
				if err != nil {
					return fmt.Errorf("%s %s/%s: %w", x.name, cb.cipher, cb.mac, err)
				}
				if r >= env.Warmup {
					secs[x.name] = append(secs[x.name], d.Seconds())
				}
			}
		}
		mbps := func(name string) float64 {
			if len(secs[name]) == 0 {
				return math.NaN()
			}
			return float64(size) / (1 << 20) / Summarize(secs[name]).Median
		}
		tm, om := mbps("tsnmp"), mbps("OpenSSH")
		onet := math.NaN()
		if len(secs["OpenSSH"]) > 0 && Summarize(secs["OpenSSH"]).Median > setup {
			onet = float64(size) / (1 << 20) / (Summarize(secs["OpenSSH"]).Median - setup)
		}
		if cb.kind == "cipher" && cb.cipher == tssh.CipherAES128CTR {
			refOpen = om
		}
		if cb.kind == "mac" && cb.mac == tssh.MACHMACSHA256ETM && math.IsNaN(refOpen) {
			refOpen = om
		}
		pkey := cb.cipher
		if cb.kind == "mac" {
			pkey = "mac:" + cb.mac
		}
		paper, paperRel := "-", "-"
		if p, ok := paperCiphers[pkey]; ok {
			paper, paperRel = Num(p), fmt.Sprintf("%.2f", 12.0/p)
		}
		ospread := "-"
		if len(secs["OpenSSH"]) > 0 {
			ospread = Summarize(secs["OpenSSH"]).Spread()
		}
		t.Add(cb.kind, cb.cipher, cb.mac, Num(tm), Num(om), Ratio(tm, om), Num(onet), Summarize(secs["tsnmp"]).Spread(), ospread,
			Ratio(om, refOpen), paper, paperRel)
		plot.Categories = append(plot.Categories, shortAlg(cb.cipher)+"/"+shortAlg(cb.mac))
		// Throughput from the slowest and the fastest run.
		rate := func(name string) Summary {
			m := Summarize(secs[name])
			if m.N == 0 {
				return m
			}
			mb := float64(size) / (1 << 20)
			return Summary{N: m.N, Min: mb / m.Max, P25: mb / m.P75, Median: mb / m.Median, P75: mb / m.P25, Max: mb / m.Min}
		}
		ser[0].AddBar(rate("tsnmp"))
		ser[1].AddBar(rate("OpenSSH"))
		ser[2].AddValue(onet)
	}
	plot.Series = ser
	s.Plot = plot
	s.Note("\"relative to aes128-ctr\" is throughput relative to aes128-ctr (for the paper: its time for aes128-ctr over the time of the row), so rows compare across machines. The blog's fastest ciphers (arcfour, blowfish-cbc, 3des-cbc, cast128-cbc) and hmac-md5/umac are no longer offered by tsnmp or by this OpenSSH.")
	tlsTable, err := tlsCipherTable(ctx, env, data)
	if err != nil {
		s.Note("TLS cipher suites: %v", err)
	} else {
		s.Tables = append(s.Tables, tlsTable)
	}
	return nil
}

func aead(c string) bool {
	return c == tssh.CipherChaCha20Poly1305 || c == tssh.CipherAES128GCM || c == tssh.CipherAES256GCM
}

func join(xs []string) string {
	var b bytes.Buffer
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(x)
	}
	return b.String()
}

func shortAlg(s string) string {
	m := map[string]string{"chacha20-poly1305@openssh.com": "chacha20", "aes128-gcm@openssh.com": "aes128gcm", "aes256-gcm@openssh.com": "aes256gcm",
		"hmac-sha2-256-etm@openssh.com": "sha256etm", "hmac-sha2-512-etm@openssh.com": "sha512etm", "hmac-sha2-256": "sha256", "hmac-sha2-512": "sha512",
		"hmac-sha1": "sha1", "(AEAD)": "aead"}
	if v, ok := m[s]; ok {
		return v
	}
	return s
}

// tlsCipherTable measures TLS 1.2 throughput per cipher suite with Go's
// crypto/tls, the library under tsnmp's TLS transport.
func tlsCipherTable(ctx context.Context, env *Env, data []byte) (*Table, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ts, err := startTLSServer(key)
	if err != nil {
		return nil, err
	}
	ts.l.Close()
	t := &Table{Title: "TLS 1.2 cipher suites (Go crypto/tls, as tsnmp's TLS transport; ECDSA P-256 certificate)", Columns: []string{"cipher suite", "MB/s (median)", "spread s"}}
	suites := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}
	pool := x509.NewCertPool()
	leaf, _ := x509.ParseCertificate(ts.cert.Certificate[0])
	pool.AddCert(leaf)
	for _, suite := range suites {
		l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{ts.cert}, CipherSuites: []uint16{suite}, MaxVersion: tls.VersionTLS12})
		if err != nil {
			return nil, err
		}
		go serveEach(l, func(c net.Conn) { io.Copy(io.Discard, c) })
		var secs []float64
		for r := 0; r < env.Reps+env.Warmup; r++ {
			d, err := timed(func() error {
				dl := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: "tsnmp-bench", MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}}}
				c, err := dl.DialContext(ctx, "tcp", l.Addr().String())
				if err != nil {
					return err
				}
				defer c.Close()
				for off := 0; off < len(data); off += 32 << 10 {
					if _, err := c.Write(data[off:min(off+32<<10, len(data))]); err != nil {
						return err
					}
				}
				c.(*tls.Conn).CloseWrite()
				c.SetReadDeadline(time.Now().Add(30 * time.Second))
				_, err = io.Copy(io.Discard, c) // the server closes after reading all
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					return err
				}
				return nil
			})
			if err != nil {
				l.Close()
				return nil, err
			}
			if r >= env.Warmup {
				secs = append(secs, d.Seconds())
			}
		}
		l.Close()
		sm := Summarize(secs)
		t.Add(tls.CipherSuiteName(suite), Num(float64(len(data))/(1<<20)/sm.Median), sm.Spread())
	}
	return t, nil
}
