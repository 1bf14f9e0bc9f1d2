package system

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestInteropNetSNMPDefaults checks the defaults (sysDescr from uname,
// sysObjectID, sysName from the host name) against what Net-SNMP's snmpd
// reports on this machine.
func TestInteropNetSNMPDefaults(t *testing.T) {
	for _, p := range []string{"snmpd", "snmpget"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(p + " not found (Debian packages snmp, snmpd)")
			}
			t.Skip(p + " not found (Debian packages snmp, snmpd)")
		}
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()

	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rocommunity public 127.0.0.1\nsysservices 72\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	snmpd := exec.Command("snmpd", "-f", "-Lo", "-C", "-c", conf, "-p", filepath.Join(dir, "snmpd.pid"), "udp:"+addr)
	snmpd.Stdout, snmpd.Stderr = &log, &log
	if err := snmpd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		snmpd.Process.Kill()
		snmpd.Wait()
	})

	objects := []string{"1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.1.2.0", "1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.1.7.0"}
	var out []byte
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		args := append([]string{"-v2c", "-c", "public", "-On", "-Oq", "-t", "0.2", "-r", "0", addr}, objects...)
		out, err = exec.CommandContext(ctx, "snmpget", args...).Output()
		cancel()
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("snmpd did not answer: %v; its log:\n%s", err, log.String())
	}
	theirs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		o, v, _ := strings.Cut(line, " ")
		theirs[strings.TrimPrefix(o, ".")] = strings.Trim(v, `"`)
	}

	var tr mib.Tree
	New(Config{}).Register(&tr)
	r := mib.NewRequest(context.Background(), time.Now())
	defer r.Release()
	for _, o := range objects {
		v := tr.Get(r, snmp.MustParseOID(o))
		var ours string
		switch v.Type {
		case snmp.OctetString:
			ours = string(v.Bytes)
		case snmp.ObjectIdentifier:
			ours = "." + v.OID.String()
		case snmp.Integer:
			ours = strconv.FormatInt(v.Int(), 10)
		default:
			ours = v.Type.String()
		}
		if ours != theirs[o] {
			t.Errorf("%s: tsnmp %q, Net-SNMP %q", o, ours, theirs[o])
		}
	}
}
