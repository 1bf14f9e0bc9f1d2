package extend

import (
	"context"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

func request() *mib.Request { return mib.NewRequest(context.Background(), time.Now()) }

// TestPassPersistRestart: a pass_persist program that exits after each
// answer is started again for the next request (a new PID each time).
func TestPassPersistRestart(t *testing.T) {
	base := snmp.OID{1, 3, 6, 1, 4, 1, 99999}
	p := &Pass{Prefix: base, Program: "testdata/dies.sh", Persist: true, TimeLimit: 5 * time.Second}
	defer p.Close()
	oid := base.Append(1, 0)
	var pids []uint64
	for i := 0; i < 3; i++ {
		r := request()
		v := p.Get(r, oid)
		if v.Type != snmp.Integer || r.Failure() != snmp.NoError {
			t.Fatalf("get %d: %v (failure %v)", i, v, r.Failure())
		}
		pids = append(pids, v.Num)
		r.Release()
	}
	if pids[0] == pids[1] || pids[1] == pids[2] {
		t.Fatalf("the program was not restarted: PIDs %v", pids)
	}
}

// TestPassPersistTimeLimit: a program that stops answering costs the
// request a genErr after the time limit, and is replaced.
func TestPassPersistTimeLimit(t *testing.T) {
	base := snmp.OID{1, 3, 6, 1, 4, 1, 99999}
	p := &Pass{Prefix: base, Program: "testdata/silent.sh", Persist: true, TimeLimit: 200 * time.Millisecond}
	defer p.Close()
	r := request()
	defer r.Release()
	if _, ok := p.Next(r, base); ok || r.Failure() != snmp.GenErr {
		t.Fatalf("next from a silent program: ok=%v failure=%v", ok, r.Failure())
	}
}

// TestExtendTimeLimit: a command running past its time limit is killed;
// the output so far is kept and the result is -1.
func TestExtendTimeLimit(t *testing.T) {
	e := New([]Command{{Name: "slow", Command: "echo started; exec sleep 30", Shell: true, TimeLimit: 300 * time.Millisecond}})
	res := e.entries[0].run(time.Now())
	if res.output != "started" || res.code != -1 {
		t.Fatalf("got %q, %d", res.output, res.code)
	}
}

func TestParseValue(t *testing.T) {
	for _, c := range []struct {
		typ, s string
		want   snmp.Value
		ok     bool
	}{
		{"integer", "-5", snmp.IntegerValue(-5), true},
		{"gauge", "7", snmp.Gauge32Value(7), true},
		{"counter64", "8589934592", snmp.Counter64Value(1 << 33), true},
		{"ipaddress", "10.0.0.1", snmp.IPValue([4]byte{10, 0, 0, 1}), true},
		{"octet", "41 42", snmp.BytesValue([]byte("AB")), true},
		{"integer", "x", snmp.Value{}, false},
		{"nosuchtype", "1", snmp.Value{}, false},
	} {
		v, ok := parseValue(c.typ, c.s)
		if ok != c.ok || (ok && (v.Type != c.want.Type || v.Num != c.want.Num || string(v.Bytes) != string(c.want.Bytes))) {
			t.Errorf("%s %q: %v %v", c.typ, c.s, v, ok)
		}
	}
}
