package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/agentx"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/hostres"
	"github.com/tsnmp/tsnmp/mib/ifmib"
	"github.com/tsnmp/tsnmp/mib/ipmib"
	"github.com/tsnmp/tsnmp/mib/system"
	"github.com/tsnmp/tsnmp/mib/tcpudp"
	"github.com/tsnmp/tsnmp/mib/ucd"
	"github.com/tsnmp/tsnmp/notify"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
	tssh "github.com/tsnmp/tsnmp/ssh"
	"github.com/tsnmp/tsnmp/transport"
)

// daemon is a running agent: engine state, MIB tree and listeners survive
// reloads; the policy (communities, VACM, users, limits) is replaced.
type daemon struct {
	o     *options
	log   *slog.Logger
	out   io.Writer
	state *engine.State
	agent *agent.Agent
	usm   *usm.USM
	vacm  vacmState // vacmmib.go
	// usmRows is usmUserTable's share of the daemon (usmstate.go).
	usmRows usmState
	kick    kickState // usmDHKickstartTable's private values (usmdhkick.go)
	ifmib   *ifmib.MIB
	host    hostMIBs
	cpu     *hostres.CPUHistory // the host MIBs' CPU sampler, kept across their rebuilds
	// agentx is the AgentX master, when `master agentx` is configured.
	agentx          *agentx.Master
	agentxListeners []net.Listener // until serveAgentX
	// ext are the extend, pass and pass_persist subtrees (extend.go).
	ext extensions
	// notify is the notification originator (notify.go); nil without
	// targets. authTraps holds it while authtrapenable is on.
	notify    *notifier
	authTraps atomic.Pointer[notify.Originator]
	// originator is the running originator, for SNMP-TARGET-MIB's
	// tables and AgentX subagents' notifications (agentx.go).
	originator atomic.Pointer[notify.Originator]

	mu sync.Mutex
	// servers are the open listeners, by their listen address (spec).
	servers []listener
	errc    chan error
	// What the transports beyond UDP and TCP and the web-services
	// interface keep across reloads (ssh.go, tls.go, http.go).
	ssh  *sshState
	tls  *tlsState
	http *httpState
	// persist is what was read from snmpd's persistent file (migrate.go).
	persist *config.SnmpdPersistent
	// banner holds the generated passwords of the zero-config user until
	// the listeners they are printed for are bound.
	banner *[2]string
}

// listener is an open listen address.
type listener struct {
	spec string
	srv  transport.Server
}

// Files in the state directory besides the engine's.
const (
	systemFile      = "system.conf"       // sysContact, sysName, sysLocation set by SNMP
	linkTrapsFile   = "link-traps.conf"   // ifLinkUpDownTrapEnable set by SNMP
	defaultUserFile = "default-user.conf" // generated passwords of the zero-config user
)

func loadConfig(o *options) (*config.Config, error) {
	var (
		cfg *config.Config
		err error
	)
	switch {
	case o.config != "":
		cfg, err = config.LoadYAML(o.config)
	case o.snmpdConf != "":
		cfg, err = config.LoadSnmpdConfOptions(o.snmpdConf, config.SnmpdConfOptions{Strict: o.strict, Extra: o.confLines})
	default:
		cfg = config.Default()
	}
	if err != nil {
		return nil, err
	}
	if len(o.listen) > 0 {
		cfg.Listen = o.listen
	}
	applyAgentXFlag(o, cfg)
	return cfg, nil
}

