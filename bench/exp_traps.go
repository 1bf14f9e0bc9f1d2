package bench

import (
	"bytes"
	"context"
	"crypto"
	gotls "crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
	"github.com/tsnmp/tsnmp/internal/certs"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
	"github.com/tsnmp/tsnmp/transport/dtls"
	tlstm "github.com/tsnmp/tsnmp/transport/tls"
	"golang.org/x/net/ipv4"
)

// trapsConf is the receivers' snmptrapd.conf: SNMPv2c traps and informs
// with community public, SNMPv3 informs from a user localized to the
// receiver's own engine, and, for the storm, a slow traphandle.
const trapsConf = `authCommunity log,execute public
createUser benchinf SHA benchauthpass AES benchprivpass
authUser log,execute benchinf priv
createUser -e 0x80001f8804beefcafe01 benchtrap SHA benchauthpass AES benchprivpass
authUser log,execute benchtrap priv
`

// trapSenderEngine is the engine ID of the SNMPv3 trap sender, which the
// receivers' createUser -e line localizes benchtrap to.
var trapSenderEngine = []byte{0x80, 0x00, 0x1f, 0x88, 0x04, 0xbe, 0xef, 0xca, 0xfe, 0x01}

// trapsSmall shrinks the experiment for its test: 50 informs, a storm of
// 2,000 traps, a 1 ms handler.
var trapsSmall bool

// trapReceiver is one receiver under test: tsnmp trapd or snmptrapd,
// logging in snmptrapd's text format to a file.
type trapReceiver struct {
	name  string
	p     *Proc
	log   string         // its log file
	ports map[string]int // by domain ("udp", "dtls")
	port  int            // its udp: port
	f     *os.File       // the log, open for reading
	buf   []byte
	off   int64 // how far logged has read the log
	count int   // notifications counted up to off
	last  []byte
}

// logged returns the notifications the receiver has logged: in the
// default format each starts with a line that ends in "]:" (date, host
// and transport address), which no other line does. It reads only what
// was added since the last call, up to the last complete line, and keeps
// the last line read (lastLine).
func (r *trapReceiver) logged() int {
	if r.f == nil {
		f, err := os.Open(r.log)
		if err != nil {
			return r.count
		}
		r.f, r.buf = f, make([]byte, 1<<18)
	}
	for {
		n, err := r.f.ReadAt(r.buf, r.off)
		b := r.buf[:n]
		i := bytes.LastIndexByte(b, '\n')
		if i < 0 {
			return r.count
		}
		r.count += bytes.Count(b[:i+1], []byte("]:\n"))
		r.off += int64(i + 1)
		j := bytes.LastIndexByte(b[:i], '\n') // b starts a line
		r.last = append(r.last[:0], b[j+1:i]...)
		if err != nil {
			return r.count
		}
	}
}

// lastLine returns the last line logged (up to the last logged call).
func (r *trapReceiver) lastLine() string { return string(r.last) }

// receiverSpec says how to start a receiver: tsnmp trapd (prog "") or
// an snmptrapd, on a free port per domain of 127.0.0.1, with conf
// written to dir (where its certificates are, for dtls:; a new
// directory when empty).
type receiverSpec struct {
	name, prog string
	conf, dir  string
	domains    []string
}

// trapsMIBDir returns the MIB directory both receivers load (-M DIR -m
// ALL): $TSNMP_MIBDIR, else shared/mibs beside the source tree or the
// working directory, else Net-SNMP's default.
func trapsMIBDir() string {
	ok := func(d string) bool { _, err := os.Stat(filepath.Join(d, "SNMPv2-MIB.txt")); return err == nil }
	if d := os.Getenv("TSNMP_MIBDIR"); d != "" && ok(d) {
		return d
	}
	dir, _ := os.Getwd()
	for i := 0; i < 10 && dir != "/"; i++ {
		if d := filepath.Join(filepath.Dir(dir), "shared", "mibs"); ok(d) {
			return d
		}
		dir = filepath.Dir(dir)
	}
	return "/usr/share/snmp/mibs"
}

// startTrapReceiver starts tsnmp trapd or snmptrapd with conf on a free
// UDP port of 127.0.0.1.
func startTrapReceiver(env *Env, name, conf string) (*trapReceiver, error) {
	prog := ""
	if name == "snmptrapd" {
		prog = peerPath("snmptrapd")
	}
	return startReceiver(env, receiverSpec{name: name, prog: prog, conf: conf, domains: []string{"udp"}})
}

