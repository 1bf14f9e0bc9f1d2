package agent

import (
	"sync"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// View is the part of VACM the responder needs: whether an OID is in the
// requester's MIB view.
type View interface {
	Contains(oid snmp.OID) bool
}

// viewSkipper is implemented by views that can jump past excluded subtrees.
type viewSkipper interface {
	// NextIncluded returns the first OID >= oid that may be in the view.
	NextIncluded(oid snmp.OID) (snmp.OID, bool)
}

// allView includes everything.
type allView struct{}

func (allView) Contains(snmp.OID) bool { return true }

// maxSkips bounds how many out-of-view instances one getnext may step over
// before giving up with endOfMibView; views that can jump rarely need any.
const maxSkips = 100000

// request is one PDU being answered.
type request struct {
	r       *mib.Request
	tree    *mib.Tree
	view    View
	v1      bool
	resp    *snmp.PDU
	maxSize int // bytes available for the varbind list
	// maxVarBinds, when positive, caps the varbinds of a GetBulk
	// response (Policy.MaxBulkResponses).
	maxVarBinds int
	stats       *Stats
	// sets is the agent's lock of SetRequests, which set holds from the
	// tests of the handlers it tests together to the end.
	sets *sync.Mutex
}

// next returns the first in-view instance after oid, skipping Counter64
// values for SNMPv1 (RFC 3584 §4.2.2.1.3).
func (q *request) next(oid snmp.OID) (snmp.VarBind, bool) {
	skipper, _ := q.view.(viewSkipper)
	for i := 0; i < maxSkips; i++ {
		vb, ok := q.tree.Next(q.r, oid)
		if !ok {
			return vb, false
		}
		if q.view.Contains(vb.Name) {
			if q.v1 && vb.Value.Type == snmp.Counter64 {
				oid = vb.Name
				continue
			}
			return vb, true
		}
		oid = vb.Name
		if skipper != nil {
			start, ok := skipper.NextIncluded(vb.Name)
			if !ok {
				return snmp.VarBind{}, false
			}
			if start.Compare(oid) > 0 {
				// Test start itself, then continue after it.
				if v := q.tree.Get(q.r, start); !v.Type.IsException() && q.view.Contains(start) {
					return snmp.VarBind{Name: start, Value: v}, true
				}
				oid = start
			}
		}
	}
	return snmp.VarBind{}, false
}

// get answers a GetRequest.
func (q *request) get(req *snmp.PDU) {
	for i, vb := range req.VarBinds {
		v := snmp.ExceptionValue(snmp.NoSuchObject)
		if q.view.Contains(vb.Name) {
			v = q.tree.Get(q.r, vb.Name)
		}
		if st := q.r.Failure(); st != snmp.NoError {
			q.fail(req, st, i)
			return
		}
		if q.v1 && (v.Type.IsException() || v.Type == snmp.Counter64) {
			q.fail(req, snmp.NoSuchName, i)
			return
		}
		q.resp.VarBinds = append(q.resp.VarBinds, snmp.VarBind{Name: vb.Name, Value: v})
	}
}

// getNext answers a GetNextRequest.
func (q *request) getNext(req *snmp.PDU) {
	for i, vb := range req.VarBinds {
		nvb, ok := q.next(vb.Name)
		if st := q.r.Failure(); st != snmp.NoError {
			q.fail(req, st, i)
			return
		}
		if !ok {
			if q.v1 {
				q.fail(req, snmp.NoSuchName, i)
				return
			}
			nvb = snmp.VarBind{Name: vb.Name, Value: snmp.ExceptionValue(snmp.EndOfMibView)}
		}
		q.resp.VarBinds = append(q.resp.VarBinds, nvb)
	}
}

// getBulk answers a GetBulkRequest (RFC 3416 §4.2.3), stopping before the
// response would exceed q.maxSize.
func (q *request) getBulk(req *snmp.PDU, maxReps int) {
	q.bulk(req, maxReps)
	if st := q.r.Failure(); st != snmp.NoError {
		q.fail(req, st, 0)
	}
}

func (q *request) bulk(req *snmp.PDU, maxReps int) {
	n := len(req.VarBinds)
	nonRep := min(req.NonRepeaters(), n)
	reps := min(req.MaxRepetitions(), maxReps)
	if r := n - nonRep; q.maxVarBinds > 0 && r > 0 && nonRep+reps*r > q.maxVarBinds {
		// As snmpd does for maxGetbulkResponses: fewer repetitions, so
		// that the response holds at most maxVarBinds varbinds.
		reps = max(q.maxVarBinds-nonRep, 0) / r
		q.stats.BulkTruncations.Add(1)
	}
	size := 0
	add := func(vb snmp.VarBind) bool {
		l := snmp.VarBindLen(&vb)
		if size+l > q.maxSize {
			return false
		}
		size += l
		q.resp.VarBinds = append(q.resp.VarBinds, vb)
		return true
	}
	for _, vb := range req.VarBinds[:nonRep] {
		nvb, ok := q.next(vb.Name)
		if !ok {
			nvb = snmp.VarBind{Name: vb.Name, Value: snmp.ExceptionValue(snmp.EndOfMibView)}
		}
		if !add(nvb) {
			q.tooBig(req)
			return
		}
	}
	repeaters := req.VarBinds[nonRep:]
	switch len(repeaters) {
	case 0:
		return
	case 1:
		q.bulkOne(repeaters[0].Name, reps, size)
		return
	}
	q.bulkMany(repeaters, reps, size)
}

// bulkMany answers the repetitions of several repeating varbinds, which
// is how snmptable asks for a table's columns. Each repeater's instances
// come from the tree in runs (run), a chunk of repetitions at a time no
// longer than what could still fit, and are laid out repetition by
// repetition; a repetition that does not fit is dropped whole (truncate).
// A repeater at the end of the MIB view repeats endOfMibView under the
// last name it answered, and the response ends after a repetition in
// which every repeater is at the end (RFC 3416 §4.2.3).
func (q *request) bulkMany(repeaters []snmp.VarBind, reps, size int) {
	width := len(repeaters)
	base := len(q.resp.VarBinds)
	type column struct {
		from  snmp.OID // where the next run starts: the last name answered
		ended bool     // the view ended after from
		off   int      // where this chunk's instances start in scratch
		n     int      // how many this chunk has
	}
	var buf [16]column
	cols := buf[:0]
	if width > len(buf) {
		cols = make([]column, 0, width)
	}
	cols = cols[:width]
	for j, vb := range repeaters {
		cols[j].from = vb.Name
	}
	sp := scratchPool.Get().(*[]snmp.VarBind)
	scratch := *sp
	defer func() {
		clear(scratch[:cap(scratch)])
		*sp = scratch[:0]
		scratchPool.Put(sp)
	}()
	// The first chunk is short; later ones are as long as the room left
	// holds at the octets per varbind seen so far (never under 7, the
	// smallest varbind), so little is read that does not fit.
	perVB, start := 7, size
	chunk := min(reps, 32, (q.maxSize-size)/(perVB*width)+1)
	for rep := 0; rep < reps; {
		scratch = scratch[:0]
		for j := range cols {
			c := &cols[j]
			c.off = len(scratch)
			if !c.ended {
				scratch, c.ended = q.run(c.from, chunk, scratch)
			}
			c.n = len(scratch) - c.off
		}
		for i := 0; i < chunk; i, rep = i+1, rep+1 {
			allEnd := true
			for j := range cols {
				c := &cols[j]
				var vb snmp.VarBind
				switch {
				case i < c.n:
					vb = scratch[c.off+i]
					allEnd = false
				case c.n > 0:
					vb = snmp.VarBind{Name: scratch[c.off+c.n-1].Name, Value: snmp.ExceptionValue(snmp.EndOfMibView)}
				default:
					vb = snmp.VarBind{Name: c.from, Value: snmp.ExceptionValue(snmp.EndOfMibView)}
				}
				l := snmp.VarBindLen(&vb)
				if size+l > q.maxSize {
					q.truncate(base, rep, width)
					return
				}
				size += l
				q.resp.VarBinds = append(q.resp.VarBinds, vb)
			}
			if allEnd {
				return
			}
		}
		for j := range cols {
			if c := &cols[j]; c.n > 0 {
				c.from = scratch[c.off+c.n-1].Name
			}
		}
		perVB = max(7, (size-start)/(len(q.resp.VarBinds)-base))
		chunk = min(reps-rep, (q.maxSize-size)/(perVB*width)+1)
	}
}

// scratchPool holds the buffers bulkMany lists columns into.
var scratchPool = sync.Pool{New: func() any { return new([]snmp.VarBind) }}

// run appends to dst up to n in-view instances after from, those a chain
// of next calls would return, taken from the tree in runs; ended reports
// that the view ended before n were found.
func (q *request) run(from snmp.OID, n int, dst []snmp.VarBind) (_ []snmp.VarBind, ended bool) {
	for n > 0 {
		base := len(dst)
		vbs := q.tree.List(q.r, from, dst, n)
		if len(vbs) == base {
			return vbs, true
		}
		from = vbs[len(vbs)-1].Name
		k := base
		for i := base; i < len(vbs); i++ {
			if q.view.Contains(vbs[i].Name) {
				vbs[k] = vbs[i]
				k++
			}
		}
		dst = vbs[:k]
		n -= k - base
		if k > base {
			continue
		}
		// The whole run was out of view: next skips what the view excludes.
		nvb, ok := q.next(from)
		if !ok {
			return dst, true
		}
		dst = append(dst, nvb)
		n--
		from = nvb.Name
	}
	return dst, false
}

// bulkOne answers the repetitions of a GetBulk's only repeating varbind,
// which is how walks ask: it takes the instances from the tree in runs
// (mib.Tree.List), no longer than what could still fit, and keeps those in
// the view while they fit. A run entirely out of view hands over to next,
// which can jump over what the view excludes. size is what the
// response's varbinds take so far.
func (q *request) bulkOne(from snmp.OID, reps, size int) {
	last := from // the last name answered: an endOfMibView repeats it
	for reps > 0 {
		// The smallest varbind takes 7 octets: never list more than fit.
		run := min(reps, (q.maxSize-size)/7+1)
		base := len(q.resp.VarBinds)
		vbs := q.tree.List(q.r, from, q.resp.VarBinds, run)
		if len(vbs) == base {
			q.resp.VarBinds = vbs
			q.bulkEnd(last, size)
			return
		}
		from = vbs[len(vbs)-1].Name
		k := base
		for i := base; i < len(vbs); i++ {
			if !q.view.Contains(vbs[i].Name) {
				continue
			}
			l := snmp.VarBindLen(&vbs[i])
			if size+l > q.maxSize {
				q.resp.VarBinds = vbs[:k]
				return
			}
			size += l
			vbs[k] = vbs[i]
			k++
		}
		q.resp.VarBinds = vbs[:k]
		reps -= k - base
		if k > base {
			last = vbs[k-1].Name
			continue
		}
		// The whole run was out of view: next skips what the view excludes.
		nvb, ok := q.next(from)
		if !ok {
			q.bulkEnd(last, size)
			return
		}
		l := snmp.VarBindLen(&nvb)
		if size+l > q.maxSize {
			return
		}
		size += l
		q.resp.VarBinds = append(q.resp.VarBinds, nvb)
		reps--
		from, last = nvb.Name, nvb.Name
	}
}

// bulkEnd adds the endOfMibView that ends the repetitions after name, if
// it fits.
func (q *request) bulkEnd(name snmp.OID, size int) {
	vb := snmp.VarBind{Name: name, Value: snmp.ExceptionValue(snmp.EndOfMibView)}
	if size+snmp.VarBindLen(&vb) <= q.maxSize {
		q.resp.VarBinds = append(q.resp.VarBinds, vb)
	}
}

// truncate drops a partially filled repetition; the manager continues from
// the last complete one. A response with no complete repetition keeps what
// fitted, which still lets a walk make progress.
func (q *request) truncate(base, rep, width int) {
	if rep > 0 {
		q.resp.VarBinds = q.resp.VarBinds[:base+rep*width]
	}
}

// tooBig turns the response into the tooBig error of RFC 3416 §4.2.1.
func (q *request) tooBig(req *snmp.PDU) {
	q.resp.ErrorStatus, q.resp.ErrorIndex = snmp.TooBig, 0
	q.resp.VarBinds = append(q.resp.VarBinds[:0], req.VarBinds...)
}

// fail sets an error status and index (0-based i) and echoes the request's
// varbinds, as RFC 3416 requires for every error response.
func (q *request) fail(req *snmp.PDU, st snmp.ErrorStatus, i int) {
	if q.v1 {
		st = v1Status(st)
	}
	q.resp.ErrorStatus, q.resp.ErrorIndex = st, i+1
	q.resp.VarBinds = append(q.resp.VarBinds[:0], req.VarBinds...)
}

// v1Status maps SNMPv2 error statuses to SNMPv1 ones (RFC 3584 §4.4).
func v1Status(st snmp.ErrorStatus) snmp.ErrorStatus {
	switch st {
	case snmp.WrongValue, snmp.WrongEncoding, snmp.WrongType, snmp.WrongLength, snmp.InconsistentValue:
		return snmp.BadValue
	case snmp.NoAccess, snmp.NotWritable, snmp.NoCreation, snmp.InconsistentName, snmp.AuthorizationError:
		return snmp.NoSuchName
	case snmp.ResourceUnavailable, snmp.CommitFailed, snmp.UndoFailed:
		return snmp.GenErr
	}
	return st
}

// set answers a SetRequest: every varbind is tested before any is written,
// so the request applies all or nothing (RFC 3416 §4.2.5). Handlers whose
// objects live in another process (mib.PhasedSetter: AgentX subagents)
// are tested together after every local varbind passed, committed before
// the local ones, undone when a later commit fails, and always cleaned up
// (RFC 2741 §7.2.4). The agent answers one SetRequest at a time.
func (q *request) set(req *snmp.PDU, writeView View) {
	type group struct {
		s   mib.Setter
		vbs []snmp.VarBind
		idx []int // the varbinds' positions in req
	}
	var groups []group
	for i, vb := range req.VarBinds {
		if writeView == nil || !writeView.Contains(vb.Name) {
			q.fail(req, snmp.NoAccess, i)
			return
		}
		s, ok := q.tree.SetterIn(q.r.ContextName, vb.Name)
		if !ok {
			// No object under this name can be created or modified
			// (RFC 3416 §4.2.5 step 3), whether or not it exists.
			q.fail(req, snmp.NotWritable, i)
			return
		}
		if _, phased := s.(mib.PhasedSetter); !phased {
			if st := s.TestSet(q.r, vb); st != snmp.NoError {
				q.fail(req, st, i)
				return
			}
		}
		k := 0
		for k < len(groups) && groups[k].s != s {
			k++
		}
		if k == len(groups) {
			groups = append(groups, group{s: s})
		}
		groups[k].vbs = append(groups[k].vbs, vb)
		groups[k].idx = append(groups[k].idx, i)
	}
	// The handlers tested together and committed hold their locks from
	// TestSets to CleanupSet: one request at a time takes them, so that
	// two never wait for each other's. A request refused above waits
	// for none.
	if q.sets != nil {
		q.sets.Lock()
		defer q.sets.Unlock()
	}
	var phased []mib.PhasedSetter // tested, in order
	cleanup := func() {
		for _, p := range phased {
			p.CleanupSet(q.r)
		}
	}
	for _, g := range groups {
		p, ok := g.s.(mib.PhasedSetter)
		if !ok {
			continue
		}
		phased = append(phased, p)
		if st, i := p.TestSets(q.r, g.vbs); st != snmp.NoError {
			cleanup()
			q.fail(req, st, g.idx[min(max(i, 0), len(g.idx)-1)])
			return
		}
	}
	committed := 0
	undo := func(st snmp.ErrorStatus) snmp.ErrorStatus {
		for _, p := range phased[:committed] {
			if p.UndoSet(q.r) != snmp.NoError {
				st = snmp.UndoFailed
			}
		}
		cleanup()
		return st
	}
	for _, p := range phased {
		if st := p.CommitSet(q.r, nil); st != snmp.NoError {
			st = undo(snmp.CommitFailed)
			for _, g := range groups {
				if g.s == p {
					q.fail(req, st, g.idx[0])
				}
			}
			return
		}
		committed++
	}
	local := 0
	for _, g := range groups {
		if _, ok := g.s.(mib.PhasedSetter); ok {
			continue
		}
		if st := g.s.CommitSet(q.r, g.vbs); st != snmp.NoError {
			if local > 0 {
				st = snmp.UndoFailed
			}
			q.fail(req, undo(st), g.idx[0])
			return
		}
		local++
	}
	cleanup()
	q.resp.VarBinds = append(q.resp.VarBinds, req.VarBinds...)
}
