package main

import (
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/hostres"
	"github.com/tsnmp/tsnmp/mib/ipmib"
	"github.com/tsnmp/tsnmp/mib/tcpudp"
	"github.com/tsnmp/tsnmp/mib/ucd"
)

// hostMIBs are the host instrumentation: UCD-SNMP-MIB,
// HOST-RESOURCES-MIB, IP-MIB, TCP-MIB and UDP-MIB.
type hostMIBs struct {
	ucd     *ucd.MIB
	hostres *hostres.MIB
	tcpudp  *tcpudp.MIB
	tree    *mib.Tree   // their subtrees, as put in the agent's tree
	cfg     config.Host // what they were built from
}

// hostCloseGrace is how long MIBs a reload replaced stay open: requests
// that started before the reload finish with them.
const hostCloseGrace = 5 * time.Second

// reloadHostMIBs builds the host MIBs again when a reload changed their
// directives (disk, proc, load, logmatch...), as snmpd does at its
// reload, and swaps them into the tree in place of the running ones in
// one step. The CPU samples of the last minute are kept (d.cpu);
// logMatchTable takes its positions and counts from the state files the
// running MIB wrote, whose readings stop first.
func (d *daemon) reloadHostMIBs(cfg *config.Config) {
	if reflect.DeepEqual(cfg.Host, d.host.cfg) {
		return
	}
	old := d.host
	// The running MIB's log readings end before the new one exists, so
	// that no periodic reading of the new one can take a state file the
	// old one is still writing.
	old.ucd.StopLogs()
	d.host = d.newHostMIBs(cfg)
	if err := d.agent.Tree.Swap(old.tree, d.host.tree); err != nil {
		// The MIBs register the same subtrees whatever their
		// directives: this is a programming error. The old MIBs stay,
		// logMatchTable at its last counts.
		d.log.Error("host MIBs not rebuilt", "err", err)
		d.host.close()
		d.host = old
		return
	}
	time.AfterFunc(hostCloseGrace, old.close)
	d.log.Info("host MIBs rebuilt from the changed directives")
}

// registerHostMIBs adds the host MIBs, shaped by cfg.Host, to tree.
func (d *daemon) registerHostMIBs(cfg *config.Config, tree *mib.Tree) error {
	d.cpu = hostres.NewCPUHistory()
	d.host = d.newHostMIBs(cfg)
	return tree.Swap(nil, d.host.tree)
}

// newHostMIBs builds the host MIBs from cfg.Host, registered in a tree
// of their own.
func (d *daemon) newHostMIBs(cfg *config.Config) hostMIBs {
	h := &cfg.Host
	tree := new(mib.Tree)
	m := hostMIBs{cfg: cfg.Host, tree: tree}
	var diskPaths []string
	for _, dk := range h.Disks {
		diskPaths = append(diskPaths, dk.Path)
	}
	// hrNetworkTable shares IP-MIB's link dump: one for both.
	ip := ipmib.New(ipmib.Config{CacheTTL: time.Duration(h.CacheTTL), Start: d.state.Start()})
	m.hostres = hostres.New(hostres.Config{
		Links:         ip.Links(),
		CPU:           d.cpu,
		CacheTTL:      time.Duration(h.CacheTTL),
		StorageUseNFS: h.StorageUseNFS,
		SkipNFS:       h.SkipNFS,
		IgnoreDisks:   h.IgnoreDisks,
		DiskPaths:     diskPaths,
	})
	m.hostres.Register(tree)
	uc := ucd.Config{
		CacheTTL: time.Duration(h.CacheTTL),
		CPU:      d.cpu,
		// prTable counts processes from hrSWRunTable's listing: one
		// reading of /proc for both.
		Processes:       m.hostres.Processes(),
		IncludeAllDisks: h.IncludeAllDisks,
		DiskIO:          h.DiskIO,
		DiskIOExclude:   h.DiskIOExclude,
		Load:            h.LoadMax(),
		MinSwap:         h.MinSwap,
		Logger:          d.log,
	}
	for _, dk := range h.Disks {
		x := ucd.Disk{Path: dk.Path, MinKB: -1, MinPercent: -1}
		switch {
		case dk.MinKB != nil:
			x.MinKB = *dk.MinKB
		case dk.MinPercent != nil:
			x.MinPercent = *dk.MinPercent
		default:
			x.MinKB = 100000
		}
		uc.Disks = append(uc.Disks, x)
	}
	for _, p := range h.Procs {
		up := ucd.Proc{Name: p.Name, Max: p.Max, Min: p.Min, Fix: p.Fix}
		if p.Regexp != "" {
			up.Regexp = regexp.MustCompile(p.Regexp) // checked when the configuration was read
		}
		uc.Procs = append(uc.Procs, up)
	}
	for _, l := range h.LogMatches {
		uc.LogMatches = append(uc.LogMatches, ucd.LogMatch{Name: l.Name, File: l.File, Cycle: l.Cycle, Regexp: l.Regexp})
	}
	uc.StateDir = d.o.stateDir
	if d.persist != nil {
		uc.NetSNMPDir = filepath.Dir(d.persist.Path)
	}
	for _, f := range h.Files {
		uf := ucd.File{Path: f.Path, MaxKB: -1}
		if f.MaxKB != nil {
			uf.MaxKB = *f.MaxKB
		}
		uc.Files = append(uc.Files, uf)
	}
	uc.Version = versionInfo()
	m.ucd = ucd.New(uc)
	m.ucd.Register(tree)
	ip.Register(tree)
	m.tcpudp = tcpudp.New(tcpudp.Config{CacheTTL: time.Duration(h.CacheTTL), NetStats: ip.NetStats()})
	m.tcpudp.Register(tree)
	return m
}

// close closes the MIBs (not the CPU sampler they share).
func (m hostMIBs) close() {
	if m.ucd != nil {
		m.ucd.Close()
	}
	if m.hostres != nil {
		m.hostres.Close()
	}
	if m.tcpudp != nil {
		m.tcpudp.Close()
	}
}

func (d *daemon) closeHostMIBs() {
	d.host.close()
	if d.cpu != nil {
		d.cpu.Close()
	}
}

// versionInfo is what UCD-SNMP-MIB's version group says of tsnmpd: its
// version, the time and revision of the commit it was built from, and the
// Go toolchain in place of configure options.
func versionInfo() ucd.VersionInfo {
	v := ucd.VersionInfo{Tag: version, ConfigureOptions: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.time":
				v.Date = s.Value
			case "vcs.revision":
				v.Ident = s.Value
			}
		}
	}
	return v
}