// startReceiver starts the receiver spec describes.
func startReceiver(env *Env, spec receiverSpec) (*trapReceiver, error) {
	dir, err := os.MkdirTemp(env.Dir, "receiver-")
	if err != nil {
		return nil, err
	}
	confDir := spec.dir
	if confDir == "" {
		confDir = dir
	}
	cf := filepath.Join(confDir, fmt.Sprintf("snmptrapd-%s.conf", filepath.Base(dir)))
	if err := os.WriteFile(cf, []byte(spec.conf), 0o600); err != nil {
		return nil, err
	}
	r := &trapReceiver{name: spec.name, log: filepath.Join(dir, "traps.log"), ports: map[string]int{}}
	var addrs []string
	for _, d := range spec.domains {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		r.ports[d] = port
		addrs = append(addrs, fmt.Sprintf("%s:127.0.0.1:%d", d, port))
	}
	r.port = r.ports["udp"]
	mibs := trapsMIBDir()
	var cmd *exec.Cmd
	var ready func(string) bool
	if spec.prog != "" {
		cmd = exec.Command(spec.prog, append([]string{"-f", "-C", "-c", cf, "-M", mibs, "-m", "ALL", "-Lf", r.log, "-p", filepath.Join(dir, "pid")}, addrs...)...)
		cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+dir, "MIBS=", "MIBDIRS="+mibs, "SNMPCONFPATH="+confDir, "HOME="+dir)
	} else {
		cmd = exec.Command(env.Tsnmp, append([]string{"trapd", "--snmptrapd-conf", cf, "--state-dir", filepath.Join(dir, "state"), "--log", r.log, "-M", mibs, "-m", "ALL"}, addrs...)...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
		ready = func(l string) bool { return strings.Contains(l, "listening on") }
	}
	p, err := harness.Start(spec.name, strings.Join(addrs, " "), cmd, ready, 20*time.Second)
	if err != nil {
		return nil, err
	}
	r.p = p
	env.Defer(func() {
		p.Stop()
		if r.f != nil {
			r.f.Close()
		}
	})
	if spec.prog != "" {
		// snmptrapd logs its version line once it listens.
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if b, _ := os.ReadFile(r.log); bytes.Contains(b, []byte("NET-SNMP version")) {
				break
			}
			if time.Now().After(deadline) || p.Exited() {
				p.Stop()
				return nil, fmt.Errorf("bench: %s did not start:\n%s", spec.name, p.Log())
			}
		}
	}
	return r, nil
}

// linkDownVarBinds are the varbinds of the notification sent: a linkDown
// with ifIndex, ifAdminStatus and ifOperStatus.
func linkDownVarBinds() []snmp.VarBind {
	return []snmp.VarBind{{Name: snmp.OID{1, 3, 6, 1, 2, 1, 1, 3, 0}, Value: snmp.TimeTicksValue(4242)},
		{Name: snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}, Value: snmp.OIDValue(snmp.OID{1, 3, 6, 1, 6, 3, 1, 1, 5, 3})},
		{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 1, 2}, Value: snmp.IntegerValue(2)},
		{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 7, 2}, Value: snmp.IntegerValue(1)},
		{Name: snmp.OID{1, 3, 6, 1, 2, 1, 2, 2, 1, 8, 2}, Value: snmp.IntegerValue(2)}}
}

// informConfigs are the sessions of the inform round trips.
var informConfigs = []struct {
	name string
	cfg  manager.Config
}{
	{"v2c", manager.Config{Version: snmp.V2c, Community: "public"}},
	{"v3 authPriv (SHA, AES)", manager.Config{Version: snmp.V3, Level: snmp.AuthPriv, User: "benchinf", AuthProtocol: usm.AuthSHA1,
		AuthPassword: "benchauthpass", PrivProtocol: usm.PrivAES128, PrivPassword: "benchprivpass"}},
}

// udpDrops returns the kernel's count of datagrams dropped at the UDP
// socket bound to 127.0.0.1:port (the drops column of /proc/net/udp),
// or -1 if there is no such socket.
func udpDrops(port int) int64 {
	b, err := os.ReadFile("/proc/net/udp")
	if err != nil {
		return -1
	}
	local := fmt.Sprintf("0100007F:%04X", port)
	var drops int64 = -1
	for _, l := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) >= 13 && f[1] == local {
			// Several sockets may share the port (SO_REUSEPORT).
			n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
			if err == nil {
				drops = max(drops, 0) + n
			}
		}
	}
	return drops
}