func start(o *options, log *slog.Logger, out io.Writer) (*daemon, error) {
	cfg, err := loadConfig(o)
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		log.Warn("configuration", "warning", w)
	}
	if o.stateDir == "" && cfg.StateDir != "" {
		o.stateDir = cfg.StateDir
	}
	engineID, err := cfg.EngineIDBytes()
	if err != nil {
		return nil, err
	}
	persist, err := readPersistent(o, cfg)
	if err != nil {
		return nil, err
	}
	for _, s := range persistIgnored(persist) {
		log.Warn("snmpd's persistent file", "ignored", s)
	}
	if persist != nil {
		for _, s := range persist.Refused {
			log.Error("snmpd's persistent file: a user snmpd serves is not taken over", "refused", s)
		}
	}
	st, err := engine.OpenOptions(o.stateDir, engine.Options{EngineID: engineID, Regenerate: o.regenerate, Shared: o.stdio, Import: importEngine(persist), Log: log})
	if err != nil {
		return nil, err
	}
	d := &daemon{o: o, log: log, out: out, state: st, errc: make(chan error, 16), persist: persist}
	for _, n := range mergePersistentUsers(cfg, persist, st.EngineID) {
		log.Info("snmpd's persistent file", "user", n)
	}
	if persist != nil && bytes.Equal(persist.EngineID, st.EngineID) && !o.stdio {
		if err := advanceSnmpdBoots(persist.Path, st.Boots); err != nil {
			log.Warn("cannot advance engineBoots in snmpd's persistent file; if snmpd is started again on this engine ID, raise it there above this value first",
				"file", persist.Path, "engineBoots", st.Boots, "err", err)
		}
	}
	ok := false
	defer func() {
		if !ok {
			d.close()
		}
	}()
	if st.Regenerated {
		d.setAsideUSMState()
	}
	d.usm, err = usm.New(usm.Config{EngineID: st.EngineID, EngineBoots: st.Boots, Users: usm.NewUserTable(), Now: nil})
	if err != nil {
		return nil, err
	}
	tree, err := d.buildTree(cfg)
	if err != nil {
		return nil, err
	}
	d.agent = &agent.Agent{Tree: tree, State: st, Log: log, AuthFailure: d.authFailure}
	d.agent.Stats.Register(tree)
	d.agent.RegisterEngine(tree)
	d.agent.RegisterUSMStats(tree)
	d.usmRows.table = d.agent.RegisterUSMUsers(tree, agent.USMUsersOptions{Persist: d.writeUSMRows, Configured: d.usmConfigured,
		PersistDHParameters: d.writeDHParameters})
	d.loadDHParameters()
	d.registerVACMMIB(tree)
	notify.Register(tree, d.originator.Load) // SNMP-TARGET-MIB, SNMP-NOTIFICATION-MIB
	d.ssh, d.tls, d.http = newSSHState(tree), newTLSState(tree), &httpState{}
	if o.stdio { // ssh.go: one session on stdin/stdout, no listeners
		pl, err := d.prepare(cfg, false)
		if err != nil {
			return nil, err
		}
		if err := d.commit(pl); err != nil {
			return nil, err
		}
		ok = true
		return d, nil
	}
	pl, err := d.prepare(cfg, true)
	if err != nil {
		return nil, err
	}
	if err := d.startAgentX(cfg); err != nil {
		pl.abort()
		return nil, err
	}
	if err := d.commit(pl); err != nil {
		return nil, err
	}
	if err := d.startNotifications(cfg, true); err != nil { // notify.go
		return nil, err
	}
	d.serveAgentX()
	ok = true
	d.printBanner()
	log.Info("tsnmpd started", "version", version, "engineID", hex.EncodeToString(st.EngineID),
		"engineBoots", st.Boots, "stateDir", o.stateDir, "listen", strings.Join(cfg.Listen, ","))
	return d, nil
}

// buildTree registers the instrumentation. It is built once: SNMP-set
// values and counters live in it across reloads. Only the host MIBs and
// the extend and pass subtrees are built again, by a reload that changes
// their lines (hostmib.go, extend.go).
func (d *daemon) buildTree(cfg *config.Config) (*mib.Tree, error) {
	var tree mib.Tree
	contact, name, location := d.loadSystem()
	if p := d.persist; p != nil {
		// Values snmpd's SNMP SETs stored, unless tsnmpd has its own.
		for _, v := range []struct {
			dst *string
			src *string
		}{{&contact, p.Contact}, {&name, p.Name}, {&location, p.Location}} {
			if *v.dst == "" && v.src != nil {
				*v.dst = *v.src
			}
		}
	}
	setting := func(configured, persisted string, ok bool) system.Setting {
		if configured != "" {
			return system.Setting{Value: configured, Configured: true}
		}
		return system.Setting{Value: persisted, Configured: false}
	}
	sc := system.Config{
		Descr:    cfg.System.Descr,
		Start:    d.state.Start(),
		Contact:  setting(cfg.System.Contact, contact, true),
		Name:     setting(cfg.System.Name, name, true),
		Location: setting(cfg.System.Location, location, true),
		Persist:  d.persistSystem,
		ORs:      sysORs,
	}
	if p := d.persist; p != nil && p.HasSetSerialNo {
		sc.SetSerialNo = &p.SetSerialNo
	}
	oid, err := cfg.SysObjectID()
	if err != nil {
		return nil, err
	}
	sc.ObjectID = oid
	if cfg.System.Services != nil {
		sc.Services = *cfg.System.Services
	}
	system.New(sc).Register(&tree)
	d.ifmib = ifmib.New(ifmib.Config{CacheTTL: time.Duration(cfg.Limits.IfCacheTTL), Start: d.state.Start()})
	d.ifmib.LinkTraps.Load(d.loadLinkTraps()) // linktraps.go
	d.ifmib.LinkTraps.Persist = d.persistLinkTraps
	d.ifmib.Register(&tree)
	if err := d.registerHostMIBs(cfg, &tree); err != nil {
		return nil, err
	}
	if err := d.registerExtend(cfg, &tree); err != nil {
		return nil, err
	}
	return &tree, nil
}

