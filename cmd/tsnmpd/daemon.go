package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/ifmib"
	"github.com/tsnmp/tsnmp/mib/system"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
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
	ifmib *ifmib.MIB
	host  hostMIBs

	mu      sync.Mutex
	servers []transport.Server
	errc    chan error
	// ext holds state of the extensions (see listeners), by their name.
	ext map[string]any
}

// Files in the state directory besides the engine's.
const (
	systemFile      = "system.conf"       // sysContact, sysName, sysLocation set by SNMP
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
		cfg, err = config.LoadSnmpdConf(o.snmpdConf)
	default:
		cfg = config.Default()
	}
	if err != nil {
		return nil, err
	}
	if len(o.listen) > 0 {
		cfg.Listen = o.listen
	}
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
	st, err := engine.OpenOptions(o.stateDir, engine.Options{EngineID: engineID, Regenerate: o.regenerate, Shared: o.stdio, Log: log})
	if err != nil {
		return nil, err
	}
	d := &daemon{o: o, log: log, out: out, state: st, errc: make(chan error, 16), ext: map[string]any{}}
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
	d.agent = &agent.Agent{Tree: tree, State: st, Log: log}
	d.agent.Stats.Register(tree)
	d.agent.RegisterEngine(tree)
	d.agent.RegisterUSMStats(tree)
	p, err := d.policy(cfg)
	if err != nil {
		return nil, err
	}
	d.agent.SetPolicy(p)
	if o.stdio { // ssh.go: one session on stdin/stdout, no listeners
		ok = true
		return d, nil
	}
	if err := d.listen(cfg.Listen); err != nil {
		return nil, err
	}
	ok = true
	log.Info("tsnmpd started", "version", version, "engineID", hex.EncodeToString(st.EngineID),
		"engineBoots", st.Boots, "stateDir", o.stateDir, "listen", strings.Join(cfg.Listen, ","))
	return d, nil
}

