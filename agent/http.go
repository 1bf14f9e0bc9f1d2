package agent

import (
	"context"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// Session answers the reads and writes of one principal from one snapshot
// of the MIB: every Get, Next and Set of a Session shares one mib.Request,
// so a table read through many calls sees one instant, exactly as the
// varbinds of one SNMP PDU do. Access control is the command responder's:
// the principal's VACM read view filters Get and Next (skipping excluded
// subtrees the same way), the write view gates Set, and Set applies all
// varbinds or none (RFC 3416 §4.2.5).
//
// A Session is not safe for concurrent use. OIDs it returns are valid
// until Close.
type Session struct {
	a    *Agent
	p    *Policy
	pr   Principal
	q    request
	resp snmp.PDU
}

// OpenSession resolves the principal's read view under the current policy
// and returns a session over a new request snapshot taken at now. It
// returns the access model's error (a vacm.Error such as noGroupName) when
// the principal may read nothing.
func (a *Agent) OpenSession(ctx context.Context, pr Principal, now time.Time) (*Session, error) {
	p := a.policy.Load()
	view, err := p.view(pr, false)
	if err != nil {
		return nil, err
	}
	r := mib.NewRequest(ctx, now)
	r.ContextName = pr.ContextName
	s := &Session{a: a, p: p, pr: pr}
	s.q = request{r: r, tree: a.Tree, view: view, resp: &s.resp, sets: &a.sets}
	return s, nil
}

// Policy returns the policy the session was opened under.
func (s *Session) Policy() *Policy { return s.p }

// Close releases the request snapshot; OIDs the session returned become
// invalid.
func (s *Session) Close() {
	if s.q.r != nil {
		s.q.r.Release()
		s.q.r = nil
	}
}

// Get returns the value of an exact instance, or noSuchObject when the
// instance is outside the principal's read view (as a GetRequest does).
func (s *Session) Get(oid snmp.OID) snmp.Value {
	if !s.q.view.Contains(oid) {
		return snmp.ExceptionValue(snmp.NoSuchObject)
	}
	return s.q.tree.Get(s.q.r, oid)
}

// Next returns the first instance after oid in the principal's read view,
// and false at the end of the view (as a GetNextRequest does).
func (s *Session) Next(oid snmp.OID) (snmp.VarBind, bool) {
	return s.q.next(oid)
}

// Set writes vbs through the command responder's set path under the
// principal's write view. It returns noError, or the RFC 3416 error
// status and the 1-based index of the varbind it concerns; on error
// nothing was written.
func (s *Session) Set(vbs []snmp.VarBind) (snmp.ErrorStatus, int) {
	wv, err := s.p.view(s.pr, true)
	if err != nil {
		wv = nil
	}
	s.resp = snmp.PDU{}
	s.q.set(&snmp.PDU{Type: snmp.SetRequest, VarBinds: vbs}, wv)
	return s.resp.ErrorStatus, s.resp.ErrorIndex
}
