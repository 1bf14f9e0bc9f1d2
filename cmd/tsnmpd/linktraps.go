package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// loadLinkTraps reads the ifLinkUpDownTrapEnable values that SNMP sets
// stored ("IFINDEX enabled|disabled" lines). What it cannot read is
// dropped with a warning naming the file and line: the next set rewrites
// the file.
func (d *daemon) loadLinkTraps() map[uint32]bool {
	path := filepath.Join(d.state.Dir, linkTrapsFile)
	data, err := d.state.ReadFile(linkTrapsFile)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.log.Warn("cannot read the ifLinkUpDownTrapEnable values set by SNMP; every interface starts from the default", "file", path, "err", err)
		}
		return nil
	}
	set := map[uint32]bool{}
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		i, err := strconv.ParseUint(f[0], 10, 32)
		switch {
		case err != nil || i == 0 || len(f) != 2:
			err = fmt.Errorf("want IFINDEX enabled|disabled, got %q", line)
		case f[1] == "enabled":
			set[uint32(i)] = true
			continue
		case f[1] == "disabled":
			set[uint32(i)] = false
			continue
		default:
			err = fmt.Errorf("unknown value %q (want enabled or disabled)", f[1])
		}
		d.log.Warn("state file damaged: ignoring a line; the interface has the default until set again", "file", path, "line", n+1, "err", err)
	}
	return set
}

// persistLinkTraps stores every ifLinkUpDownTrapEnable value set by SNMP
// (atomically, like the rest of the state directory).
func (d *daemon) persistLinkTraps(set map[uint32]bool) error {
	var b strings.Builder
	b.WriteString("# ifLinkUpDownTrapEnable set by SNMP, by ifIndex; tsnmpd rewrites this file\n")
	idx := make([]uint32, 0, len(set))
	for i := range set {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		v := "disabled"
		if set[i] {
			v = "enabled"
		}
		fmt.Fprintf(&b, "%d %s\n", i, v)
	}
	if err := d.state.WriteFile(linkTrapsFile, []byte(b.String()), 0o600); err != nil {
		d.log.Error("ifLinkUpDownTrapEnable not stored; the set fails", "file", filepath.Join(d.state.Dir, linkTrapsFile), "err", err)
		return err
	}
	return nil
}