func runTraps(ctx context.Context, env *Env, s *Section) error {
	if peerPath("snmptrapd") == "" {
		s.Skipped = "Net-SNMP's snmptrapd is not installed (apt-get install snmptrapd)"
		return nil
	}
	informs, storm, sleep := 1000, 100000, "0.01"
	if env.Quick {
		informs, storm, sleep = 200, 10000, "0.002"
	}
	if trapsSmall {
		informs, storm, sleep = 50, 2000, "0.001"
	}
	names := []string{"tsnmp trapd", "snmptrapd"}
	const stormRatePerSec = 10000
	s.Method = append(s.Method,
		fmt.Sprintf("Inform round trip: tsnmp's manager (in-process) sends InformRequests (a linkDown with three objects) one at a time over UDP on 127.0.0.1 and times each until its Response; %d informs per repetition, %d repetitions after %d warm-up, the receivers alternated within each repetition. Each receiver logs every notification in snmptrapd's text format to a file. SNMPv3 informs use a user localized to the receiver's engine ID, which the session discovers once (not timed).", informs, env.Reps, env.Warmup),
		fmt.Sprintf("Storm: %d SNMPv2c traps are sent to the receiver's UDP socket at %d per second (bursts of 10 every millisecond), while a traphandle (/bin/sh -c 'sleep %s; cat >/dev/null') runs for every trap. Received is what the receiver logged once it stopped making progress (no new line for 3 s); handled is the handler runs (a counter file the handler appends to); dropped is what the receiver counted and reported (tsnmp trapd's queue and handler-queue drops, printed at exit), and the kernel's UDP receive-buffer drops (the drops column of the receiver's socket in /proc/net/udp). Unaccounted is what was sent and appears in none of these. Each receiver keeps its own UDP socket buffer (tsnmp trapd asks for 4 MiB, snmptrapd has the kernel's default). Run once per receiver (tsnmp trapd first).", storm, stormRatePerSec, sleep))
	rateTraps, dtlsTraps := 100000, 100000
	if env.Quick {
		rateTraps, dtlsTraps = 20000, 20000
	}
	if trapsSmall {
		rateTraps, dtlsTraps = 1000, 200
	}
	modern := filepath.Join(netSNMP595, "sbin", "snmptrapd")
	if _, err := os.Stat(modern); err != nil {
		modern = ""
	}
	mibs := trapsMIBDir()
	s.Method = append(s.Method,
		fmt.Sprintf("Receive rate over UDP: the traps (the same linkDown) are encoded once per repetition by tsnmp's manager (in-process; %d distinct messages, sent to a socket of the bench and read back) and then sent as they are, %d in all, with sendmmsg(2) in batches of up to 64 and at most %d sent but not yet logged at any time; both receivers' UDP socket buffers are 4 MiB (tsnmp trapd asks for that, snmptrapd has [snmp] serverRecvBuf 4194304), so no datagram is lost (the kernel's drop count of each socket is checked to stay 0) and every trap is logged. The rate is traps over the time from the first sent to the last logged, as seen in the receiver's log file (read every 50 µs while the window is full). SNMPv2c with community public, and SNMPv3 authPriv (SHA, AES) from an engine the receivers' createUser -e line names.", captureCount, rateTraps, udpWindow),
		fmt.Sprintf("Receive rate over DTLS: SNMPv3/TSM authPriv traps over %d DTLS 1.2 sessions (certificates made for the run, the receivers map the sender's certificate to the securityName alice with certSecName), %d traps in all, at most %d not yet logged (both receivers take 4 MiB socket buffers, as for UDP). As for UDP, the sender does its work before the clock starts: the traps are encoded by tsnmp's manager (%d distinct ones, read back from a DTLS listener of the bench), each session's records are sealed in advance (transport/dtls.Sender, after a full handshake by pion/dtls), and the records go out with sendmmsg, alternating between the sessions. The peer is Net-SNMP 5.9.5's snmptrapd (not Debian's 5.9.3, whose TLS speaks only TLS 1.0).", dtlsSessions, dtlsTraps, udpWindow, captureCount),
		fmt.Sprintf("Receive rate: %d repetitions after %d warm-up, the receivers alternated within each repetition, the median reported; no handler. Both receivers log every notification in snmptrapd's default text format to a file, with the same MIB modules loaded (-M %s -m ALL); the bench checks that the last record each logged is the same text.", env.Reps, env.Warmup, mibs),
		fmt.Sprintf("Receivers: tsnmp trapd (this build, GOMAXPROCS=2) and Debian's snmptrapd 5.9.3 (Net-SNMP 5.9.5's for DTLS), both with the same snmptrapd.conf, -M %s -m ALL, their log on a file.", mibs))
	rateT := &Table{Columns: []string{"session", "receiver", "traps", "median traps/s", "spread traps/s", "kernel drops", "tsnmp trapd / snmptrapd (median)"}}
	rt := &Table{Columns: []string{"session", "receiver", "informs", "median µs", "p90 µs", "p99 µs", "spread µs", "tsnmp trapd / snmptrapd (median)"}}
	st := &Table{Columns: []string{"receiver", "sent", "received (logged)", "handled", "dropped (counted by the receiver)", "dropped (kernel buffer)", "unaccounted", "receive s", "traps/s logged"}}
	s.Tables = append(s.Tables, rateT, rt, st)
	ratePlot := &Plot{Title: "Notifications received and logged per second (median)", YLabel: "traps/s", LogY: true}
	rateSeries := []*Series{{Name: names[0]}, {Name: "snmptrapd (5.9.3; 5.9.5 for DTLS)"}}
	rows := len(informConfigs)
	if modern != "" {
		rows++
	}
	steps := (rows+len(informConfigs))*(env.Reps+env.warmup()) + 2
	step := 0

	// Receive rates.
	pki := filepath.Join(env.Dir, "traps-pki")
	p, err := certs.NewPKI("", pki)
	if err != nil {
		return err
	}
	dtlsConf := fmt.Sprintf("[snmp] serverRecvBuf 4194304\n[snmp] localCert server\n[snmp] trustCert ca\ncertSecName 10 %s --sn alice\nauthUser log,execute -s tsm alice priv\n",
		certs.Compute(crypto.SHA1, p.Alice.Cert)) // Net-SNMP 5.9.5 matches fingerprints in SHA-1
	// For the rates both receivers take up to 4 MiB in their UDP socket
	// buffers (tsnmp trapd asks for that itself).
	rateConf := "[snmp] serverRecvBuf 4194304\n" + trapsConf
	recv := map[string]*trapReceiver{}
	domains := []string{"udp"}
	if modern != "" {
		domains = append(domains, "dtls")
	}
	if recv[names[0]], err = startReceiver(env, receiverSpec{name: names[0], conf: rateConf + dtlsConf, dir: pki, domains: domains}); err != nil {
		return err
	}
	if recv[names[1]], err = startReceiver(env, receiverSpec{name: names[1], prog: peerPath("snmptrapd"), conf: rateConf, domains: []string{"udp"}}); err != nil {
		return err
	}
	var modernRecv *trapReceiver
	if modern != "" {
		if modernRecv, err = startReceiver(env, receiverSpec{name: "snmptrapd 5.9.5", prog: modern, conf: dtlsConf, dir: pki, domains: []string{"dtls"}}); err != nil {
			return err
		}
	}
	rates := map[string]map[string]float64{}
	type rateRow struct {
		name  string
		cfg   manager.Config
		dtls  bool
		peers []*trapReceiver
	}
	var rowsList []rateRow
	for _, ic := range informConfigs {
		cfg := ic.cfg
		if cfg.Version == snmp.V3 {
			cfg.User, cfg.SecurityEngineID = "benchtrap", trapSenderEngine
		}
		rowsList = append(rowsList, rateRow{name: ic.name, cfg: cfg, peers: []*trapReceiver{recv[names[0]], recv[names[1]]}})
	}
	if modern != "" {
		rowsList = append(rowsList, rateRow{name: dtlsRow, dtls: true, peers: []*trapReceiver{recv[names[0]], modernRecv}})
	}
	for _, row := range rowsList {
		var send func(r *trapReceiver) (float64, int64, error)
		if row.dtls {
			msgs, err := captureTSMTraps(ctx, p, pki, captureCount)
			if err != nil {
				return fmt.Errorf("%s: %w", row.name, err)
			}
			senders := map[*trapReceiver][]*dtls.Sender{}
			for _, r := range row.peers {
				tgt := fmt.Sprintf("dtls:127.0.0.1:%d", r.ports["dtls"])
				c, err := (&manager.TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, CertDirs: []string{pki}, NoResume: true}).ClientConfig(tgt)
				if err != nil {
					return err
				}
				for range dtlsSessions {
					sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					snd, err := dtls.DialSender(sctx, "udp4", fmt.Sprintf("127.0.0.1:%d", r.ports["dtls"]), c)
					cancel()
					if err != nil {
						return fmt.Errorf("%s: %s: %w\n%s", row.name, r.name, err, r.p.Log())
					}
					defer snd.Close()
					senders[r] = append(senders[r], snd)
				}
			}
			send = func(r *trapReceiver) (float64, int64, error) {
				k0 := udpDrops(r.ports["dtls"])
				rate, err := dtlsBlast(ctx, senders[r], r, msgs, dtlsTraps, udpWindow)
				return rate, max(udpDrops(r.ports["dtls"])-k0, 0), err
			}
		} else {
			capture, err := newTrapCapture(ctx, row.cfg)
			if err != nil {
				return err
			}
			defer capture.Close()
			send = func(r *trapReceiver) (float64, int64, error) {
				msgs, err := capture.traps(ctx, captureCount)
				if err != nil {
					return 0, 0, err
				}
				k0 := udpDrops(r.port)
				rate, err := trapBlast(ctx, r, msgs, rateTraps, udpWindow)
				return rate, max(udpDrops(r.port)-k0, 0), err
			}
		}
		got := map[*trapReceiver][]float64{}
		drops := map[*trapReceiver]int64{}
		for rep := 0; rep < env.Reps+env.warmup(); rep++ {
			env.Step(step, steps, fmt.Sprintf("receive rate %s, repetition %d", row.name, rep+1))
			step++
			for j := range row.peers {
				r := row.peers[(j+rep)%2]
				rate, d, err := send(r)
				drops[r] += d
				if err != nil {
					return fmt.Errorf("%s traps to %s: %w (kernel drops %d)\n%s", row.name, r.name, err, d, r.p.Log())
				}
				if rep >= env.warmup() {
					got[r] = append(got[r], rate)
				}
			}
		}
		// The same notification, logged by both: the same text.
		if a, b := row.peers[0].lastLine(), row.peers[1].lastLine(); a != b {
			return fmt.Errorf("%s: the receivers log differently:\n%s: %q\n%s: %q", row.name, row.peers[0].name, a, row.peers[1].name, b)
		}
		rates[row.name] = map[string]float64{}
		for i, r := range row.peers {
			rates[row.name][names[i]] = Summarize(got[r]).Median
		}
		ratePlot.Categories = append(ratePlot.Categories, row.name)
		for i, r := range row.peers {
			sm := Summarize(got[r])
			ratio := "-"
			if i == 0 {
				ratio = Ratio(rates[row.name][names[0]], rates[row.name][names[1]])
			}
			kd := fmt.Sprint(drops[r])
			n := fmt.Sprint(rateTraps)
			if row.dtls {
				n = fmt.Sprint(dtlsTraps)
			}
			rateT.Add(row.name, r.name, n, Num(sm.Median), sm.Spread(), kd, ratio)
			rateSeries[i].AddBar(sm)
		}
	}
	if modernRecv != nil {
		modernRecv.p.Stop()
	}
	ratePlot.Series = []Series{*rateSeries[0], *rateSeries[1]}
	s.Plot = ratePlot

	// Inform round trips.
	med := map[string]map[string]float64{}
	vbs := linkDownVarBinds()
	for _, ic := range informConfigs {
		sess := map[string]*manager.Session{}
		for _, n := range names {
			cfg := ic.cfg
			cfg.Timeout, cfg.Retries = 2*time.Second, 1
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			sn, err := manager.Dial(sctx, fmt.Sprintf("udp:127.0.0.1:%d", recv[n].port), cfg)
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %s: %w", ic.name, n, err)
			}
			defer sn.Close()
			sess[n] = sn
		}
		lat := map[string][]float64{}
		for r := 0; r < env.Reps+env.warmup(); r++ {
			env.Step(step, steps, fmt.Sprintf("informs %s, repetition %d", ic.name, r+1))
			step++
			for j := range names {
				n := names[(j+r)%2]
				for range informs {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					d, err := timed(func() error {
						_, err := sess[n].Do(ctx, &snmp.PDU{Type: snmp.InformRequest, VarBinds: vbs})
						return err
					})
					if err != nil {
						return fmt.Errorf("%s inform to %s: %w\n%s", ic.name, n, err, recv[n].p.Log())
					}
					if r >= env.warmup() {
						lat[n] = append(lat[n], float64(d)/1e3)
					}
				}
			}
		}
		med[ic.name] = map[string]float64{}
		for _, n := range names {
			med[ic.name][n] = Summarize(lat[n]).Median
		}
		for _, n := range names {
			sm := Summarize(lat[n])
			ratio := "-"
			if n == names[0] {
				ratio = Ratio(med[ic.name][names[0]], med[ic.name][names[1]])
			}
			rt.Add(ic.name, n, fmt.Sprint(len(lat[n])), Num(sm.Median), Num(quantile(sortedCopy(lat[n]), 0.9)), Num(quantile(sortedCopy(lat[n]), 0.99)), sm.Spread(), ratio)
		}
	}
	for _, n := range names {
		recv[n].p.Stop()
	}

	// The storm.
	stormLogged := map[string]int{}
	stormRate := map[string]float64{}
	unacc := map[string]int{}
	for _, n := range names {
		env.Step(step, steps, fmt.Sprintf("storm of %d traps to %s", storm, n))
		step++
		dir, err := os.MkdirTemp(env.Dir, "handler-")
		if err != nil {
			return err
		}
		count := filepath.Join(dir, "handled")
		handler := fmt.Sprintf("traphandle default /bin/sh -c 'sleep %s; cat >/dev/null; echo >> %s'\n", sleep, count)
		r, err := startTrapReceiver(env, n, trapsConf+handler)
		if err != nil {
			return err
		}
		res, err := trapStorm(ctx, r, storm)
		if err != nil {
			return err
		}
		// The handler runs one program at a time: wait until it has
		// stopped running (no new run for 2 s), then stop the receiver,
		// which prints its counters (tsnmp trapd).
		handled := waitQuiet(ctx, func() int {
			hb, _ := os.ReadFile(count)
			return bytes.Count(hb, []byte("\n"))
		}, 2*time.Second, 2*time.Minute)
		r.p.Stop()
		logged := r.logged()
		counted := 0
		dropped := "- (snmptrapd counts none)"
		if n == names[0] {
			counted = trapdCounter(r.p.Log(), "queue drops")
			dropped = fmt.Sprintf("%d (queue); %d more logged but not handed to the handler (handler queue)", counted, trapdCounter(r.p.Log(), "handler drops"))
		}
		u := storm - logged - counted - int(res.kernelDrops)
		stormLogged[n], unacc[n] = logged, u
		stormRate[n] = float64(logged) / res.receive.Seconds()
		st.Add(n, fmt.Sprint(storm), fmt.Sprint(logged), fmt.Sprint(handled), dropped, fmt.Sprint(res.kernelDrops), fmt.Sprint(u),
			Num(res.receive.Seconds()), Num(stormRate[n]))
	}
	ic1 := informConfigs[1].name
	dtlsText := ""
	if modern != "" {
		dtlsText = fmt.Sprintf("; DTLS %s and %s (snmptrapd 5.9.5; %s)", Num(rates[dtlsRow][names[0]]), Num(rates[dtlsRow][names[1]]), Ratio(rates[dtlsRow][names[0]], rates[dtlsRow][names[1]]))
	} else {
		s.Note("The DTLS row did not run: Net-SNMP 5.9.5 (%s) is not installed (/work/shared/peers/install-netsnmp-5.9.5.sh installs it).", netSNMP595)
	}
	s.Headline = fmt.Sprintf("Receive rate (v2c/UDP): tsnmp trapd %s traps/s, snmptrapd %s (%s); v3 authPriv/UDP %s and %s (%s)%s. Inform round trip (v2c, median): tsnmp trapd %s µs, snmptrapd %s µs (%s). Storm of %d traps with a slow handler: tsnmp trapd logged %d (unaccounted %d), snmptrapd %d (unaccounted %d).",
		Num(rates["v2c"][names[0]]), Num(rates["v2c"][names[1]]), Ratio(rates["v2c"][names[0]], rates["v2c"][names[1]]),
		Num(rates[ic1][names[0]]), Num(rates[ic1][names[1]]), Ratio(rates[ic1][names[0]], rates[ic1][names[1]]), dtlsText,
		Num(med["v2c"][names[0]]), Num(med["v2c"][names[1]]), Ratio(med["v2c"][names[0]], med["v2c"][names[1]]), storm,
		stormLogged[names[0]], unacc[names[0]], stormLogged[names[1]], unacc[names[1]])
	s.Note("snmptrapd runs each traphandle program to completion before it reads the next message, so a slow handler stalls reception: the kernel drops what no longer fits in the socket buffer, and snmptrapd itself counts nothing. tsnmp trapd logs every notification first and hands it to the handler through a bounded queue (1000); what does not fit is dropped from the handler queue, counted and reported, and reception goes on.")
	s.Note("The issue's target is tsnmp trapd taking at least 10 times snmptrapd's rate with no unaccounted loss. Both processes share this machine's CPUs with the sender (and with anything else running), so the ratio moves with the load; the UDP sender costs little (pre-encoded datagrams, sendmmsg), the DTLS sender encrypts each trap as it sends it and shares the CPUs with the receiver. `go test -run XXX -bench TrapReceive ./cmd/tsnmp` measures the v2c rate alone (docs/notifications.md).")
	return nil
}

