package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// usmDHFile keeps usmDHParameters (RFC 2786) once it has been set over
// SNMP; without it the agent uses Oakley group 2.
const usmDHFile = "usm-dh-parameters.conf"

// loadDHParameters gives usmDHUserKeyTable the parameters kept in the
// state directory. A damaged file is reported with its line and kept
// aside; the default parameters are used until a set stores new ones.
func (d *daemon) loadDHParameters() {
	data, err := d.state.ReadFile(usmDHFile)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	path := filepath.Join(d.state.Dir, usmDHFile)
	if err != nil {
		d.log.Error("cannot read usmDHParameters; Oakley group 2 is used", "file", path, "err", err)
		return
	}
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		err := fmt.Errorf("want \"usmDHParameters HEX\"")
		if len(f) == 2 && f[0] == "usmDHParameters" {
			var der []byte
			if der, err = hex.DecodeString(f[1]); err == nil {
				err = d.usmRows.table.SetDHParameters(der)
			}
		}
		if err != nil {
			kept, kerr := keepAside(path, ".damaged", data)
			d.log.Error("state file damaged: usmDHParameters is Oakley group 2 until it is set again",
				"file", path, "line", n+1, "err", err, "copy", kept, "copy_err", kerr)
			return
		}
	}
}

// writeDHParameters stores usmDHParameters set over SNMP.
func (d *daemon) writeDHParameters(der []byte) error {
	return d.state.WriteFile(usmDHFile, []byte("# usmDHParameters (RFC 2786) set over SNMP: a DER DHParameter\nusmDHParameters "+hex.EncodeToString(der)+"\n"), 0o600)
}