// sysORs are the MIB modules and capabilities the agent implements.
var sysORs = []system.OR{
	{ID: snmp.OID{1, 3, 6, 1, 6, 3, 1}, Descr: "The MIB module for SNMP entities"},
	{ID: snmp.OID{1, 3, 6, 1, 2, 1, 31}, Descr: "The MIB module to describe generic objects for network interface sub-layers"},
	{ID: snmp.OID{1, 3, 6, 1, 6, 3, 10, 3, 1, 1}, Descr: "The SNMP Management Architecture MIB."},
	{ID: snmp.OID{1, 3, 6, 1, 6, 3, 11, 3, 1, 1}, Descr: "The MIB for Message Processing and Dispatching."},
	{ID: snmp.OID{1, 3, 6, 1, 6, 3, 15, 2, 1, 1}, Descr: "The management information definitions for the SNMP User-based Security Model."},
	{ID: snmp.OID{1, 3, 6, 1, 6, 3, 16, 2, 2, 1}, Descr: "View-based Access Control Model for SNMP."},
	{ID: ucd.UCDavis, Descr: "The UCD-SNMP-MIB: memory, load, CPU, disk and process statistics."},
	{ID: ucd.DiskIOModuleID, Descr: "The UCD-DISKIO-MIB: block device I/O statistics."},
	{ID: hostres.ModuleID, Descr: "The MIB module for managing host systems."},
	{ID: ipmib.ModuleID, Descr: "The MIB module for managing IP and ICMP implementations"},
	{ID: ipmib.ForwardModuleID, Descr: "The MIB module for the management of CIDR multipath IP Routes"},
	{ID: tcpudp.TcpModuleID, Descr: "The MIB module for managing TCP implementations"},
	{ID: tcpudp.UdpModuleID, Descr: "The MIB module for managing UDP implementations"},
}

