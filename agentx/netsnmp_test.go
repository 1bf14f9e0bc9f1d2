package agentx

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// startMaster serves a Master for tree on a Unix socket in a temporary
// directory and returns it and the socket path.
func startMaster(t testing.TB, tree *mib.Tree, cfg Config) (*Master, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "agentx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "master")
	if cfg.Static == nil {
		cfg.Static = tree.Prefixes
	}
	m := New(cfg)
	tree.Overlay = m
	l, err := ListenUnix(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	go m.Serve(l)
	t.Cleanup(m.Close)
	return m, path
}

// startSnmpdSubagent runs Net-SNMP's snmpd as an AgentX subagent of the
// master at socket, with the extra configuration lines conf, and waits
// until it registered prefix.
func startSnmpdSubagent(t testing.TB, m *Master, socket, conf string, prefix snmp.OID) *exec.Cmd {
	t.Helper()
	return startSubagentBin(t, testenv.Need(t, "snmpd"), m, socket, conf, prefix)
}

// startSubagentBin is startSnmpdSubagent with the snmpd binary snmpd.
func startSubagentBin(t testing.TB, snmpd string, m *Master, socket, conf string, prefix snmp.OID) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	cf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(cf, []byte("agentXSocket "+socket+"\n"+conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(snmpd, "-f", "-Lo", "-X", "-x", socket, "-C", "-c", cf, "-M", "/nonexistent", "-m", "")
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+dir, "MIBS=", "HOME="+dir)
	out := &testenv.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("snmpd subagent output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if reg, inside, _ := m.Region("", prefix); inside && reg.Lo != nil {
			return cmd
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("snmpd subagent did not register %s in 10s; output:\n%s", prefix, out.String())
	return nil
}

func walk(tree *mib.Tree, from snmp.OID, limit int) []snmp.VarBind {
	var out []snmp.VarBind
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	oid := from
	for len(out) < limit {
		vb, ok := tree.Next(r, oid)
		if !ok || !vb.Name.HasPrefix(from) {
			break
		}
		vb.Name = vb.Name.Clone()
		out = append(out, vb)
		oid = vb.Name
	}
	return out
}

func TestNetSNMPSubagentWalk(t *testing.T) {
	var tree mib.Tree
	tree.Register(snmp.OID{1, 3, 6, 1, 4, 1, 8072, 9999}, &mib.Scalars{Prefix: snmp.OID{1, 3, 6, 1, 4, 1, 8072, 9999}, Objects: []mib.Scalar{
		{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.StringValue("tsnmpd") }},
	}})
	m, sock := startMaster(t, &tree, Config{})
	ext := snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3, 2, 4}
	startSnmpdSubagent(t, m, sock, "extend hello /bin/echo hello world\n", ext)
	vbs := walk(&tree, snmp.OID{1, 3, 6, 1, 4, 1, 8072, 1, 3}, 1000)
	vbs = append(vbs, walk(&tree, snmp.OID{1, 3, 6, 1, 4, 1, 8072, 9999}, 10)...)
	var got []string
	for _, vb := range vbs {
		v := fmt.Sprint(vb.Value.Num)
		if vb.Value.Type == snmp.OctetString {
			v = string(vb.Value.Bytes)
		}
		got = append(got, fmt.Sprintf("%s %s", vb.Name, v))
	}
	t.Logf("%d varbinds", len(vbs))
	s := strings.Join(got, "\n")
	if !strings.Contains(s, "1.3.6.1.4.1.8072.1.3.2.4.1.2.5.104.101.108.108.111.1 hello world") || !strings.Contains(s, "1.3.6.1.4.1.8072.9999.1.0") {
		t.Fatalf("walk:\n%s", s)
	}
}
