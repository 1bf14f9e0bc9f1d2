package vacm

import (
	"bytes"
	"slices"
	"sync"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// RegisterWritableMIB serves the tables as RegisterMIB does, and lets
// vacmSecurityToGroupTable, vacmAccessTable and vacmViewTreeFamilyTable
// be written as RFC 3415 and RFC 2579's RowStatus say: rows are created
// with createAndGo or createAndWait (notInService, or notReady for a
// group without its vacmGroupName), changed, suspended with notInService
// and resumed with active, and removed with destroy, but the
// configuration's rows (permanent) are not removed; a row that is not
// active grants nothing. vacmViewSpinLock is a TestAndIncr. apply installs the
// VACM a set makes and stores it; an error fails the set with
// commitFailed and changes nothing. The Sets it returns let the program
// hold sets off while it replaces the VACM itself.
func RegisterWritableMIB(tree *mib.Tree, current func() *VACM, apply func(*Config) error) *Sets {
	tree.Register(OIDViewSpinLock, mib.NewTestAndIncr(OIDViewSpinLock[:len(OIDViewSpinLock)-1], 1, nil))
	tree.Register(OIDContextEntry, &mib.Table{Entry: OIDContextEntry, Columns: []uint32{1},
		Rows: func(*mib.Request) mib.Rows { return &current().mibRows().contexts }})
	s := &setState{current: current, apply: apply}
	tree.Register(OIDSecurityToGroupEntry, &setTable{Table: &mib.Table{Entry: OIDSecurityToGroupEntry, Columns: []uint32{3, 4, 5},
		Rows: func(*mib.Request) mib.Rows { return &current().mibRows().groups }}, s: s, kind: kindGroup})
	tree.Register(OIDAccessEntry, &setTable{Table: &mib.Table{Entry: OIDAccessEntry, Columns: []uint32{4, 5, 6, 7, 8, 9},
		Rows: func(*mib.Request) mib.Rows { return &current().mibRows().access }}, s: s, kind: kindAccess})
	tree.Register(OIDViewTreeFamilyEntry, &setTable{Table: &mib.Table{Entry: OIDViewTreeFamilyEntry, Columns: []uint32{3, 4, 5, 6},
		Rows: func(*mib.Request) mib.Rows { return &current().mibRows().families }}, s: s, kind: kindFamily})
	tree.Register(OIDNsAccessEntry, &setTable{Table: &mib.Table{Entry: OIDNsAccessEntry, Columns: []uint32{2, 3, 4, 5},
		Rows: func(*mib.Request) mib.Rows { return &current().mibRows().ns }}, s: s, kind: kindNs})
	return &Sets{s}
}

// Sets are the sets of the tables RegisterWritableMIB serves.
type Sets struct{ s *setState }

// Hold waits for a set being applied to end and keeps later ones from
// being applied (they wait, tested, before reading the VACM they apply
// to) until release is called: a program that builds a new VACM from
// what sets stored and installs it holds sets across both, so that none
// falls between and is lost or applied to the VACM being replaced.
// release may be called more than once.
func (h *Sets) Hold() (release func()) {
	h.s.mu.Lock()
	var once sync.Once
	return func() { once.Do(h.s.mu.Unlock) }
}

const (
	kindGroup = iota
	kindAccess
	kindFamily
	kindNs // NET-SNMP-VACM-MIB's nsVacmAccessTable
)

// setState is shared by the writable tables: sets are applied one at a
// time.
type setState struct {
	current func() *VACM
	apply   func(*Config) error
	mu      sync.Mutex
}

// setTable is a writable table. Its varbinds are tested together
// (mib.PhasedSetter) and applied at commit to the VACM of that moment.
type setTable struct {
	*mib.Table
	s    *setState
	kind int

	mu      sync.Mutex
	pending map[*mib.Request][]snmp.VarBind
	undo    map[*mib.Request]*Config
}

// TestSet implements mib.Setter; TestSets does the work.
func (t *setTable) TestSet(*mib.Request, snmp.VarBind) snmp.ErrorStatus { return snmp.NoError }

// TestSets implements mib.PhasedSetter.
func (t *setTable) TestSets(r *mib.Request, vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	cfg := cloneConfig(t.s.current().Tables())
	if st, i := t.edit(&cfg, vbs); st != snmp.NoError {
		return st, i
	}
	if _, err := New(&cfg); err != nil {
		return snmp.InconsistentValue, 0
	}
	t.mu.Lock()
	if t.pending == nil {
		t.pending, t.undo = map[*mib.Request][]snmp.VarBind{}, map[*mib.Request]*Config{}
	}
	t.pending[r] = vbs
	t.mu.Unlock()
	return snmp.NoError, 0
}

// CommitSet implements mib.Setter: the tested varbinds are applied to
// the VACM of now.
func (t *setTable) CommitSet(r *mib.Request, _ []snmp.VarBind) snmp.ErrorStatus {
	t.mu.Lock()
	vbs := t.pending[r]
	t.mu.Unlock()
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	old := t.s.current().Tables()
	cfg := cloneConfig(old)
	if st, _ := t.edit(&cfg, vbs); st != snmp.NoError {
		return st
	}
	if err := t.s.apply(&cfg); err != nil {
		return snmp.CommitFailed
	}
	t.mu.Lock()
	t.undo[r] = &old
	t.mu.Unlock()
	return snmp.NoError
}

// UndoSet implements mib.PhasedSetter.
func (t *setTable) UndoSet(r *mib.Request) snmp.ErrorStatus {
	t.mu.Lock()
	old := t.undo[r]
	t.mu.Unlock()
	if old == nil {
		return snmp.NoError
	}
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if t.s.apply(old) != nil {
		return snmp.UndoFailed
	}
	return snmp.NoError
}

// CleanupSet implements mib.PhasedSetter.
func (t *setTable) CleanupSet(r *mib.Request) {
	t.mu.Lock()
	delete(t.pending, r)
	delete(t.undo, r)
	t.mu.Unlock()
}

// cloneConfig copies c's tables, which edits change in place.
func cloneConfig(c Config) Config {
	c.Contexts = slices.Clone(c.Contexts)
	c.Groups, c.Access, c.Families = slices.Clone(c.Groups), slices.Clone(c.Access), slices.Clone(c.Families)
	return c
}

// parseStr reads a non-IMPLIED OCTET STRING index of at most 32 octets.
func parseStr(o snmp.OID) (string, snmp.OID, bool) {
	if len(o) == 0 || o[0] > 32 || len(o) < 1+int(o[0]) {
		return "", nil, false
	}
	b := make([]byte, o[0])
	for i := range b {
		if o[1+i] > 255 {
			return "", nil, false
		}
		b[i] = byte(o[1+i])
	}
	return string(b), o[1+len(b):], true
}

// rowEdit is one row's share of a set.
type rowEdit struct {
	idx    snmp.OID
	status int64
	at     int
	cols   map[uint32]snmp.Value
	first  int
}

// edit applies vbs to cfg, returning the error status and varbind index
// of the first problem.
func (t *setTable) edit(cfg *Config, vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	entry := t.Entry
	var edits []*rowEdit
	statusCol := map[int]uint32{kindGroup: 5, kindAccess: 9, kindFamily: 6, kindNs: 5}[t.kind]
	storageCol := statusCol - 1
	for i, vb := range vbs {
		rest := vb.Name[len(entry):]
		if len(rest) < 2 || !slices.Contains(t.Columns, rest[0]) {
			return snmp.NotWritable, i
		}
		idx := rest[1:]
		var e *rowEdit
		for _, x := range edits {
			if x.idx.Equal(idx) {
				e = x
			}
		}
		if e == nil {
			e = &rowEdit{idx: idx, cols: map[uint32]snmp.Value{}, first: i}
			edits = append(edits, e)
		}
		v := vb.Value
		col := rest[0]
		want := snmp.OctetString
		if col == statusCol || col == storageCol || (t.kind == kindAccess && col == 4) || (t.kind == kindFamily && col == 4) || (t.kind == kindNs && col == 2) {
			want = snmp.Integer
		}
		if v.Type != want {
			return snmp.WrongType, i
		}
		switch {
		case col == statusCol:
			if v.Int() < 1 || v.Int() > 6 || v.Int() == StatusNotReady {
				return snmp.WrongValue, i
			}
			e.status, e.at = v.Int(), i
			continue
		case col == storageCol:
			if v.Int() < 1 || v.Int() > 5 {
				return snmp.WrongValue, i
			}
			if v.Int() != 2 && v.Int() != stNonVolatile {
				return snmp.InconsistentValue, i // rows made by sets are kept in the state directory
			}
		case want == snmp.OctetString && t.kind == kindFamily:
			if len(v.Bytes) > 16 {
				return snmp.WrongLength, i
			}
		case want == snmp.OctetString:
			if len(v.Bytes) > 32 {
				return snmp.WrongLength, i
			}
		case t.kind == kindAccess || t.kind == kindNs: // vacmAccessContextMatch, nsVacmContextMatch
			if v.Int() != 1 && v.Int() != 2 {
				return snmp.WrongValue, i
			}
		case t.kind == kindFamily: // vacmViewTreeFamilyType
			if v.Int() != 1 && v.Int() != 2 {
				return snmp.WrongValue, i
			}
		}
		e.cols[col] = v
	}
	for _, e := range edits {
		if st := t.editRow(cfg, e); st != snmp.NoError {
			at := e.first
			if st == snmp.InconsistentValue && e.status != 0 {
				at = e.at
			}
			return st, at
		}
	}
	return snmp.NoError, 0
}

// stNonVolatile is the StorageType of rows sets make.
const stNonVolatile = 3

// editRow applies one row's edit to cfg.
func (t *setTable) editRow(cfg *Config, e *rowEdit) snmp.ErrorStatus {
	if t.kind == kindNs {
		return editNsRow(cfg, e)
	}
	storageCol := map[int]uint32{kindGroup: 4, kindAccess: 8, kindFamily: 5}[t.kind]
	str := func(col uint32, dflt string) string {
		if v, ok := e.cols[col]; ok {
			return string(v.Bytes)
		}
		return dflt
	}
	integer := func(col uint32, dflt int64) int64 {
		if v, ok := e.cols[col]; ok {
			return v.Int()
		}
		return dflt
	}
	// find returns the row's position, or -1; update writes it, remove
	// deletes it.
	var find func() int
	var update func(i int)
	var remove func(i int)
	var create func() snmp.ErrorStatus
	// row returns the status and storage of row i and a pointer to its
	// status; ready tells whether its columns allow it to be active.
	var row func(i int) (st *int, storage int, ready bool)
	switch t.kind {
	case kindGroup:
		if len(e.idx) < 1 || e.idx[0] < 1 || e.idx[0] > 2147483647 {
			return snmp.NoCreation
		}
		name, rest, ok := parseStr(e.idx[1:])
		if !ok || len(rest) != 0 || name == "" {
			return snmp.NoCreation
		}
		model := snmp.SecurityModel(e.idx[0])
		find = func() int {
			return slices.IndexFunc(cfg.Groups, func(g Group) bool { return g.SecurityModel == model && g.SecurityName == name })
		}
		update = func(i int) {
			cfg.Groups[i].GroupName = str(3, cfg.Groups[i].GroupName)
			cfg.Groups[i].Storage = int(integer(storageCol, int64(cfg.Groups[i].Storage)))
		}
		remove = func(i int) { cfg.Groups = slices.Delete(cfg.Groups, i, i+1) }
		create = func() snmp.ErrorStatus {
			g := str(3, "")
			st := 0
			switch {
			case g == "" && e.status == mib.RowCreateAndWait:
				st = StatusNotReady // vacmGroupName has no default
			case g == "":
				return snmp.InconsistentValue
			}
			cfg.Groups = append(cfg.Groups, Group{SecurityModel: model, SecurityName: name, GroupName: g, Storage: int(integer(storageCol, stNonVolatile)), Status: st})
			return snmp.NoError
		}
		row = func(i int) (*int, int, bool) {
			return &cfg.Groups[i].Status, cfg.Groups[i].Storage, cfg.Groups[i].GroupName != ""
		}
	case kindAccess:
		group, rest, ok := parseStr(e.idx)
		if !ok || group == "" {
			return snmp.NoCreation
		}
		prefix, rest, ok := parseStr(rest)
		if !ok || len(rest) != 2 || rest[0] > 2147483647 || rest[1] < 1 || rest[1] > 3 {
			return snmp.NoCreation
		}
		model, level := snmp.SecurityModel(rest[0]), snmp.SecurityLevel(rest[1])
		find = func() int {
			return slices.IndexFunc(cfg.Access, func(a Access) bool {
				return a.GroupName == group && a.ContextPrefix == prefix && a.SecurityModel == model && a.SecurityLevel == level
			})
		}
		set := func(a *Access) {
			a.ContextMatch = ContextMatch(integer(4, int64(a.ContextMatch)))
			a.ReadView, a.WriteView, a.NotifyView = str(5, a.ReadView), str(6, a.WriteView), str(7, a.NotifyView)
			a.Storage = int(integer(storageCol, int64(a.Storage)))
		}
		update = func(i int) { set(&cfg.Access[i]) }
		remove = func(i int) { cfg.Access = slices.Delete(cfg.Access, i, i+1) }
		row = func(i int) (*int, int, bool) { return &cfg.Access[i].Status, cfg.Access[i].Storage, true }
		create = func() snmp.ErrorStatus {
			a := Access{GroupName: group, ContextPrefix: prefix, ContextMatch: Exact, SecurityModel: model, SecurityLevel: level, Storage: stNonVolatile}
			set(&a)
			cfg.Access = append(cfg.Access, a)
			return snmp.NoError
		}
	case kindFamily:
		view, rest, ok := parseStr(e.idx)
		if !ok || view == "" || len(rest) < 1 || int(rest[0]) != len(rest)-1 || len(rest) > 1+117 {
			return snmp.NoCreation
		}
		sub := slices.Clone(rest[1:])
		find = func() int {
			return slices.IndexFunc(cfg.Families, func(f Family) bool { return f.ViewName == view && f.Subtree.Equal(sub) })
		}
		set := func(f *Family) {
			if v, ok := e.cols[3]; ok {
				f.Mask = bytes.Clone(v.Bytes)
			}
			if v, ok := e.cols[4]; ok {
				f.Excluded = v.Int() == 2
			}
			f.Storage = int(integer(storageCol, int64(f.Storage)))
		}
		update = func(i int) { set(&cfg.Families[i]) }
		remove = func(i int) { cfg.Families = slices.Delete(cfg.Families, i, i+1) }
		row = func(i int) (*int, int, bool) { return &cfg.Families[i].Status, cfg.Families[i].Storage, true }
		create = func() snmp.ErrorStatus {
			f := Family{ViewName: view, Subtree: sub, Storage: stNonVolatile}
			set(&f)
			cfg.Families = append(cfg.Families, f)
			return snmp.NoError
		}
	}
	i := find()
	if i >= 0 {
		if _, storage, _ := row(i); storage == storageReadOnly && e.status != mib.RowCreateAndGo && e.status != mib.RowCreateAndWait {
			return snmp.NotWritable // RFC 2579: readOnly rows do not change
		}
	}
	switch {
	case e.status == mib.RowDestroy:
		if i >= 0 {
			if _, storage, _ := row(i); storage == 0 || storage == storagePermanent {
				// RFC 2579: a permanent row (the configuration's) is
				// changed, not deleted.
				return snmp.InconsistentValue
			}
			remove(i)
		}
		return snmp.NoError
	case e.status == mib.RowCreateAndGo || e.status == mib.RowCreateAndWait:
		if i >= 0 {
			return snmp.InconsistentValue
		}
		if st := create(); st != snmp.NoError {
			return st
		}
		if e.status == mib.RowCreateAndWait {
			if st, _, _ := row(find()); *st == 0 {
				*st = StatusNotInService
			}
		}
		return snmp.NoError
	case i < 0 && e.status != 0:
		return snmp.InconsistentValue
	case i < 0:
		return snmp.NoCreation
	}
	update(i)
	st, _, ready := row(i)
	if *st == StatusNotReady && ready {
		*st = StatusNotInService // RFC 2579: its columns are now set
	}
	switch e.status {
	case mib.RowActive:
		if !ready {
			return snmp.InconsistentValue
		}
		*st = 0
	case mib.RowNotInService:
		if !ready {
			return snmp.InconsistentValue
		}
		*st = StatusNotInService
	}
	return snmp.NoError
}

// storageReadOnly is the StorageType (RFC 2579) of rows the configuration
// made read-only.
const storageReadOnly = 5

// editNsRow applies one nsVacmAccessTable row's edit to cfg. A row is one
// view of a vacmAccessTable entry: its nsVacmAuthType read, write or
// notify names vacmAccessReadView, WriteView or NotifyView. Creating it
// sets that view (and makes the entry, with only that view, if there is
// none); destroy empties it (and removes an entry made by SNMP left
// with no view). Other processing types of Net-SNMP (log, execute, net:
// snmptrapd's) are not kept (noCreation); createAndWait and
// notInService are refused (wrongValue): the entry's own RowStatus
// serves that.
func editNsRow(cfg *Config, e *rowEdit) snmp.ErrorStatus {
	group, rest, ok := parseStr(e.idx)
	if !ok || group == "" {
		return snmp.NoCreation
	}
	prefix, rest, ok := parseStr(rest)
	if !ok || len(rest) < 3 || rest[0] > 2147483647 || rest[1] < 1 || rest[1] > 3 {
		return snmp.NoCreation
	}
	model, level := snmp.SecurityModel(rest[0]), snmp.SecurityLevel(rest[1])
	authType, rest, ok := parseStr(rest[2:])
	if !ok || len(rest) != 0 {
		return snmp.NoCreation
	}
	i := slices.IndexFunc(cfg.Access, func(a Access) bool {
		return a.GroupName == group && a.ContextPrefix == prefix && a.SecurityModel == model && a.SecurityLevel == level
	})
	view := func(a *Access) *string {
		switch authType {
		case "read":
			return &a.ReadView
		case "write":
			return &a.WriteView
		case "notify":
			return &a.NotifyView
		}
		return nil
	}
	exists := i >= 0 && view(&cfg.Access[i]) != nil && *view(&cfg.Access[i]) != ""
	if i >= 0 && cfg.Access[i].Storage == storageReadOnly {
		return snmp.NotWritable
	}
	set := func(a *Access) snmp.ErrorStatus {
		if v, ok := e.cols[2]; ok {
			a.ContextMatch = ContextMatch(v.Int())
		}
		if v, ok := e.cols[3]; ok {
			*view(a) = string(v.Bytes)
		}
		if v, ok := e.cols[4]; ok && a.Storage != 0 && a.Storage != storagePermanent {
			a.Storage = int(v.Int())
		}
		return snmp.NoError
	}
	switch {
	case e.status == mib.RowCreateAndWait || e.status == mib.RowNotInService:
		return snmp.WrongValue
	case view(&Access{}) == nil:
		return snmp.NoCreation
	case e.status == mib.RowDestroy:
		if !exists {
			return snmp.NoError
		}
		a := &cfg.Access[i]
		*view(a) = ""
		if a.ReadView == "" && a.WriteView == "" && a.NotifyView == "" && a.Storage != 0 && a.Storage != storagePermanent {
			cfg.Access = slices.Delete(cfg.Access, i, i+1)
		}
		return snmp.NoError
	case e.status == mib.RowCreateAndGo && exists:
		return snmp.InconsistentValue
	case e.status == mib.RowCreateAndGo && i < 0:
		a := Access{GroupName: group, ContextPrefix: prefix, ContextMatch: Exact, SecurityModel: model, SecurityLevel: level, Storage: stNonVolatile}
		set(&a)
		cfg.Access = append(cfg.Access, a)
		return snmp.NoError
	case e.status == mib.RowCreateAndGo:
		return set(&cfg.Access[i])
	case !exists && e.status != 0:
		return snmp.InconsistentValue
	case !exists:
		return snmp.NoCreation
	}
	return set(&cfg.Access[i])
}