// loadSystem reads the values of sysContact, sysName and sysLocation that
// SNMP sets stored. What it cannot read is dropped with a warning naming
// the file and line: the next SET rewrites the file.
func (d *daemon) loadSystem() (contact, name, location string) {
	path := filepath.Join(d.state.Dir, systemFile)
	data, err := d.state.ReadFile(systemFile)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.log.Warn("cannot read the values set by SNMP; sysContact, sysName and sysLocation start from the configuration", "file", path, "err", err)
		}
		return "", "", ""
	}
	for n, line := range strings.Split(string(data), "\n") {
		if f := strings.TrimSpace(line); f == "" || strings.HasPrefix(f, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		s, err := strconv.Unquote(v)
		if err == nil && len(s) > 255 {
			err = errors.New("longer than 255 octets")
		}
		switch {
		case err != nil:
		case k == "sysContact":
			contact = s
			continue
		case k == "sysName":
			name = s
			continue
		case k == "sysLocation":
			location = s
			continue
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		d.log.Warn("state file damaged: ignoring a line; the value it held is lost until set again", "file", path, "line", n+1, "err", err)
	}
	return
}

func (d *daemon) persistSystem(contact, name, location string) error {
	data := fmt.Sprintf("# values set by SNMP; tsnmpd rewrites this file\nsysContact %s\nsysName %s\nsysLocation %s\n",
		strconv.Quote(contact), strconv.Quote(name), strconv.Quote(location))
	return d.state.WriteFile(systemFile, []byte(data), 0o600)
}

// loadPlan is a load of the configuration (at start or by a reload) that
// prepare has built and checked, with the listen addresses it adds open
// but not served; commit applies it, abort drops it. Until commit the
// running agent is untouched: its users, certificates and policy, and
// what it answers on.
type loadPlan struct {
	cfg    *config.Config
	policy *agent.Policy
	users  *usm.UserTable // the USM users, installed with policy by commit
	usm    *usmMerge      // usmUserTable's rows and usm-users.conf (usmstate.go)
	kick   *kickPlan      // usmDHKickstartTable (usmdhkick.go)
	// vacmBase is the configuration's VACM, that SNMP-made rows are told
	// from (vacmmib.go).
	vacmBase *vacm.VACM
	tls      *tlsPlan      // tls.go
	sshKeys  []tssh.Signer // the host keys of the first ssh: listener (ssh.go)
	opened   []listener    // not yet served
	// release lets the sets of usmUserTable and of the VACM tables go
	// on: they are held from before prepare reads what they stored until
	// commit has installed what it made of it or abort has dropped it,
	// so that none falls between and is lost.
	release func()
}

// testHookPrepared, if set, runs in prepare once everything is built,
// before the listen addresses are opened: tests make a reload wait
// there.
var testHookPrepared func()

// prepare builds what a load replaces: config.Policy assembles the
// communities, VACM, limits and USM users (with the users kept in the
// state directory) without installing them, then each transport checks
// or builds its share: SSH its settings, TLS its certificates and TSM,
// the web-services interface its handler. With listen, it then opens
// the listen addresses that are not open yet, without serving them. On
// error what it opened is closed again and nothing has changed.
func (d *daemon) prepare(cfg *config.Config, listen bool) (*loadPlan, error) {
	if err := d.fillDefaultUser(cfg); err != nil {
		return nil, err
	}
	pl := &loadPlan{cfg: cfg, users: usm.NewUserTable(), release: func() {}}
	var holds []func()
	if t := d.usmRows.table; t != nil {
		holds = append(holds, t.HoldSets())
	}
	if d.vacm.sets != nil { // after usmUserTable's: a set of both holds them in that order
		holds = append(holds, d.vacm.sets.Hold())
	}
	pl.release = func() {
		for _, release := range slices.Backward(holds) {
			release()
		}
	}
	ok := false
	defer func() {
		if !ok {
			pl.release()
		}
	}()
	p, err := cfg.Policy(config.PolicyOptions{USM: d.usm, Users: pl.users, MergeUsers: func(users *usm.UserTable) error {
		var err error
		if pl.kick, err = d.kickstartUsers(cfg, users); err != nil { // usmdhkick.go
			return err
		}
		pl.usm, err = d.planUSMState(users, pl.kick.base)
		return err
	}})
	if err != nil {
		return nil, err
	}
	pl.policy = p
	pl.vacmBase = d.mergeVACMState(p) // vacmmib.go
	if err := d.sshPolicy(cfg, p); err != nil {
		return nil, err
	}
	if pl.tls, err = d.tlsPolicy(cfg, p); err != nil {
		return nil, err
	}
	if err := d.httpPolicy(cfg, p); err != nil {
		return nil, err
	}
	if h := testHookPrepared; h != nil {
		h()
	}
	if listen {
		if err := d.open(pl); err != nil {
			return nil, err
		}
	}
	ok = true
	return pl, nil
}

// commit applies pl: it writes usm-users.conf (the one step that can
// fail: then pl is aborted and nothing has changed), then installs
// usmUserTable's rows, the SSH and web-services settings, the policy
// with its USM users, communities and VACM in one step, the TLS
// settings, and starts serving the addresses pl opened. The sets of
// usmUserTable and of the VACM tables wait from before prepare read what
// they stored until the policy is installed.
func (d *daemon) commit(pl *loadPlan) error {
	if pl.usm != nil {
		if err := d.state.WriteFile(usmFile, pl.usm.file, 0o600); err != nil {
			pl.abort()
			return fmt.Errorf("USM users: %w", err)
		}
	}
	if m := pl.usm; m != nil {
		d.usmRows.mu.Lock()
		d.usmRows.configured, d.usmRows.base, d.usmRows.derived = m.configured, m.base, m.derived
		d.usmRows.mu.Unlock()
		if t := d.usmRows.table; t != nil {
			t.Restore(m.rows)
		}
	}
	d.installKickstart(pl.kick) // usmdhkick.go
	d.installSSH(pl)
	d.installHTTP(pl.cfg.HTTP)
	d.vacm.mu.Lock()
	if pl.vacmBase != nil {
		d.vacm.base = pl.vacmBase
	}
	d.agent.SetPolicy(pl.policy) // users, communities and VACM at once
	d.vacm.mu.Unlock()
	pl.release()
	d.installTLS(pl.tls, pl.opened)
	d.mu.Lock()
	d.servers = append(d.servers, pl.opened...)
	d.mu.Unlock()
	for _, l := range pl.opened {
		d.log.Info("listening", "address", l.spec, "bound", l.srv.Addr().String())
		go func() {
			if err := l.srv.Serve(); err != nil {
				d.errc <- fmt.Errorf("serve %s: %w", l.spec, err)
			}
		}()
	}
	pl.opened = nil
	return nil
}

// abort closes the listen addresses pl opened and lets usmUserTable's
// sets go on.
func (pl *loadPlan) abort() {
	for _, l := range pl.opened {
		l.srv.Close()
	}
	pl.opened = nil
	pl.release()
}

// openListener opens a server for a listen address with the settings of
// pl, without serving it: UDP and TCP here, the secure transports in
// tls.go and ssh.go, the web-services interface in http.go.
func (d *daemon) openListener(a transport.Address, pl *loadPlan) (transport.Server, error) {
	switch a.Domain {
	case transport.TLS:
		return d.openTLS(a, pl.tls)
	case transport.DTLS:
		return d.openDTLS(a, pl.tls)
	case transport.SSH:
		return d.openSSH(a, pl)
	case domainHTTP, domainHTTPS:
		return d.openHTTP(a, pl)
	}
	return transport.Listen(a, d.agent, &transport.ServerOptions{Logger: d.log})
}

// fillDefaultUser gives the zero-config user its passwords: generated on
// first start, kept 0600 in the state directory.
func (d *daemon) fillDefaultUser(cfg *config.Config) error {
	for i := range cfg.Users {
		u := &cfg.Users[i]
		if u.Name != config.DefaultUser || u.AuthPassword != "" || u.AuthKey != "" {
			continue
		}
		auth, priv, err := d.defaultPasswords()
		if err != nil {
			return err
		}
		u.AuthPassword, u.PrivPassword = auth, priv
	}
	return nil
}

func (d *daemon) defaultPasswords() (auth, priv string, err error) {
	data, err := d.state.ReadFile(defaultUserFile)
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, " "); ok {
				switch k {
				case "authPassword":
					auth = v
				case "privPassword":
					priv = v
				}
			}
		}
		if len(auth) >= 8 && len(priv) >= 8 {
			return auth, priv, nil
		}
		return "", "", fmt.Errorf("%s/%s is damaged; delete it to generate new passwords", d.o.stateDir, defaultUserFile)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", "", err
	}
	auth, priv = randomPassword(), randomPassword()
	content := fmt.Sprintf("# generated by tsnmpd for the USM user %q (SHA-256, AES-128)\nauthPassword %s\nprivPassword %s\n",
		config.DefaultUser, auth, priv)
	if err := d.state.WriteFile(defaultUserFile, []byte(content), 0o600); err != nil {
		return "", "", err
	}
	if !d.o.quiet {
		d.banner = &[2]string{auth, priv} // printed once the listeners are bound
	}
	return auth, priv, nil
}