// Receive-rate settings: the most traps sent and not yet logged (4 MiB
// socket buffers, UDP and DTLS alike), the distinct messages encoded per
// repetition, and the DTLS row.
const (
	udpWindow    = 1024
	dtlsSessions = 4
	captureCount = 512
	dtlsRow      = "v3/TSM authPriv over DTLS"
	netSNMP595   = "/opt/netsnmp-src"
)

// stallLimit is how long a rate run waits for the receiver to log
// anything new before it gives up.
const stallLimit = 10 * time.Second

// waiter sleeps while a receiver catches up, and fails once it has logged
// nothing new for stallLimit.
type waiter struct {
	r          *trapReceiver
	base, last int
	at         time.Time
}

func newWaiter(r *trapReceiver, base int) *waiter {
	return &waiter{r: r, base: base, last: base, at: time.Now()}
}

func (w *waiter) wait(ctx context.Context, sent int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if l := w.r.logged(); l != w.last {
		w.last, w.at = l, time.Now()
	} else if time.Since(w.at) > stallLimit {
		return fmt.Errorf("%d of %d traps logged, nothing more for %v", l-w.base, sent, stallLimit)
	}
	time.Sleep(50 * time.Microsecond)
	return nil
}

// trapCapture is a session of tsnmp's manager sending traps to a socket
// of the bench, which reads them back: one per session row, so that an
// SNMPv3 sender's engine time only goes forward (a receiver takes a
// trap whose engine time is more than 150 s behind what it has seen as
// outside the time window).
type trapCapture struct {
	pc   *net.UDPConn
	sess *manager.Session
}

