package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// tsnmp vacm is snmpvacm: it creates and deletes rows of an agent's
// VACM tables (RFC 3415) and of Net-SNMP's nsVacmAccessTable, with
// snmpvacm's requests and messages.
//
//	createSec2Group MODEL SECURITYNAME GROUPNAME
//	deleteSec2Group MODEL SECURITYNAME
//	createView [-Ce] NAME SUBTREE [MASK]
//	deleteView NAME SUBTREE
//	createAccess GROUPNAME [CONTEXTPREFIX] MODEL LEVEL CONTEXTMATCH READVIEW WRITEVIEW NOTIFYVIEW
//	deleteAccess GROUPNAME [CONTEXTPREFIX] MODEL LEVEL
//	createAuth GROUPNAME [CONTEXTPREFIX] MODEL LEVEL AUTHTYPE CONTEXTMATCH VIEW
//	deleteAuth GROUPNAME [CONTEXTPREFIX] MODEL LEVEL AUTHTYPE

var (
	oidVacmSec2Group = snmp.OID{1, 3, 6, 1, 6, 3, 16, 1, 2, 1}    // vacmSecurityToGroupEntry
	oidVacmAccess    = snmp.OID{1, 3, 6, 1, 6, 3, 16, 1, 4, 1}    // vacmAccessEntry
	oidVacmView      = snmp.OID{1, 3, 6, 1, 6, 3, 16, 1, 5, 2, 1} // vacmViewTreeFamilyEntry
	oidNsVacmAccess  = snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 9, 1, 1}
)

var vacmNotes = map[string]string{
	"createSec2Group": "Sec2group successfully created.", "deleteSec2Group": "Sec2group successfully deleted.",
	"createAccess": "Access successfully created.", "deleteAccess": "Access successfully deleted.",
	"createView": "View successfully created.", "deleteView": "View successfully deleted.",
	"createAuth": "AuthAccess successfully created.", "deleteAuth": "AuthAccess successfully deleted.",
}

// appendStr appends a length-prefixed string to an index.
func appendStr(o snmp.OID, s string) snmp.OID {
	o = append(o, uint32(len(s)))
	for i := 0; i < len(s); i++ {
		o = append(o, uint32(s[i]))
	}
	return o
}

// atoi is sscanf's %d: the leading number, 0 when there is none.
func atoi(s string) (int64, bool) {
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || end == 0 && (s[0] == '-' || s[0] == '+')) {
		end++
	}
	v, err := strconv.ParseInt(s[:end], 10, 32)
	return v, err == nil
}

