package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

func nullBinds(oids []snmp.OID) []snmp.VarBind {
	vbs := make([]snmp.VarBind, len(oids))
	for i, o := range oids {
		vbs[i] = snmp.VarBind{Name: o, Value: snmp.NullValue()}
	}
	return vbs
}

func (a *app) parseOIDs(ops []string) ([]snmp.OID, bool) {
	var oids []snmp.OID
	ok := true
	for _, s := range ops {
		o, good := a.parseOID(s)
		ok = ok && good
		oids = append(oids, o)
	}
	return oids, ok
}

// get is snmpget and snmpgetnext: on an error-status the failed varbind
// is removed and the request repeated, unless -Cf.
func (a *app) get(ops []string, typ snmp.PDUType) int {
	f, ok := a.parseAppOpts("f", "", "")
	if !ok {
		return 1
	}
	oids, ok := a.parseOIDs(ops)
	if !ok || !a.open() {
		return 1
	}
	defer a.sess.Close()
	status := 0
	for range len(oids) + 1 {
		resp, err := a.sess.Do(a.ctx, &snmp.PDU{Type: typ, VarBinds: nullBinds(oids)})
		var se *manager.StatusError
		if errors.As(err, &se) {
			a.packetError(se, typ == snmp.GetNextRequest)
			status = 2
			if f.set['f'] || se.Index < 1 || se.Index > len(resp.VarBinds) || len(resp.VarBinds) < 2 {
				return status
			}
			oids = oids[:0]
			for i, vb := range resp.VarBinds {
				if i != se.Index-1 {
					oids = append(oids, vb.Name.Clone())
				}
			}
			continue
		}
		if err != nil {
			a.requestError(err, true)
			return 1
		}
		for _, vb := range resp.VarBinds {
			a.printVarBind(vb)
		}
		return status
	}
	return status
}

func (a *app) checkBulk() bool {
	if a.o.cfg.Version == snmp.V1 {
		a.errorf("%s: %s\n", a.tool, a.withDetail("Cannot send V2 PDU on V1 session"))
		return false
	}
	return true
}

// bulkget is snmpbulkget (-Cn<non-repeaters> -Cr<max-repetitions>).
func (a *app) bulkget(ops []string) int {
	f, ok := a.parseAppOpts("", "nr", "")
	if !ok {
		return 1
	}
	nonRep, maxRep := 0, 10
	if f.set['n'] {
		nonRep = f.num['n']
	}
	if f.set['r'] {
		maxRep = f.num['r']
	}
	oids, ok := a.parseOIDs(ops)
	if !ok || !a.checkBulk() || !a.open() {
		return 1
	}
	defer a.sess.Close()
	resp, err := a.sess.GetBulk(a.ctx, nonRep, maxRep, oids...)
	var se *manager.StatusError
	if errors.As(err, &se) {
		a.packetError(se, true)
		return 2
	}
	if err != nil {
		a.requestError(err, false)
		return 1
	}
	for _, vb := range resp.VarBinds {
		a.printVarBind(vb)
	}
	return 0
}

var mib2 = snmp.OID{1, 3, 6, 1, 2, 1}

// getAndPrint GETs oid and prints what comes back unless the request
// fails; it returns the number of varbinds printed.
func (a *app) getAndPrint(oid snmp.OID) int {
	resp, err := a.sess.Get(a.ctx, oid)
	if err != nil {
		return 0
	}
	for _, vb := range resp.VarBinds {
		a.printVarBind(vb)
	}
	return len(resp.VarBinds)
}