func randomPassword() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// printBanner prints the zero-config user's credentials and, when the
// agent listens on UDP or TCP, a walk command for an address it listens on.
func (d *daemon) printBanner() {
	if d.banner == nil {
		return
	}
	auth, priv := d.banner[0], d.banner[1]
	d.banner = nil
	fmt.Fprintf(d.out, "\ntsnmpd: created the SNMPv3 user %q (SHA-256, AES-128); passwords are in %s.\n",
		config.DefaultUser, quoteArg(filepath.Join(d.o.stateDir, defaultUserFile)))
	if target := walkTarget(d.bound()); target != "" {
		fmt.Fprintf(d.out, "Walk this agent with:\n\n  tsnmp walk -v3 -l authPriv -u %s -a SHA-256 -A %s -x AES -X %s %s system\n",
			config.DefaultUser, quoteArg(auth), quoteArg(priv), quoteArg(target))
	}
	fmt.Fprintln(d.out)
}

// bound returns the addresses the agent listens on, with the ports the
// system chose for port 0.
func (d *daemon) bound() []transport.Address {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []transport.Address
	for _, l := range d.servers {
		a, err := listenAddress(l.spec)
		if err != nil {
			continue
		}
		if p := netPort(l.srv.Addr()); p > 0 {
			a.Port = p
		}
		out = append(out, a)
	}
	return out
}

