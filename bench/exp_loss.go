package bench

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// setLoss installs (or, with perTenThousand 0, removes) an nftables rule
// in ns dropping that share of the packets entering any interface there.
func setLoss(ns *netns.NS, perTenThousand int) error {
	nft := peerPath("nft")
	if nft == "" {
		return fmt.Errorf("nft is not installed (apt-get install nftables)")
	}
	script := "table inet tsnmpbench\ndelete table inet tsnmpbench\n"
	if perTenThousand > 0 {
		script += fmt.Sprintf("table inet tsnmpbench {\n chain in {\n  type filter hook input priority 0; policy accept;\n  numgen random mod 10000 < %d drop\n }\n}\n", perTenThousand)
	}
	cmd := ns.Command(nft, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %v: %s", err, out)
	}
	return nil
}

func runLoss(ctx context.Context, env *Env, s *Section) error {
	w, a, err := walkPrelude(env, s, "nft")
	if w == nil {
		return err
	}
	size, losses, limit, reps := 51, []int{0, 10, 50, 100}, 180*time.Second, env.RepsUpTo(2)
	if env.Quick {
		size, losses, limit, reps = 7, []int{0, 50}, 30*time.Second, 1
	}
	warm := env.Warmup
	if env.Quick {
		warm = 0 // a lossy walk is slow; quick mode is a smoke test
	}
	n, err := w.resize(ctx, a, size)
	if err != nil {
		return err
	}
	type kind struct {
		name string
		run  func(ctx context.Context) (int, error)
	}
	v2 := manager.Config{Version: snmp.V2c, Community: "public", Timeout: time.Second, Retries: 5}
	ap := usmConfig(snmp.AuthPriv)
	ap.Timeout, ap.Retries = time.Second, 5
	mk := func(name string, cfg manager.Config, tcp bool, rt manager.Retransmit) kind {
		return kind{name, func(ctx context.Context) (int, error) {
			n, _, err := walkOnce(ctx, w, target(a.tsnmpd, tcp), walkKind{cfg: cfg, tcp: tcp}, rt)
			return n, err
		}}
	}
	kinds := []kind{
		mk("tsnmp v2c/UDP fixed 1 s", v2, false, manager.RetransmitFixed),
		mk("tsnmp v2c/UDP adaptive", v2, false, manager.RetransmitAdaptive),
		mk("tsnmp v2c/TCP", v2, true, manager.RetransmitAuto),
		mk("tsnmp v3/USM/UDP/ap fixed 1 s", ap, false, manager.RetransmitFixed),
		mk("tsnmp v3/USM/UDP/ap adaptive", ap, false, manager.RetransmitAdaptive),
		mk("tsnmp v3/USM/TCP/ap", ap, true, manager.RetransmitAuto),
	}
	// TSM over TLS (a stream, like TCP) and DTLS (datagrams: the manager
	// retransmits as over UDP), with the same timer and retries.
	tsm := manager.Config{Timeout: time.Second, Retries: 5}
	mkTLS := func(name string, dtls bool, rt manager.Retransmit) kind {
		k := a.tls.walkKind(dtls, false, tsm)
		return kind{name, func(ctx context.Context) (int, error) {
			n, _, err := walkOnce(ctx, w, "", k, rt)
			return n, err
		}}
	}
	kinds = append(kinds,
		mkTLS("tsnmp v3/TSM/TLS/ap", false, manager.RetransmitAuto),
		mkTLS("tsnmp v3/TSM/DTLS/ap fixed 1 s", true, manager.RetransmitFixed),
		mkTLS("tsnmp v3/TSM/DTLS/ap adaptive", true, manager.RetransmitAdaptive),
	)
	// TSM over SSH, a stream like TLS.
	sshCfg, err := a.ssh.clientConfig(false, "", "")
	if err != nil {
		return err
	}
	sshKind := walkKind{Transport: "v3/TSM/SSH/ap", open: func(ctx context.Context) (*manager.Session, error) { return a.ssh.dial(ctx, sshCfg) }}
	kinds = append(kinds, kind{"tsnmp v3/TSM/SSH/ap", func(ctx context.Context) (int, error) {
		n, _, err := walkOnce(ctx, w, "", sshKind, manager.RetransmitAuto)
		return n, err
	}})
	if env.Quick {
		kinds = []kind{kinds[0], kinds[1], kinds[2], kinds[6], kinds[8]}
	}
	if sw := peerPath("snmpwalk"); sw != "" && a.snmpd != nil {
		for _, tcp := range []bool{false, true} {
			tgt := target(a.snmpd, tcp)
			kinds = append(kinds, kind{"snmpwalk→snmpd v2c/" + udpTCP(tcp) + " (1 s, 5 retries)", func(ctx context.Context) (int, error) {
				cmd := w.Command(sw, "-v2c", "-c", "public", "-m", "", "-On", tgt, ".1.3.6.1.2.1.2.2")
				out, err := commandOutput(ctx, cmd)
				if err != nil {
					return 0, fmt.Errorf("snmpwalk: %v: %s", err, out)
				}
				return strings.Count(out, "\n") + 1, nil
			}})
			if env.Quick {
				break
			}
		}
	}
	s.Method = append(s.Method,
		fmt.Sprintf("The getnext walk of ifTable with %d interfaces (%d requests) runs with packets dropped at random by an nftables rule (`numgen random mod 10000 < K drop`) on the input hook of the namespace, so each packet, request or response, is lost with the stated probability (this kernel has no netem). The manager is tsnmp's (in-process) against tsnmpd, and Net-SNMP's snmpwalk (as a process) against snmpd. Fixed retransmission waits 1 s per attempt with 5 retries, as Net-SNMP; adaptive follows RFC 6298 from the measured round-trip time. %d repetition(s) per point (after %d warm-up at 0%% loss only); median shown. Walks are bounded by %v.", n, 22*n+1, reps, warm, limit))
	t := &Table{Columns: []string{"loss %", "manager and transport", "median ms", "spread ms", "ratio to no loss"}}
	s.Tables = append(s.Tables, t)
	plot := &Plot{Title: fmt.Sprintf("getnext walk of ifTable (%d interfaces) under packet loss", n), XLabel: "packet loss (%)", YLabel: "ms (median)", LogY: true}
	ser := make([]Series, len(kinds))
	base := map[string]float64{}
	for li, loss := range losses {
		if err := setLoss(w.NS, loss); err != nil {
			return err
		}
		lat := map[string][]float64{}
		warm := warm
		if loss > 0 {
			warm = 0 // warmed up at 0% loss; a lossy walk is slow
		}
		for r := 0; r < reps+warm; r++ {
			for j := range kinds {
				k := kinds[(j+r)%len(kinds)]
				env.Step(li*len(kinds)+j, len(losses)*len(kinds), fmt.Sprintf("loss %.1f%% %s", float64(loss)/100, k.name))
				wctx, cancel := context.WithTimeout(ctx, limit)
				d, err := timed(func() error { _, e := k.run(wctx); return e })
				cancel()
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					s.Note("loss %.1f%%, %s: %v", float64(loss)/100, k.name, err)
					continue
				}
				if r >= warm {
					lat[k.name] = append(lat[k.name], float64(d)/1e6)
				}
			}
		}
		for j, k := range kinds {
			ser[j].Name = k.name
			sm := Summarize(lat[k.name])
			if sm.N == 0 {
				t.Add(fmt.Sprintf("%.1f", float64(loss)/100), k.name, "failed", "-", "-")
				ser[j].Add(float64(loss)/100, sm)
				continue
			}
			if loss == 0 {
				base[k.name] = sm.Median
			}
			t.Add(fmt.Sprintf("%.1f", float64(loss)/100), k.name, Num(sm.Median), sm.Spread(), Ratio(sm.Median, base[k.name]))
			if li == len(losses)-1 {
				if j == 0 {
					s.Headline = fmt.Sprintf("At %.1f%% loss (median walk ms):", float64(loss)/100)
				}
				s.Headline += fmt.Sprintf(" %s %s;", k.name, Num(sm.Median))
			}
			ser[j].Add(float64(loss)/100, sm)
		}
	}
	setLoss(w.NS, 0)
	if s.Headline != "" {
		s.Headline = strings.TrimSuffix(s.Headline, ";") + "."
	}
	plot.Series = ser
	s.Plot = plot
	s.Note("The TLS and DTLS rows use tsnmpd's tls: and dtls: listeners with certificates made for the run, a full handshake per walk (under loss the handshake is retransmitted by TCP for TLS and by DTLS's own timer for DTLS). Over DTLS the manager retransmits lost requests as over UDP, with the fixed or adaptive timer; over TLS, as over TCP, it leaves that to TCP. The SSH row uses tsnmpd's ssh: listener (Ed25519 keys, tsnmp's default algorithms), a full key exchange per walk.")
	return nil
}

// commandOutput runs cmd bounded by ctx and returns its combined output.
func commandOutput(ctx context.Context, cmd *exec.Cmd) (string, error) {
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return b.String(), err
	case <-ctx.Done():
		cmd.Process.Kill() // our own child, by PID
		<-done
		return b.String(), ctx.Err()
	}
}
