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
	cfg     config.Host // what they were built from
}

// warnHostChanged tells, at a reload, that the host MIBs' directives
// changed: the MIBs keep those they were built from until a restart.
func (d *daemon) warnHostChanged(cfg *config.Config) {
	if !reflect.DeepEqual(cfg.Host, d.host.cfg) {
		d.log.Warn("the host MIBs' directives changed (disk, includeAllDisks, load, proc, procfix, file, swap, logmatch, diskio and the like): " +
			"they apply when tsnmpd restarts, not at a reload (snmpd applies them at its reload)")
	}
}

// registerHostMIBs adds the host MIBs, shaped by cfg.Host, to tree.
func (d *daemon) registerHostMIBs(cfg *config.Config, tree *mib.Tree) {
	h := &cfg.Host
	d.host.cfg = cfg.Host
	var diskPaths []string
	for _, dk := range h.Disks {
		diskPaths = append(diskPaths, dk.Path)
	}
	// hrNetworkTable shares IP-MIB's link dump: one for both.
	ip := ipmib.New(ipmib.Config{CacheTTL: time.Duration(h.CacheTTL), Start: d.state.Start()})
	d.host.hostres = hostres.New(hostres.Config{
		Links:         ip.Links(),
		CacheTTL:      time.Duration(h.CacheTTL),
		StorageUseNFS: h.StorageUseNFS,
		SkipNFS:       h.SkipNFS,
		IgnoreDisks:   h.IgnoreDisks,
		DiskPaths:     diskPaths,
	})
	d.host.hostres.Register(tree)
	uc := ucd.Config{
		CacheTTL: time.Duration(h.CacheTTL),
		// prTable counts processes from hrSWRunTable's listing: one
		// reading of /proc for both.
		Processes:       d.host.hostres.Processes(),
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
	d.host.ucd = ucd.New(uc)
	d.host.ucd.Register(tree)
	ip.Register(tree)
	d.host.tcpudp = tcpudp.New(tcpudp.Config{CacheTTL: time.Duration(h.CacheTTL), NetStats: ip.NetStats()})
	d.host.tcpudp.Register(tree)
}

func (d *daemon) closeHostMIBs() {
	if d.host.ucd != nil {
		d.host.ucd.Close()
	}
	if d.host.hostres != nil {
		d.host.hostres.Close()
	}
	if d.host.tcpudp != nil {
		d.host.tcpudp.Close()
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