func newTrapCapture(ctx context.Context, cfg manager.Config) (*trapCapture, error) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	cfg.Timeout, cfg.Retries = 2*time.Second, 1
	sess, err := manager.Dial(ctx, "udp:"+pc.LocalAddr().String(), cfg)
	if err != nil {
		pc.Close()
		return nil, err
	}
	return &trapCapture{pc: pc, sess: sess}, nil
}

func (c *trapCapture) Close() {
	c.sess.Close()
	c.pc.Close()
}

// traps returns n datagrams of traps (the linkDown) as the session sends
// them now.
func (c *trapCapture) traps(ctx context.Context, n int) ([][]byte, error) {
	pdu := &snmp.PDU{Type: snmp.SNMPv2Trap, VarBinds: linkDownVarBinds()}
	buf := make([]byte, 65536)
	msgs := make([][]byte, 0, n)
	for range n {
		if err := c.sess.Notify(ctx, pdu); err != nil {
			return nil, err
		}
		if err := c.pc.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			return nil, err
		}
		k, _, err := c.pc.ReadFrom(buf)
		if err != nil {
			return nil, fmt.Errorf("bench: reading back a trap sent: %w", err)
		}
		msgs = append(msgs, bytes.Clone(buf[:k]))
	}
	return msgs, nil
}

