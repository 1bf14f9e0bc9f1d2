package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tsnmp/tsnmp/access/vacm"
	"github.com/tsnmp/tsnmp/agent"
	"github.com/tsnmp/tsnmp/mib"
)

// vacmFile keeps the VACM rows made by SNMP sets (the rows that differ
// from the configuration's), as JSON of vacm.Config.
const vacmFile = "vacm-rows.json"

// vacmState is what the VACM tables' sets need: the configuration's
// VACM, against which the rows made by SNMP are told apart.
type vacmState struct {
	mu   sync.Mutex
	sets *vacm.Sets // the tables' sets, held by a load (daemon.go)
	base *vacm.VACM
	// volatile are the rows sets made of StorageType volatile(2): kept
	// in memory only, so that they last across reloads but not a
	// restart (RFC 2579).
	volatile vacm.Config
}

// storageVolatile is RFC 2579's StorageType volatile(2).
const storageVolatile = 2

var emptyVACM, _ = vacm.New(&vacm.Config{})

func (d *daemon) currentVACM() *vacm.VACM {
	if p := d.agent.Policy(); p != nil {
		if a, ok := p.Access.(agent.VACMAccess); ok && a.VACM != nil {
			return a.VACM
		}
	}
	return emptyVACM
}

// registerVACMMIB serves SNMP-VIEW-BASED-ACM-MIB's tables (RFC 3415) from
// the VACM of the running policy. Sets change the running VACM and are
// stored in the state directory; the rows they made come back at restart
// and reload (mergeVACMState).
func (d *daemon) registerVACMMIB(tree *mib.Tree) {
	d.vacm.sets = vacm.RegisterWritableMIB(tree, d.currentVACM, d.applyVACM)
}

// mergeVACMState adds the rows SNMP sets made to p's VACM, which the
// configuration built, and returns the configuration's VACM, which the
// daemon keeps (vacmState.base) once it installs p.
func (d *daemon) mergeVACMState(p *agent.Policy) (base *vacm.VACM) {
	a, ok := p.Access.(agent.VACMAccess)
	if !ok || a.VACM == nil {
		return nil
	}
	d.vacm.mu.Lock()
	defer d.vacm.mu.Unlock()
	base = a.VACM
	path := filepath.Join(d.state.Dir, vacmFile)
	var extra vacm.Config
	data, err := d.state.ReadFile(vacmFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		d.log.Warn("cannot read the VACM rows made by SNMP; access control is the configuration's", "file", path, "err", err)
	default:
		if err := json.Unmarshal(data, &extra); err != nil {
			// The next set rewrites the file: what it held is kept
			// beside it first (never over an earlier copy).
			kept, kerr := keepAside(path, ".damaged", data)
			d.log.Error("state file damaged: the VACM rows made by SNMP are ignored; the file as it was is kept", "file", path, "err", err, "copy", kept, "copy_err", kerr)
			extra = vacm.Config{}
		}
	}
	// The volatile rows of before a reload come back after the
	// stored ones.
	vol := d.vacm.volatile
	extra.Groups = append(extra.Groups, vol.Groups...)
	extra.Access = append(extra.Access, vol.Access...)
	extra.Families = append(extra.Families, vol.Families...)
	if len(extra.Groups)+len(extra.Access)+len(extra.Families) == 0 {
		return base
	}
	cfg := a.VACM.Tables()
	cfg.Groups = append(slices.Clone(cfg.Groups), extra.Groups...)
	cfg.Access = append(slices.Clone(cfg.Access), extra.Access...)
	cfg.Families = append(slices.Clone(cfg.Families), extra.Families...)
	v, err := vacm.New(&cfg)
	if err != nil {
		d.log.Warn("the VACM rows made by SNMP do not fit the configuration; access control is the configuration's", "file", path, "err", err)
		return base
	}
	p.Access = agent.VACMAccess{VACM: v}
	return base
}

// applyVACM installs the VACM a set of the tables made and stores the
// rows that differ from the configuration's.
func (d *daemon) applyVACM(cfg *vacm.Config) error {
	v, err := vacm.New(cfg)
	if err != nil {
		return err
	}
	d.vacm.mu.Lock()
	defer d.vacm.mu.Unlock()
	var base vacm.Config
	if d.vacm.base != nil {
		base = d.vacm.base.Tables()
	}
	// The rows that differ from the configuration's: stored, but for
	// the volatile ones, which are kept in memory.
	var extra, vol vacm.Config
	for _, g := range cfg.Groups {
		if !slices.Contains(base.Groups, g) {
			if g.Storage == storageVolatile {
				vol.Groups = append(vol.Groups, g)
			} else {
				extra.Groups = append(extra.Groups, g)
			}
		}
	}
	for _, a := range cfg.Access {
		if !slices.Contains(base.Access, a) {
			if a.Storage == storageVolatile {
				vol.Access = append(vol.Access, a)
			} else {
				extra.Access = append(extra.Access, a)
			}
		}
	}
	for _, f := range cfg.Families {
		if !slices.ContainsFunc(base.Families, func(b vacm.Family) bool {
			return b.ViewName == f.ViewName && b.Subtree.Equal(f.Subtree) && bytes.Equal(b.Mask, f.Mask) && b.Excluded == f.Excluded
		}) {
			if f.Storage == storageVolatile {
				vol.Families = append(vol.Families, f)
			} else {
				extra.Families = append(extra.Families, f)
			}
		}
	}
	data, err := json.MarshalIndent(&extra, "", " ")
	if err != nil {
		return err
	}
	if err := d.state.WriteFile(vacmFile, append(data, '\n'), 0o600); err != nil {
		d.log.Error("the VACM rows made by SNMP cannot be stored; the set is refused", "file", filepath.Join(d.state.Dir, vacmFile), "err", err)
		return err
	}
	d.vacm.volatile = vol
	p := *d.agent.Policy()
	p.Access = agent.VACMAccess{VACM: v}
	d.agent.SetPolicy(&p)
	return nil
}
