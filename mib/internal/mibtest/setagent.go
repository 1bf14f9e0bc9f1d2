package mibtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// SetAgent is an agent serving a network namespace over UDP, with the
// community "private" allowed to write, and a manager session to it
// made in the namespace.
type SetAgent struct {
	NS   *netns.NS
	Sess *manager.Session
	Log  *testenv.LogBuffer
}

// StartAgent starts program args (an agent listening on
// 127.0.0.1:port) in ns, and dials it with community "private".
func StartAgent(t testing.TB, ns *netns.NS, port int, env []string, args ...string) *SetAgent {
	t.Helper()
	a := &SetAgent{NS: ns, Log: new(testenv.LogBuffer)}
	cmd := ns.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = a.Log, a.Log
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	err := ns.Do(func() error {
		var err error
		a.Sess, err = manager.Dial(context.Background(), fmt.Sprintf("udp:127.0.0.1:%d", port),
			manager.Config{Version: snmp.V2c, Community: "private", Timeout: 3 * time.Second, Retries: 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Sess.Close() })
	for range 100 {
		if p, err := a.Sess.Get(context.Background(), snmp.MustParseOID("1.3.6.1.2.1.1.3.0")); err == nil && p.ErrorStatus == snmp.NoError {
			return a
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not answer; its log:\n%s", args[0], a.Log)
	return nil
}

// StartTsnmpd builds tsnmpd and starts it in ns.
func StartTsnmpd(t testing.TB, ns *netns.NS) *SetAgent {
	bin := testenv.Build(t, "github.com/tsnmp/tsnmp/cmd/tsnmpd")
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rwcommunity private 127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return StartAgent(t, ns, 16161, nil, bin, "--snmpd-conf", conf, "--state-dir", filepath.Join(dir, "state"),
		"--listen", "udp:127.0.0.1:16161", "--log-level", "warn")
}

// Set sends a SetRequest and returns the response's error status and
// index.
func (a *SetAgent) Set(t testing.TB, vbs ...snmp.VarBind) (snmp.ErrorStatus, int) {
	t.Helper()
	p, err := a.Sess.Set(context.Background(), vbs...)
	var se *manager.StatusError
	if errors.As(err, &se) {
		return se.Status, se.Index
	}
	if err != nil {
		t.Fatalf("set: %v; the agent's log:\n%s", err, a.Log)
	}
	return p.ErrorStatus, p.ErrorIndex
}

// Get returns the value of one instance.
func (a *SetAgent) Get(t testing.TB, oid snmp.OID) snmp.Value {
	t.Helper()
	p, err := a.Sess.Get(context.Background(), oid)
	if err != nil {
		t.Fatalf("get %v: %v", oid, err)
	}
	return p.VarBinds[0].Value
}

// StartSnmpdRW starts Net-SNMP's snmpd in ns with the community "private"
// allowed to write.
func StartSnmpdRW(t testing.TB, ns *netns.NS) *SetAgent {
	bin := testenv.Need(t, "snmpd")
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rwcommunity private 127.0.0.1\ndontLogTCPWrappersConnects yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return StartAgent(t, ns, 16162, []string{"SNMP_PERSISTENT_DIR=" + dir, "MIBS=", "MIBDIRS=/nonexistent"},
		bin, "-f", "-Lo", "-I", "-smux", "-C", "-c", conf, "-p", filepath.Join(dir, "snmpd.pid"), "udp:127.0.0.1:16162")
}