// trapBlast sends n datagrams, cycling through msgs, to r's UDP port with
// sendmmsg(2), at most window not yet logged, and returns the traps
// logged per second.
func trapBlast(ctx context.Context, r *trapReceiver, msgs [][]byte, n, window int) (float64, error) {
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: r.port})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	pc := ipv4.NewPacketConn(c)
	batch := make([]ipv4.Message, 64)
	base := r.logged()
	w := newWaiter(r, base)
	start := time.Now()
	for sent := 0; sent < n; {
		room := min(window-(sent-(r.logged()-base)), len(batch), n-sent)
		if room <= 0 {
			if err := w.wait(ctx, sent); err != nil {
				return 0, err
			}
			continue
		}
		for i := range room {
			batch[i].Buffers = [][]byte{msgs[(sent+i)%len(msgs)]}
		}
		k, err := pc.WriteBatch(batch[:room], 0)
		if err != nil {
			return 0, err
		}
		sent += k
	}
	for r.logged()-base < n {
		if err := w.wait(ctx, n); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// stormResult is what a storm did.
type stormResult struct {
	receive     time.Duration // from the first trap sent to the last logged
	kernelDrops uint64
}

// trapStorm sends n SNMPv2c traps to r's UDP port at 10,000 per second
// and waits until r logs no new notification for 3 s.
func trapStorm(ctx context.Context, r *trapReceiver, n int) (stormResult, error) {
	m := snmp.Message{Version: snmp.V2c, Community: []byte("public"), PDU: snmp.PDU{Type: snmp.SNMPv2Trap, RequestID: 1, VarBinds: linkDownVarBinds()}}
	msg := snmp.AppendMessage(nil, &m)
	c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", r.port))
	if err != nil {
		return stormResult{}, err
	}
	defer c.Close()
	k0 := udpDrops(r.port)
	start := time.Now()
	// Bursts of 10 every millisecond: 10,000 traps per second.
	for i := range n {
		if i%10 == 0 {
			if d := time.Until(start.Add(time.Duration(i/10) * time.Millisecond)); d > 0 {
				time.Sleep(d)
			}
		}
		if _, err := c.Write(msg); err != nil {
			return stormResult{}, err
		}
	}
	last, lastAt := -1, time.Now()
	var done time.Time
	for {
		if ctx.Err() != nil {
			return stormResult{}, ctx.Err()
		}
		l := r.logged()
		if l != last {
			last, lastAt, done = l, time.Now(), time.Now()
		}
		if l >= n || time.Since(lastAt) > 3*time.Second {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return stormResult{receive: done.Sub(start), kernelDrops: uint64(max(udpDrops(r.port)-k0, 0))}, nil
}

// waitQuiet polls f until its value has not changed for quiet (or limit
// passes) and returns the last value.
func waitQuiet(ctx context.Context, f func() int, quiet, limit time.Duration) int {
	last, at, end := f(), time.Now(), time.Now().Add(limit)
	for ctx.Err() == nil && time.Since(at) < quiet && time.Now().Before(end) {
		time.Sleep(50 * time.Millisecond)
		if v := f(); v != last {
			last, at = v, time.Now()
		}
	}
	return last
}

// trapdCounter reads a counter ("queue drops 12") from the line tsnmp
// trapd prints at exit.
func trapdCounter(log, name string) int {
	i := strings.LastIndex(log, name+" ")
	if i < 0 {
		return 0
	}
	f := strings.FieldsFunc(log[i+len(name)+1:], func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\n' })
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.Atoi(f[0])
	return v
}

func sortedCopy(xs []float64) []float64 {
	c := append([]float64(nil), xs...)
	slices.Sort(c)
	return c
}

// captureHandler keeps the messages a DTLS listener of the bench gets.
type captureHandler struct {
	mu   sync.Mutex
	msgs [][]byte
}

func (h *captureHandler) ServeSNMP(_ *transport.StateReference, msg, _ []byte) []byte {
	h.mu.Lock()
	h.msgs = append(h.msgs, bytes.Clone(msg))
	h.mu.Unlock()
	return nil
}

func (h *captureHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.msgs)
}

// captureTSMTraps returns n SNMPv3/TSM traps (the linkDown) as tsnmp's
// manager sends them over DTLS (their plaintext, read by a DTLS listener
// of the bench with p's certificates).
func captureTSMTraps(ctx context.Context, p *certs.PKI, pki string, n int) ([][]byte, error) {
	m, err := tlstm.NewCertToTSN([]tlstm.Rule{{Priority: 1, Fingerprint: certs.Compute(crypto.SHA256, p.Alice.Cert), Map: tlstm.MapSpecified, Name: "alice"}})
	if err != nil {
		return nil, err
	}
	h := &captureHandler{}
	cfg := &tlstm.ServerConfig{Certificates: []gotls.Certificate{p.Server.TLS()}, TrustAnchors: []*x509.Certificate{p.CA.Cert}, Map: m}
	l, err := dtls.Listen(transport.Address{Domain: transport.DTLS, Network: "udp4", Host: "127.0.0.1"}, h, cfg, nil)
	if err != nil {
		return nil, err
	}
	go l.Serve()
	defer l.Close()
	tgt := "dtls:" + l.Addr().String()
	c, err := (&manager.TransportParams{OurIdentity: "alice", TrustCert: []string{"ca"}, CertDirs: []string{pki}, NoResume: true}).ClientConfig(tgt)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sn, err := manager.DialSecure(sctx, tgt, manager.Config{Version: snmp.V3, Level: snmp.AuthPriv, Timeout: 2 * time.Second, Retries: 1}, c)
	if err != nil {
		return nil, err
	}
	defer sn.Close()
	pdu := &snmp.PDU{Type: snmp.SNMPv2Trap, VarBinds: linkDownVarBinds()}
	for i := 0; i < n; i++ {
		if err := sn.Notify(sctx, pdu); err != nil {
			return nil, err
		}
		for h.count() < i-64 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	for start := time.Now(); h.count() < n; time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			return nil, fmt.Errorf("bench: %d of %d traps sent over DTLS read back (the bench's DTLS listener dropped %+v)", h.count(), n, l.RecordStats())
		}
	}
	return h.msgs, nil
}

// dtlsBlast sends n traps, cycling through msgs, over the sessions ss to
// r, at most window not yet logged, and returns the traps logged per
// second. The records are sealed before the clock starts, and sent with
// sendmmsg(2), a batch per session in turn.
func dtlsBlast(ctx context.Context, ss []*dtls.Sender, r *trapReceiver, msgs [][]byte, n, window int) (float64, error) {
	recs := make([][][]byte, len(ss))
	for i := 0; i < n; i++ {
		j := i % len(ss)
		recs[j] = append(recs[j], ss[j].Seal(nil, msgs[i%len(msgs)]))
	}
	pcs := make([]*ipv4.PacketConn, len(ss))
	for j, snd := range ss {
		pcs[j] = ipv4.NewPacketConn(snd.Conn())
	}
	next := make([]int, len(ss))
	batch := make([]ipv4.Message, 64)
	base := r.logged()
	w := newWaiter(r, base)
	start := time.Now()
	for sent, j := 0, 0; sent < n; j = (j + 1) % len(ss) {
		room := min(window-(sent-(r.logged()-base)), len(batch), len(recs[j])-next[j])
		if room <= 0 {
			if sent-(r.logged()-base) >= window {
				if err := w.wait(ctx, sent); err != nil {
					return 0, err
				}
			}
			continue
		}
		for i := range room {
			batch[i].Buffers = [][]byte{recs[j][next[j]+i]}
		}
		k, err := pcs[j].WriteBatch(batch[:room], 0)
		if err != nil {
			return 0, err
		}
		next[j] += k
		sent += k
	}
	for r.logged()-base < n {
		if err := w.wait(ctx, n); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
