package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
)

// paperGet is the resumption paper's table (machine "meat"): average
// milliseconds, bytes and packets of one snmpget of sysDescr.0.
var paperGet = map[string][3]float64{
	"v1/CSM/UDP/nn":   {0.25, 292, 2},
	"v1/CSM/TCP/nn":   {0.40, 1012, 10},
	"v2/CSM/UDP/nn":   {0.25, 292, 2},
	"v2/CSM/TCP/nn":   {0.48, 1012, 10},
	"v3/USM/UDP/nn":   {0.48, 718, 4},
	"v3/USM/TCP/nn":   {0.64, 1490, 12},
	"v3/USM/UDP/an":   {0.63, 742, 4},
	"v3/USM/TCP/an":   {0.66, 1514, 12},
	"v3/USM/UDP/ap":   {0.52, 763, 4},
	"v3/USM/TCP/ap":   {0.68, 1535, 12},
	"v3/TSM/SSH/ap":   {13.73, 5310, 31},
	"v3/TSM/TLS/ap":   {11.15, 4107, 16},
	"v3/TSM/DTLS/ap":  {11.05, 3457, 8},
	"v3/TSM/TLSsr/ap": {2.27, 1457, 15},
}

type getRow struct {
	// domain is the transport: UDP or TCP to both agents, or tsnmpd's
	// ssh:, tls: or dtls: listener.
	domain transport.Domain
	resume bool // with SSH, TLS or DTLS session resumption
	tmpfs  bool // resumption state kept on tmpfs rather than in env.Dir
	// group names the rows measured together, their runs interleaved
	// (default: the row alone).
	group  string
	name   string
	cfg    manager.Config
	netsnm []string // Net-SNMP / tsnmp CLI security flags
}

// secure reports whether the row uses a secure transport (TSM).
func (r getRow) secure() bool {
	return r.domain == transport.SSH || r.domain == transport.TLS || r.domain == transport.DTLS
}

func getRows(quick bool) []getRow {
	var rows []getRow
	for _, v := range []struct {
		n string
		v snmp.Version
		f string
	}{{"v1", snmp.V1, "-v1"}, {"v2", snmp.V2c, "-v2c"}} {
		for _, d := range []transport.Domain{transport.UDP, transport.TCP} {
			rows = append(rows, getRow{name: fmt.Sprintf("%s/CSM/%s/nn", v.n, udpTCP(d == transport.TCP)), domain: d,
				cfg: manager.Config{Version: v.v, Community: "public"}, netsnm: []string{v.f, "-c", "public"}})
		}
	}
	for _, l := range levels {
		for _, d := range []transport.Domain{transport.UDP, transport.TCP} {
			rows = append(rows, getRow{name: fmt.Sprintf("v3/USM/%s/%s", udpTCP(d == transport.TCP), l.Short), domain: d,
				cfg: usmConfig(l.Level), netsnm: usmArgs(l.Level)})
		}
	}
	if quick {
		return []getRow{rows[2], rows[3], rows[8], rows[9]}
	}
	return rows
}

func udpTCP(tcp bool) string {
	if tcp {
		return "TCP"
	}
	return "UDP"
}

func target(p *Proc, tcp bool) string {
	if tcp {
		return "tcp:" + p.Addr
	}
	return "udp:" + p.Addr
}

// msStats is min/avg/max in milliseconds, as text and as a Summary
// (whose Mean is NaN when there is no value).
func msStats(ds []time.Duration) (string, Summary) {
	if len(ds) == 0 {
		return "-", Summary{Mean: math.NaN()}
	}
	s := Summarize(Millis(ds))
	return fmt.Sprintf("%s / %s / %s", Num(s.Min), Num(s.Mean), Num(s.Max)), s
}