// buildTree registers the instrumentation. It is built once: SNMP-set
// values and counters live in it across reloads.
func (d *daemon) buildTree(cfg *config.Config) (*mib.Tree, error) {
	var tree mib.Tree
	contact, name, location := d.loadSystem()
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
	d.ifmib.Register(&tree)
	d.registerHostMIBs(cfg, &tree)
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
	{ID: snmp.OID{1, 3, 6, 1, 4, 1, 2021}, Descr: "The UCD-SNMP-MIB: memory, load, CPU, disk and process statistics."},
	{ID: snmp.OID{1, 3, 6, 1, 2, 1, 25, 7, 4}, Descr: "The MIB module for managing host systems."},
	{ID: snmp.OID{1, 3, 6, 1, 2, 1, 48}, Descr: "The MIB module for managing IP and ICMP implementations"},
	{ID: snmp.OID{1, 3, 6, 1, 2, 1, 4, 24}, Descr: "The MIB module for the management of CIDR multipath IP Routes"},
	{ID: snmp.OID{1, 3, 6, 1, 2, 1, 49}, Descr: "The MIB module for managing TCP implementations"},
	{ID: snmp.OID{1, 3, 6, 1, 2, 1, 50}, Descr: "The MIB module for managing UDP implementations"},
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

// policy builds what a reload replaces.
func (d *daemon) policy(cfg *config.Config) (*agent.Policy, error) {
	if err := d.fillDefaultUser(cfg); err != nil {
		return nil, err
	}
	acm, err := cfg.BuildVACM()
	if err != nil {
		return nil, err
	}
	comms, err := cfg.BuildCommunities()
	if err != nil {
		return nil, err
	}
	users, err := cfg.BuildUSMUsers(d.state.EngineID)
	if err != nil {
		return nil, err
	}
	if err := d.mergeUSMState(users); err != nil {
		return nil, fmt.Errorf("USM users in the state directory: %w", err)
	}
	d.usm.Users().Replace(users)
	p := &agent.Policy{
		Communities:    comms,
		Access:         agent.VACMAccess{VACM: acm},
		MaxResponse:    cfg.Limits.MaxResponseSize,
		MaxRepetitions: cfg.Limits.MaxRepetitions,
		SecurityModels: map[snmp.SecurityModel]security.Model{snmp.SecurityModelUSM: d.usm},
	}
	for _, add := range policyHooks {
		if err := add(d, cfg, p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Extension points for the transports and security models that live in
// their own files: listeners opens a server for a transport domain other
// than UDP and TCP; policyHooks add to each policy a reload builds (a
// security model, say) and may keep state in the daemon across reloads.
var (
	listeners   = map[transport.Domain]func(d *daemon, a transport.Address) (transport.Server, error){}
	policyHooks []func(d *daemon, cfg *config.Config, p *agent.Policy) error
)

// fillDefaultUser gives the zero-config user its passwords: generated on
// first start, kept 0600 in the state directory.
func (d *daemon) fillDefaultUser(cfg *config.Config) error {
	for i := range cfg.Users {
		u := &cfg.Users[i]
		if u.Name != config.DefaultUser || u.AuthPassword != "" || u.AuthKey != "" {
			continue
		}
		auth, priv, err := d.defaultPasswords(cfg.Listen)
		if err != nil {
			return err
		}
		u.AuthPassword, u.PrivPassword = auth, priv
	}
	return nil
}

func (d *daemon) defaultPasswords(listen []string) (auth, priv string, err error) {
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
		d.printDefaultUser(auth, priv, listen)
	}
	return auth, priv, nil
}

func randomPassword() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (d *daemon) printDefaultUser(auth, priv string, listen []string) {
	fmt.Fprintf(d.out, `
tsnmpd: created the SNMPv3 user %q (SHA-256, AES-128); passwords are in %s.
Walk this agent with:

  tsnmp walk -v3 -l authPriv -u %s -a SHA-256 -A %s -x AES -X %s %s system

`, config.DefaultUser, quoteArg(d.o.stateDir+"/"+defaultUserFile), config.DefaultUser, quoteArg(auth), quoteArg(priv), quoteArg(walkTarget(listen)))
}

// walkTarget is the address a manager on this host reaches the agent at:
// the first UDP listener (else the first listener), with a wildcard host
// replaced by loopback.
func walkTarget(listen []string) string {
	var first *transport.Address
	for _, spec := range listen {
		a, err := transport.ParseAddress(spec, 0)
		if err != nil {
			continue
		}
		if first == nil || (first.Domain != transport.UDP && a.Domain == transport.UDP) {
			first = &a
		}
	}
	if first == nil {
		return "udp:127.0.0.1:1161"
	}
	a := *first
	if a.Host == "" || a.Host == "0.0.0.0" {
		a.Host = "127.0.0.1"
	} else if a.Host == "::" {
		a.Host = "::1"
	}
	return a.String()
}

func (d *daemon) listen(specs []string) error {
	if len(specs) == 0 {
		return errors.New("no listen addresses configured")
	}
	for _, spec := range specs {
		a, err := listenAddress(spec) // http.go: http: and https:, else transport.ParseAddress
		if err != nil {
			return err
		}
		var s transport.Server
		if open := listeners[a.Domain]; open != nil {
			s, err = open(d, a)
		} else {
			s, err = transport.Listen(a, d.agent, &transport.ServerOptions{Logger: d.log})
		}
		if err != nil {
			if errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "permission denied") {
				return fmt.Errorf("listen %s: %w (ports below 1024 need root or CAP_NET_BIND_SERVICE)", spec, err)
			}
			return fmt.Errorf("listen %s: %w", spec, err)
		}
		d.mu.Lock()
		d.servers = append(d.servers, s)
		d.mu.Unlock()
		d.log.Info("listening", "address", spec)
		go func() {
			if err := s.Serve(); err != nil {
				d.errc <- fmt.Errorf("serve %s: %w", spec, err)
			}
		}()
	}
	return nil
}

// reload rereads the configuration and installs a new policy. Engine
// state, counters, SNMP-set values and open TCP connections are kept;
// listen addresses take effect at the next start.
func (d *daemon) reload() error {
	cfg, err := loadConfig(d.o)
	if err != nil {
		return err
	}
	p, err := d.policy(cfg)
	if err != nil {
		return err
	}
	d.agent.SetPolicy(p)
	return nil
}

func (d *daemon) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.servers {
		s.Close()
	}
	d.servers = nil
	if d.ifmib != nil {
		d.ifmib.Close()
	}
	d.closeHostMIBs()
	d.state.Close()
}