// walk is snmpwalk and snmpbulkwalk, with Net-SNMP's termination rules:
// the walk ends at the first name outside the subtree, after an exception
// (which is printed), with noSuchName ("End of MIB"), and on an OID that
// does not increase (an error, unless -Cc). If nothing was printed the
// root itself is fetched with GET (unless -CI).
func (a *app) walk(ops []string, bulk bool) int {
	var f *appFlags
	var ok bool
	if bulk {
		f, ok = a.parseAppOpts("ciIp", "nr", "")
	} else {
		f, ok = a.parseAppOpts("ciIptE", "", "")
	}
	if !ok {
		return 1
	}
	root := mib2
	if len(ops) == 1 {
		if root, ok = a.parseOID(ops[0]); !ok {
			return 1
		}
	}
	var end snmp.OID
	if f.set['E'] {
		if end, ok = a.parseOID(a.o.tableC['E']); !ok {
			return 1
		}
	}
	nonRep, maxRep := 0, 10
	if f.set['n'] {
		nonRep = f.num['n']
	}
	if f.set['r'] {
		maxRep = f.num['r']
	}
	if bulk && !a.checkBulk() {
		return 1
	}
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	check := !f.set['c']
	started := time.Now()
	printed := 0
	if f.set['i'] {
		printed += a.getAndPrint(root)
	}
	name := root.Clone()
	exit := 0
	transportOK := true
	const maxRequests = 1 << 24
	for n, running := 0, true; running && n < maxRequests; n++ {
		var resp *snmp.PDU
		var err error
		if bulk {
			resp, err = a.sess.GetBulk(a.ctx, nonRep, maxRep, name)
		} else {
			resp, err = a.sess.GetNext(a.ctx, name)
		}
		var se *manager.StatusError
		if errors.As(err, &se) {
			if se.Status == snmp.NoSuchName {
				fmt.Fprintf(a.out, "End of MIB\n")
			} else {
				a.packetError(se, true)
				exit = 2
			}
			break
		}
		if err != nil {
			a.requestError(err, false)
			exit, transportOK = 1, false
			break
		}
		if len(resp.VarBinds) == 0 {
			break
		}
		for i, vb := range resp.VarBinds {
			if !vb.Name.HasPrefix(root) {
				running = false
				continue
			}
			if end != nil && end.Compare(vb.Name) <= 0 {
				running = false
				continue
			}
			printed++
			a.printVarBind(vb)
			if vb.Value.Type.IsException() {
				running = false
				continue
			}
			if check && name.Compare(vb.Name) >= 0 {
				a.errorf("Error: OID not increasing: %s\n >= %s\n\n", a.o.out.OID(name), a.o.out.OID(vb.Name))
				running = false
				exit = 1
			}
			if !bulk || i == len(resp.VarBinds)-1 {
				name = vb.Name.Clone()
			}
		}
	}
	if printed == 0 && transportOK && !f.set['I'] {
		printed += a.getAndPrint(root)
	}
	if f.set['p'] {
		fmt.Fprintf(a.out, "Variables found: %d\n", printed)
	}
	if f.set['t'] {
		a.errorf("Total traversal time = %f seconds\n", time.Since(started).Seconds())
	}
	return exit
}

// set is snmpset: OID TYPE VALUE triples.
func (a *app) set(ops []string) int {
	f, ok := a.parseAppOpts("q", "", "")
	if !ok {
		return 1
	}
	// Operands are OID TYPE VALUE triples; the type is the first letter of
	// its argument, as with Net-SNMP.
	type triple struct{ name, typ, val string }
	var triples []triple
	for i := 0; i < len(ops); i += 3 {
		if i+1 >= len(ops) {
			a.errorf("%s: Needs type and value\n", ops[i])
			return 1
		}
		t := ops[i+1]
		if t == "" || strings.IndexByte("=iutaosxdbnUIFD", t[0]) < 0 {
			c := ""
			if t != "" {
				c = t[:1]
			}
			a.errorf("%s: Bad object type: %s\n", ops[i], c)
			return 1
		}
		if i+2 >= len(ops) {
			a.errorf("%s: Needs value\n", ops[i])
			return 1
		}
		triples = append(triples, triple{ops[i], t[:1], ops[i+2]})
	}
	var vbs []snmp.VarBind
	failures := 0
	for _, tr := range triples {
		oid, good := a.parseOID(tr.name)
		if !good {
			failures++
			continue
		}
		v, err := parseSetValue(oid, tr.typ, tr.val, a.setChecks())
		if err != nil {
			a.errorf("%s: %s\n", tr.name, err)
			failures++
			continue
		}
		vbs = append(vbs, snmp.VarBind{Name: oid, Value: v})
	}
	if failures > 0 || !a.open() {
		return 1
	}
	defer a.sess.Close()
	resp, err := a.sess.Set(a.ctx, vbs...)
	var se *manager.StatusError
	if errors.As(err, &se) {
		a.packetError(se, true)
		return 2
	}
	if err != nil {
		a.requestError(err, false)
		return 1
	}
	if !f.set['q'] {
		for _, vb := range resp.VarBinds {
			a.printVarBind(vb)
		}
	}
	return 0
}