func runGet(ctx context.Context, env *Env, s *Section) error {
	a, err := startAgentsSSH(env, nil)
	if err != nil {
		return err
	}
	if a.Missing != "" {
		s.Note("%s", a.Missing)
	}
	reps := 10 * env.Reps
	if env.Quick {
		reps = env.Reps
	}
	snmpget := peerPath("snmpget")
	s.Method = append(s.Method,
		fmt.Sprintf("Each row gets sysDescr.0 once per session, %d times after %d unmeasured warm-up runs, the measurements of the row alternating between kinds; the SSH rows, and the TLS and DTLS rows, are measured together, their runs interleaved, so that a full and a resumed session meet the same state of the machine. \"in-process\" is tsnmp's manager package from session open (including USM discovery) to close, as the paper instrumented snmpget; \"process\" is the whole `tsnmp get` or Net-SNMP `snmpget` command (fork, exec, MIB set-up included) with a numeric OID. Times are min / avg / max in ms.", reps, env.Warmup),
		"Bytes and packets are counted from a tcpdump capture on lo of one operation per row and pair (Ethernet frame sizes, as the paper's \"Data\" column), including connection set-up and tear-down for TCP. USM uses HMAC-MD5 and AES-128 as in the paper.")
	t := &Table{Columns: []string{"row", "tsnmp→tsnmpd in-process ms", "tsnmp→snmpd in-process ms", "tsnmp get process ms", "snmpget→snmpd process ms",
		"tsnmp bytes/packets", "snmpget→snmpd bytes/packets", "paper avg ms", "ratio in-process/paper", "paper bytes/packets", "ratio bytes/paper"}}
	s.Tables = append(s.Tables, t)
	plot := &Plot{Title: "One-shot get of sysDescr.0 (avg ms)", YLabel: "ms", XLabel: "protocol/security model/transport/level", LogY: true}
	ser := []Series{{Name: "tsnmp→tsnmpd in-process"}, {Name: "tsnmp get process"}, {Name: "snmpget→snmpd process"}, {Name: "paper (2009, meat)"}}
	sshRuns := map[string]int{}
	rows := append(getRows(env.Quick), getRow{name: "v3/TSM/SSH/ap", domain: transport.SSH, group: "ssh"},
		getRow{name: "v3/TSM/SSHsr/ap", domain: transport.SSH, resume: true, group: "ssh"})
	shm, err := tmpfsDir()
	if err != nil {
		s.Note("v3/TSM/SSHsr/ap with its state on tmpfs is not measured: %v", err)
	} else {
		env.Defer(func() { os.RemoveAll(shm) })
		rows = append(rows, getRow{name: "v3/TSM/SSHsr/ap tmpfs", domain: transport.SSH, resume: true, tmpfs: true, group: "ssh"})
	}
	rows = append(rows, getRow{name: "v3/TSM/TLS/ap", domain: transport.TLS, group: "tls"}, getRow{name: "v3/TSM/DTLS/ap", domain: transport.DTLS, group: "tls"},
		getRow{name: "v3/TSM/TLSsr/ap", domain: transport.TLS, resume: true, group: "tls"},
		getRow{name: "v3/TSM/DTLSsr/ap", domain: transport.DTLS, resume: true, group: "tls"})
	type kind struct {
		name string
		run  func() error
	}
	// rowKinds returns what is measured for a row and the port its
	// capture watches.
	rowKinds := func(row getRow) ([]kind, int, error) {
		if row.domain == transport.SSH {
			cfg, err := a.ssh.clientConfig(row.resume, "", "")
			if err != nil {
				return nil, 0, err
			}
			cli := ""
			if row.resume {
				dir := env.Dir
				if row.tmpfs {
					dir = shm
				}
				cfg.Cache = &sshtm.StateCache{Dir: filepath.Join(dir, "ssh-cache-in")}
				cli = filepath.Join(dir, "ssh-cache-cli")
			}
			args := append(append([]string{"get"}, a.ssh.cliArgs(cli)...), "ssh:"+a.ssh.sshAddr, ".1.3.6.1.2.1.1.1.0")
			return []kind{
				{"in-tsnmpd", func() error {
					resumed, err := oneGetSSH(ctx, a.ssh, cfg)
					if err == nil && row.resume && !resumed && sshRuns[row.name] > 0 {
						err = errors.New("the SSH session was not resumed")
					}
					sshRuns[row.name]++
					return err
				}},
				{"proc-tsnmp", func() error { return runQuiet(ctx, env.Tsnmp, args...) }},
			}, a.ssh.port(), nil
		}
		if dtls := row.domain == transport.DTLS; dtls || row.domain == transport.TLS {
			inCache, cliCache := "", ""
			if row.resume {
				inCache, cliCache = filepath.Join(env.Dir, "tls-cache-in"), filepath.Join(env.Dir, "tls-cache-cli")
			}
			args := append(append([]string{"get"}, a.tls.cliArgs(cliCache)...), a.tls.target(dtls), ".1.3.6.1.2.1.1.1.0")
			return []kind{
				{"in-tsnmpd", func() error {
					resumed, err := a.tls.getTLS(ctx, dtls, inCache)
					if err == nil && row.resume && !resumed && sshRuns[row.name] > 0 {
						err = errors.New("the TLS session was not resumed")
					}
					sshRuns[row.name]++
					return err
				}},
				{"proc-tsnmp", func() error { return runQuiet(ctx, env.Tsnmp, args...) }},
			}, a.tls.port(dtls), nil
		}
		kinds := []kind{
			{"in-tsnmpd", func() error { return oneGet(ctx, target(a.tsnmpd, row.domain == transport.TCP), row.cfg) }},
			{"proc-tsnmp", func() error { return runQuiet(ctx, env.Tsnmp, cliGet(row, a.tsnmpd)...) }},
		}
		if a.snmpd != nil {
			kinds = append(kinds, kind{"in-snmpd", func() error { return oneGet(ctx, target(a.snmpd, row.domain == transport.TCP), row.cfg) }})
			if snmpget != "" {
				kinds = append(kinds, kind{"proc-snmpget", func() error { return runQuiet(ctx, snmpget, cliGet(row, a.snmpd)...) }})
			}
		}
		return kinds, a.tsnmpd.Port(), nil
	}
	for i := 0; i < len(rows); {
		// The rows of a group are measured together: every repetition
		// runs each kind of each row once, in an order rotating from one
		// repetition to the next, so that a slow spell of the machine
		// falls on all of them alike.
		j := i + 1
		for j < len(rows) && rows[i].group != "" && rows[j].group == rows[i].group {
			j++
		}
		group := rows[i:j]
		env.Step(i, len(rows), group[0].name)
		type run struct {
			row int // in group
			kind
		}
		var runs []run
		ports := make([]int, len(group))
		firsts := make([]func() error, len(group))
		for g, row := range group {
			kinds, port, err := rowKinds(row)
			if err != nil {
				return err
			}
			ports[g], firsts[g] = port, kinds[0].run
			for _, kd := range kinds {
				runs = append(runs, run{g, kd})
			}
		}
		lat := make([]map[string][]time.Duration, len(group))
		for g := range lat {
			lat[g] = map[string][]time.Duration{}
		}
		for r := 0; r < reps+env.Warmup; r++ {
			for k := range runs {
				ru := runs[(k+r)%len(runs)]
				d, err := timed(ru.run)
				if err != nil {
					return fmt.Errorf("%s %s: %w", group[ru.row].name, ru.name, err)
				}
				if r >= env.Warmup {
					lat[ru.row][ru.name] = append(lat[ru.row][ru.name], d)
				}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		for g, row := range group {
			if err := getRowResult(ctx, env, a, row, snmpget, ports[g], firsts[g], lat[g], t, plot, ser, &s.Headline); err != nil {
				return err
			}
		}
		i = j
	}
	plot.Series = ser
	s.Plot = plot
	s.Note("v3/TSM/SSH/ap is tsnmp's manager over tsnmpd's ssh: listener with a full key exchange (tsnmp's default, mlkem768x25519-sha256, whose key shares make a full session 2,320 bytes larger than curve25519-sha256's (docs/ssh.md); Ed25519 host and user keys, tsnmp's default cipher); v3/TSM/SSHsr/ap resumes the SSH session with a ticket kept in a cache directory (in-process and across `tsnmp get` processes), the SSH counterpart of the paper's TLSsr row. The state is single-use: every session takes it from its file and stores the next one in a new file, as tsnmp's manager and command do in their cache directory (~/.cache by default); the cache directory is on the file system of the run's scratch directory, while v3/TSM/SSHsr/ap tmpfs keeps it on /dev/shm, so that the difference between the two rows is what storing the state costs on that disk. A one-shot session also opens the snmp channel, gets and closes, which resumption does not shorten: its gain here is smaller than the handshake's alone in the resume experiment. Net-SNMP serves SSH only behind sshd, so its columns are empty there.")
	s.Note("v3/TSM/TLS/ap and v3/TSM/DTLS/ap use tsnmpd's tls: and dtls: listeners with an ECDSA P-256 CA, agent and client certificate (certSecName maps the client's to the securityName), full handshakes; v3/TSM/TLSsr/ap resumes TLS sessions from tickets kept in a cache directory, as the paper's TLSsr row, and v3/TSM/DTLSsr/ap does the same over DTLS (the paper has no DTLS row). Net-SNMP's snmpd is not set up for TLS here, so its columns are empty for these rows.")
	return nil
}

// getRowResult captures one operation of a row (run) and adds the row to
// the table and the plot.
func getRowResult(ctx context.Context, env *Env, a *agents, row getRow, snmpget string, port int, run func() error, lat map[string][]time.Duration, t *Table, plot *Plot, ser []Series, headline *string) error {
	// One captured operation per pair.
	wire := func(port int, run func() error) (string, float64, error) {
		c, err := harness.StartCapture(nil, env.Dir, fmt.Sprintf("port %d", port))
		if err != nil {
			return "", 0, err
		}
		rerr := run()
		pk, err := c.Stop()
		if rerr != nil {
			return "", 0, rerr
		}
		if err != nil {
			return "", 0, err
		}
		b, n := harness.Totals(pk)
		return fmt.Sprintf("%d / %d", b, n), float64(b), nil
	}
	wt, tb, err := wire(port, run)
	if err != nil {
		return fmt.Errorf("%s capture: %w", row.name, err)
	}
	ws := "-"
	if a.snmpd != nil && snmpget != "" && !row.secure() {
		if ws, _, err = wire(a.snmpd.Port(), func() error { return runQuiet(ctx, snmpget, cliGet(row, a.snmpd)...) }); err != nil {
			return fmt.Errorf("%s capture: %w", row.name, err)
		}
	}
	inT, inTsum := msStats(lat["in-tsnmpd"])
	inS, _ := msStats(lat["in-snmpd"])
	prT, prTsum := msStats(lat["proc-tsnmp"])
	prS, prSsum := msStats(lat["proc-snmpget"])
	inTavg := inTsum.Mean
	pp, ok := paperGet[row.name]
	paperMs, paperBP, rMs, rB := "-", "-", "-", "-"
	pavg := math.NaN()
	if ok {
		pavg = pp[0]
		paperMs, paperBP = Num(pp[0]), fmt.Sprintf("%.0f / %.0f", pp[1], pp[2])
		rMs, rB = Ratio(inTavg, pp[0]), Ratio(tb, pp[1])
	}
	t.Add(row.name, inT, inS, prT, prS, wt, ws, paperMs, rMs, paperBP, rB)
	if len(plot.Categories) == 0 {
		*headline = fmt.Sprintf("%s: tsnmp in-process %s ms, tsnmp get %s ms and snmpget %s ms as processes (averages).",
			row.name, Num(inTavg), Num(prTsum.Mean), Num(prSsum.Mean))
	}
	plot.Categories = append(plot.Categories, row.name)
	for j, m := range []Summary{inTsum, prTsum, prSsum} {
		ser[j].AddBar(m)
		if m.N > 0 {
			ser[j].Y[len(ser[j].Y)-1] = m.Mean // the paper gives averages
		}
	}
	ser[3].AddValue(pavg)
	return nil
}

// tmpfsDir makes a directory on a memory file system (/dev/shm), where
// files cost no journal or disk write.
func tmpfsDir() (string, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil {
		return "", err
	}
	if st.Type != 0x01021994 { // TMPFS_MAGIC
		return "", errors.New("/dev/shm is not a tmpfs")
	}
	return os.MkdirTemp("/dev/shm", "tsnmp-bench-")
}

// cliGet returns the arguments of tsnmp get or snmpget for row against p.
func cliGet(row getRow, p *Proc) []string {
	args := []string{}
	if strings.HasSuffix(p.Name, "snmpd") && p.Name == "snmpd" {
		args = append(args, "-m", "")
	} else {
		args = append(args, "get")
	}
	args = append(args, row.netsnm...)
	return append(args, "-t", "2", "-r", "1", target(p, row.domain == transport.TCP), ".1.3.6.1.2.1.1.1.0")
}

// runQuiet runs a command, discarding its output, failing if it fails.
func runQuiet(ctx context.Context, prog string, args ...string) error {
	cmd := exec.CommandContext(ctx, prog, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", prog, strings.Join(args, " "), err, out)
	}
	return nil
}

// oneGetSSH opens a session over SSH, gets sysDescr.0 and closes it.
// It reports whether the SSH session was resumed.
func oneGetSSH(ctx context.Context, a *sshAgent, cfg *sshtm.ClientConfig) (bool, error) {
	s, err := a.dial(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer s.Close()
	return s.Resumed(), getSysDescr(ctx, s)
}
