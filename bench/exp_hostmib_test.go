package bench

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestSnmpdOneSecondCaches starts the snmpd hostmib runs with 1 s caches,
// sets its nsCacheTable as the experiment does, and reads the table back
// through the read-only community: every row now keeps its readings 1 s,
// ifTable's and hrSWRunTable's among them, which kept 3 and 30 s. The
// cache community writes nothing outside the nsCache group, and the
// read-only one cannot write it.
func TestSnmpdOneSecondCaches(t *testing.T) {
	testenv.Need(t, "snmpd")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := &Env{Dir: t.TempDir()}
	defer env.runCleanup()
	p, err := startSnmpdCacheWritable(env, nil, freshSnmpd)
	if err != nil {
		t.Fatal(err)
	}
	before, after, err := setSnmpdCacheTimeouts(ctx, target(p, false), nsCacheCommunity, 1)
	if err != nil {
		t.Fatalf("%v\n%s", err, p.Log())
	}
	timeout := func(rows []snmpdCache, subtree snmp.OID) int64 {
		for _, r := range rows {
			if r.Subtree.Equal(subtree) {
				return r.Timeout
			}
		}
		return -1
	}
	ifTable, hrSWRun := snmp.OID{1, 3, 6, 1, 2, 1, 2, 2}, snmp.OID{1, 3, 6, 1, 2, 1, 25, 4, 2}
	if timeout(before, ifTable) != 3 || timeout(before, hrSWRun) != 30 {
		t.Errorf("before the SETs: ifTable keeps %d s, hrSWRunTable %d s; want Net-SNMP's 3 and 30 s: %v", timeout(before, ifTable), timeout(before, hrSWRun), before)
	}

	s, err := manager.Dial(ctx, target(p, false), manager.Config{Version: snmp.V2c, Community: "public"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read, err := snmpdCaches(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(read, after, func(a, b snmpdCache) bool { return a.Subtree.Equal(b.Subtree) && a.Timeout == b.Timeout }) {
		t.Errorf("read through public: %v\nread back by setSnmpdCacheTimeouts: %v", read, after)
	}
	if len(read) != len(before) {
		t.Errorf("%d rows after the SETs, %d before", len(read), len(before))
	}
	for _, r := range read {
		if r.Timeout != 1 {
			t.Errorf("%v keeps its readings %d s after the SETs, want 1", r.Subtree, r.Timeout)
		}
	}
	if err := checkSnmpdCaches(before, 1); err == nil || !strings.Contains(err.Error(), "1.3.6.1.2.1.2.2 keeps 3 s") {
		t.Errorf("checkSnmpdCaches of the rows before the SETs: %v", err)
	}

	// public cannot write nsCacheTimeout; the cache community cannot write
	// sysLocation.
	var se *manager.StatusError
	row := append(nsCacheTimeoutOID.Clone(), ifTable...)
	if _, err := s.Set(ctx, snmp.VarBind{Name: row, Value: snmp.IntegerValue(5)}); !errors.As(err, &se) {
		t.Errorf("SET of nsCacheTimeout through public: %v, want an error status", err)
	}
	w, err := manager.Dial(ctx, target(p, false), manager.Config{Version: snmp.V2c, Community: nsCacheCommunity})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sysLocation := snmp.OID{1, 3, 6, 1, 2, 1, 1, 6, 0}
	if _, err := w.Set(ctx, snmp.VarBind{Name: sysLocation, Value: snmp.StringValue("x")}); !errors.As(err, &se) {
		t.Errorf("SET of sysLocation through %s: %v, want an error status", nsCacheCommunity, err)
	}
}
