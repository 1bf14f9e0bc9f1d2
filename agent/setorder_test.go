package agent

import (
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/engine"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// lockingSetter is a mib.PhasedSetter that, as the kernel tables'
// handlers do, holds a lock of its own from TestSets to CleanupSet.
// Its TestSets, once locked, waits for held (when not nil) to be
// closed, or for a second.
type lockingSetter struct {
	mu      sync.Mutex
	arrived chan struct{}
	held    chan struct{}
}

func (s *lockingSetter) TestSet(*mib.Request, snmp.VarBind) snmp.ErrorStatus { return snmp.NoError }
func (s *lockingSetter) CommitSet(*mib.Request, []snmp.VarBind) snmp.ErrorStatus {
	return snmp.NoError
}
func (s *lockingSetter) UndoSet(*mib.Request) snmp.ErrorStatus { return snmp.NoError }
func (s *lockingSetter) CleanupSet(*mib.Request)               { s.mu.Unlock() }
func (s *lockingSetter) TestSets(*mib.Request, []snmp.VarBind) (snmp.ErrorStatus, int) {
	s.mu.Lock()
	s.arrived <- struct{}{}
	select {
	case <-s.held:
	case <-time.After(time.Second):
	}
	return snmp.NoError, 0
}
func (s *lockingSetter) Get(*mib.Request, snmp.OID) snmp.Value {
	return snmp.Value{Type: snmp.NoSuchObject}
}
func (s *lockingSetter) Next(*mib.Request, snmp.OID) (snmp.VarBind, bool) {
	return snmp.VarBind{}, false
}

// TestSetsOneAtATime: two SetRequests that reach the same two
// handlers in opposite orders both complete. Were they answered at once,
// each would hold the lock of its first handler while it waited for
// the other's.
func TestSetsOneAtATime(t *testing.T) {
	st, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{})
	a1 := &lockingSetter{arrived: make(chan struct{}, 2), held: held}
	b1 := &lockingSetter{arrived: make(chan struct{}, 2), held: held}
	var tree mib.Tree
	oa, ob := snmp.OID{1, 3, 6, 1, 4, 1, 99999, 1}, snmp.OID{1, 3, 6, 1, 4, 1, 99999, 2}
	tree.Register(oa, a1)
	tree.Register(ob, b1)
	a := &Agent{Tree: &tree, State: st}
	a.SetPolicy(&Policy{Communities: testCommunities{"private": "rw"}, Access: testAccess{}})
	set := func(first, second snmp.OID) snmp.ErrorStatus {
		req := snmp.AppendMessage(nil, &snmp.Message{Version: snmp.V2c, Community: []byte("private"),
			PDU: snmp.PDU{Type: snmp.SetRequest, RequestID: 1, VarBinds: []snmp.VarBind{
				{Name: first.Append(0), Value: snmp.IntegerValue(1)}, {Name: second.Append(0), Value: snmp.IntegerValue(1)}}}})
		var m snmp.Message
		if err := m.Unmarshal(a.ServeSNMP(benchRef, req, nil)); err != nil {
			return snmp.GenErr
		}
		return m.PDU.ErrorStatus
	}
	done := make(chan snmp.ErrorStatus, 2)
	go func() { done <- set(oa, ob) }()
	go func() { done <- set(ob, oa) }()
	// Once both requests have locked their first handler, neither waits
	// any longer: the deadlock, if the agent allows it, is then certain.
	go func() {
		n := 0
		for n < 2 {
			select {
			case <-a1.arrived:
			case <-b1.arrived:
			}
			n++
		}
		close(held)
	}()
	for range 2 {
		select {
		case st := <-done:
			if st != snmp.NoError {
				t.Errorf("set: %v", st)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("two SetRequests to the same handlers in opposite orders deadlocked")
		}
	}
}