func netPort(a net.Addr) int {
	switch a := a.(type) {
	case *net.UDPAddr:
		return a.Port
	case *net.TCPAddr:
		return a.Port
	}
	if a == nil {
		return 0
	}
	_, p, err := net.SplitHostPort(a.String())
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// walkTarget is the address a manager on this host reaches the agent's
// USM at: the first UDP listener (else the first TCP one), with a
// wildcard host replaced by loopback; "" when there is none.
func walkTarget(bound []transport.Address) string {
	var first *transport.Address
	for i, a := range bound {
		if a.Domain != transport.UDP && a.Domain != transport.TCP {
			continue
		}
		if first == nil || (first.Domain != transport.UDP && a.Domain == transport.UDP) {
			first = &bound[i]
		}
	}
	if first == nil {
		return ""
	}
	a := *first
	switch a.Host {
	case "", "0.0.0.0":
		a.Host = "127.0.0.1"
		if a.Network == "udp6" || a.Network == "tcp6" {
			a.Host = "::1"
		}
	case "::":
		a.Host = "::1"
	}
	return a.String()
}

// open opens the listen addresses of pl's configuration that are not
// open yet, without serving them (commit does); on error, the ones it
// opened are closed again.
func (d *daemon) open(pl *loadPlan) error {
	specs := pl.cfg.Listen
	if len(specs) == 0 {
		return errors.New("no listen addresses configured")
	}
	fail := func(err error) error {
		pl.abort()
		return err
	}
	for _, spec := range specs {
		if d.listening(spec) || slices.ContainsFunc(pl.opened, func(l listener) bool { return l.spec == spec }) {
			continue
		}
		a, err := listenAddress(spec) // http.go: http: and https:, else transport.ParseAddress
		if err != nil {
			return fail(err)
		}
		s, err := d.openListener(a, pl)
		if err != nil {
			if errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "permission denied") {
				return fail(fmt.Errorf("listen %s: %w (ports below 1024 need root or CAP_NET_BIND_SERVICE)", spec, err))
			}
			return fail(fmt.Errorf("listen %s: %w", spec, err))
		}
		pl.opened = append(pl.opened, listener{spec: spec, srv: s})
	}
	return nil
}

func (d *daemon) listening(spec string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range d.servers {
		if l.spec == spec {
			return true
		}
	}
	return false
}

// stop closes the listeners ls.
func (d *daemon) stop(ls []listener) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range ls {
		l.srv.Close()
		d.servers = slices.DeleteFunc(d.servers, func(x listener) bool { return x.spec == l.spec })
		if d.tls != nil {
			d.tls.forget(l.srv)
		}
	}
}

// reload rereads the configuration and applies it as start does
// (prepare, then commit). Engine state, counters, SNMP-set values and
// open connections are kept. Listen addresses are applied: new ones are
// opened first, without serving them (if one cannot be, they are closed
// again and nothing changes: users, certificates and policy stay the
// running ones throughout), then users, settings and policy are
// installed and the new addresses served at once, then the addresses no
// longer configured are closed.
func (d *daemon) reload() error {
	cfg, err := loadConfig(d.o)
	if err != nil {
		return err
	}
	mergePersistentUsers(cfg, d.persist, d.state.EngineID)
	if _, err := notifyTargets(&cfg.Notifications); err != nil { // notify.go
		return err
	}
	pl, err := d.prepare(cfg, true)
	if err != nil {
		return err
	}
	opened := len(pl.opened)
	if err := d.commit(pl); err != nil {
		return err
	}
	if err := d.reloadNotifications(cfg); err != nil {
		d.log.Error("notification targets not restarted", "err", err)
	}
	d.reloadHostMIBs(cfg)   // hostmib.go
	d.reloadExtensions(cfg) // extend.go
	var gone []listener
	d.mu.Lock()
	for _, l := range d.servers {
		if !slices.Contains(cfg.Listen, l.spec) {
			gone = append(gone, l)
		}
	}
	d.mu.Unlock()
	d.stop(gone)
	for _, l := range gone {
		d.log.Info("stopped listening", "address", l.spec)
	}
	d.printBanner()
	d.log.Info("configuration reloaded", "listen", strings.Join(cfg.Listen, ","), "opened", opened, "closed", len(gone))
	return nil
}

func (d *daemon) close() {
	d.stopNotifications() // notify.go
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range d.servers {
		l.srv.Close()
	}
	d.servers = nil
	for _, l := range d.agentxListeners {
		l.Close()
	}
	if d.agentx != nil {
		d.agentx.Close()
		d.logAgentXCounters() // agentx.go
	}
	if d.ifmib != nil {
		d.ifmib.Close()
	}
	d.closeHostMIBs()
	d.ext.close()
	d.state.Close()
}