func (a *app) vacm(ops []string) int {
	f, ok := a.parseAppOpts("e", "", "")
	if !ok {
		return 1
	}
	if !a.open() {
		return 1
	}
	defer a.sess.Close()
	if len(ops) == 0 {
		a.errorf("Please specify a operation to perform.\n")
		a.usage()
		return 1
	}
	cmd, args := ops[0], ops[1:]
	var vbs []snmp.VarBind
	col := func(entry snmp.OID, c uint32, idx snmp.OID) snmp.OID {
		return append(append(entry.Clone(), c), idx...)
	}
	integer := func(v int64) snmp.Value { return snmp.IntegerValue(v) }
	fail := func(msg string) int {
		a.errorf("%s\n", msg)
		a.usage()
		return 1
	}
	bad := func(what string) int {
		a.out.WriteString("invalid " + what + "\n")
		a.out.Flush()
		a.usage()
		return 1
	}
	// group [prefix] model level: the index of vacmAccessEntry.
	accessIndex := func(args []string, n int) (snmp.OID, []string, int) {
		var idx snmp.OID
		idx = appendStr(idx, args[0])
		rest := args[1:]
		if len(args) == n+1 {
			idx = appendStr(idx, rest[0])
			rest = rest[1:]
		} else {
			idx = append(idx, 0)
		}
		model, ok := atoi(rest[0])
		if !ok {
			return nil, nil, bad("security model")
		}
		level, ok := atoi(rest[1])
		if !ok {
			return nil, nil, bad("security level")
		}
		return append(idx, uint32(model), uint32(level)), rest[2:], 0
	}
	switch cmd {
	case "createSec2Group", "deleteSec2Group":
		n := 3
		if cmd == "deleteSec2Group" {
			n = 2
		}
		if len(args) != n {
			if n == 3 {
				return fail("You must specify model, security name and group name")
			}
			return fail("You must specify the sec2group to delete")
		}
		model, ok := atoi(args[0])
		if !ok {
			return bad("security model")
		}
		idx := appendStr(snmp.OID{uint32(model)}, args[1])
		if n == 2 {
			vbs = append(vbs, snmp.VarBind{Name: col(oidVacmSec2Group, 5, idx), Value: integer(6)})
		} else {
			vbs = append(vbs, snmp.VarBind{Name: col(oidVacmSec2Group, 5, idx), Value: integer(4)},
				snmp.VarBind{Name: col(oidVacmSec2Group, 3, idx), Value: snmp.StringValue(args[2])})
		}
	case "createView", "deleteView":
		if cmd == "deleteView" && len(args) != 2 {
			return fail("You must specify the view to delete")
		}
		if cmd == "createView" && len(args) < 2 {
			return fail("You must specify name, subtree and mask")
		}
		sub, ok := a.parseOID(args[1])
		if !ok {
			a.out.WriteString("Error parsing subtree (" + args[1] + ")\n")
			return 1
		}
		idx := appendStr(nil, args[0])
		idx = append(append(idx, uint32(len(sub))), sub...)
		status := col(oidVacmView, 6, idx)
		if cmd == "deleteView" {
			vbs = append(vbs, snmp.VarBind{Name: status, Value: integer(6)})
			break
		}
		var mask []byte
		if len(args) >= 3 {
			for _, m := range strings.FieldsFunc(args[2], func(r rune) bool { return r == '.' || r == ':' }) {
				v, err := strconv.ParseUint(m, 16, 8)
				if err != nil {
					a.out.WriteString("invalid MASK\n")
					return 1
				}
				mask = append(mask, byte(v))
			}
		} else {
			// snmpvacm's default: all ones, as many octets as the
			// status column's OID takes eighths of.
			for range (len(status) + 7) / 8 {
				mask = append(mask, 0xff)
			}
		}
		typ := int64(1)
		if f.set['e'] {
			typ = 2
		}
		vbs = append(vbs, snmp.VarBind{Name: status, Value: integer(4)},
			snmp.VarBind{Name: col(oidVacmView, 3, idx), Value: snmp.BytesValue(mask)},
			snmp.VarBind{Name: col(oidVacmView, 4, idx), Value: integer(typ)})
	case "createAccess", "deleteAccess":
		n := 7
		if cmd == "deleteAccess" {
			n = 3
		}
		if len(args) < n {
			if n == 7 {
				return fail("You must specify the access entry to create")
			}
			return fail("You must specify the access entry to delete")
		}
		idx, rest, code := accessIndex(args, n)
		if idx == nil {
			return code
		}
		if cmd == "deleteAccess" {
			vbs = append(vbs, snmp.VarBind{Name: col(oidVacmAccess, 9, idx), Value: integer(6)})
			break
		}
		match, ok := atoi(rest[0])
		if !ok {
			return bad("contextMatch")
		}
		vbs = append(vbs, snmp.VarBind{Name: col(oidVacmAccess, 9, idx), Value: integer(4)},
			snmp.VarBind{Name: col(oidVacmAccess, 4, idx), Value: integer(match)},
			snmp.VarBind{Name: col(oidVacmAccess, 5, idx), Value: snmp.StringValue(rest[1])},
			snmp.VarBind{Name: col(oidVacmAccess, 6, idx), Value: snmp.StringValue(rest[2])},
			snmp.VarBind{Name: col(oidVacmAccess, 7, idx), Value: snmp.StringValue(rest[3])})
	case "createAuth", "deleteAuth":
		n := 6
		if cmd == "deleteAuth" {
			n = 4
		}
		if len(args) < n {
			if n == 6 {
				return fail("You must specify the authAccess entry to create")
			}
			return fail("You must specify the authAccess entry to delete")
		}
		idx, rest, code := accessIndex(args, n)
		if idx == nil {
			return code
		}
		idx = appendStr(idx, rest[0])
		if cmd == "deleteAuth" {
			vbs = append(vbs, snmp.VarBind{Name: col(oidNsVacmAccess, 5, idx), Value: integer(6)})
			break
		}
		match, ok := atoi(rest[1])
		if !ok {
			return bad("contextMatch")
		}
		vbs = append(vbs, snmp.VarBind{Name: col(oidNsVacmAccess, 5, idx), Value: integer(4)},
			snmp.VarBind{Name: col(oidNsVacmAccess, 2, idx), Value: integer(match)},
			snmp.VarBind{Name: col(oidNsVacmAccess, 3, idx), Value: snmp.StringValue(rest[2])})
	default:
		a.out.WriteString("Unknown command\n")
		a.out.Flush()
		a.usage()
		return 1
	}
	_, err := a.sess.Do(a.ctx, &snmp.PDU{Type: snmp.SetRequest, VarBinds: vbs})
	var se *manager.StatusError
	switch {
	case errors.As(err, &se):
		a.errorf("Error in packet.\nReason: %s\n", errorString(se.Status))
		if se.Index != 0 {
			a.errorf("Failed object: ")
			if name, ok := se.FailedObject(); ok {
				a.errorf("%s", a.o.out.OID(name))
			}
			a.errorf("\n")
		}
		return 2
	case errors.Is(err, manager.ErrTimeout):
		a.errorf("Timeout: No Response from %s\n", a.peer)
		return 1
	case err != nil:
		a.errorf("snmpvacm: %s\n", a.withDetail(err.Error()))
		return 1
	}
	a.errorf("%s\n", vacmNotes[cmd]) // snmpvacm says so on standard error
	return 0
}
