package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
	tssh "github.com/tsnmp/tsnmp/ssh"
	sshtm "github.com/tsnmp/tsnmp/transport/ssh"
)

// TestDamagedState starts tsnmpd on damaged state directories: a lost
// engine ID or boot counter refuses the start with the file and the way
// out; --regenerate-engine-id starts a new engine with an error logged;
// a damaged system.conf is read with a warning naming it.
func TestDamagedState(t *testing.T) {
	bin := buildDaemon(t)
	const oldID = "80001f8805aabbccddeeff0011"
	run := func(t *testing.T, dir string, extra ...string) (string, error) {
		t.Helper()
		args := append([]string{"--state-dir", dir, "--listen", fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), "--quiet"}, extra...)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		return string(out), err
	}
	for _, c := range []struct{ name, content, want string }{
		{"empty engine.conf", "", "holds no engineID"},
		{"engine.conf without boots", "engineID " + oldID + "\n", "holds no engineBoots"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "engine.conf")
			os.WriteFile(path, []byte(c.content), 0o600)
			os.WriteFile(filepath.Join(dir, "usm-users.conf"), []byte("usmUser 6f7073 SHA-256 none 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff -\n"), 0o600)
			out, err := run(t, dir)
			if err == nil {
				t.Fatalf("started on a lost engine state:\n%s", out)
			}
			for _, w := range []string{path, c.want, "--regenerate-engine-id"} {
				if !strings.Contains(out, w) {
					t.Errorf("message does not say %q:\n%s", w, out)
				}
			}
			if data, _ := os.ReadFile(path); string(data) != c.content {
				t.Fatalf("refused start rewrote engine.conf: %q", data)
			}
			// With the flag: a new engine ID, boots 1, an ERROR line, and
			// the keys of the old ID set aside.
			p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), "--quiet", "--regenerate-engine-id")
			if id := readEngineID(t, dir); id == oldID || readBoots(t, dir) != 1 {
				t.Errorf("regenerated state: engineID %s boots %d", id, readBoots(t, dir))
			}
			if !strings.Contains(p.log.String(), "level=ERROR") || !strings.Contains(p.log.String(), path) {
				t.Errorf("no ERROR naming %s:\n%s", path, p.log)
			}
			if _, err := os.Stat(filepath.Join(dir, "usm-users.conf.old")); err != nil || !strings.Contains(p.log.String(), "usm-users.conf") {
				t.Errorf("old USM keys not set aside: %v\n%s", err, p.log)
			}
		})
	}
	t.Run("engine.conf lost beside usm-users.conf", func(t *testing.T) {
		dir := t.TempDir()
		usmPath := filepath.Join(dir, "usm-users.conf")
		// with a row of another engine (a notification receiver's user),
		// which stays.
		remote := "usmRow 80001f880472656d 74726170 74726170 1 3 true SHA none 00112233445566778899aabbccddeeff00112233 - - -"
		os.WriteFile(usmPath, []byte("engineID "+oldID+"\nusmUser 6f7073 SHA-256 none 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff -\n"+remote+"\n"), 0o600)
		p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t)), "--quiet")
		log := p.log.String()
		for _, w := range []string{filepath.Join(dir, "engine.conf"), usmPath} {
			if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "file="+w) {
				t.Errorf("no warning naming %s:\n%s", w, log)
			}
		}
		if old, err := os.ReadFile(usmPath + ".old"); err != nil || !strings.Contains(string(old), "usmUser 6f7073") {
			t.Errorf("keys of the old engine ID not set aside: %v", err)
		}
		if data, _ := os.ReadFile(usmPath); strings.Contains(string(data), "6f7073") || !strings.Contains(string(data), "engineID "+readEngineID(t, dir)) || !strings.Contains(string(data), "usmRow 80001f880472656d 74726170 ") {
			t.Errorf("usm-users.conf after the start:\n%s\nlog:\n%s", data, p.log)
		}
	})
	t.Run("damaged system.conf", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "system.conf")
		os.WriteFile(path, []byte("sysContact \"ops\"\nsysLocation \"rack\x00\ngarbage\n"), 0o600)
		port := testenv.FreePort(t)
		p := startDaemon(t, bin, nil, "--state-dir", dir, "--listen", fmt.Sprintf("udp:127.0.0.1:%d", port), "--quiet")
		for _, line := range []string{"line=2", "line=3"} {
			if !strings.Contains(p.log.String(), "level=WARN") || !strings.Contains(p.log.String(), "file="+path+" "+line) {
				t.Errorf("no warning for %s %s:\n%s", path, line, p.log)
			}
		}
		s, err := manager.Dial(context.Background(), fmt.Sprintf("udp:127.0.0.1:%d", port), manager.Config{Version: snmp.V2c, Community: "public"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r, err := s.Get(context.Background(), snmp.OID{1, 3, 6, 1, 2, 1, 1, 4, 0})
		if err != nil || string(r.VarBinds[0].Value.Bytes) != "ops" {
			t.Errorf("sysContact from the good line: %v %v", r, err)
		}
	})
}

// TestTicketKeysWarn: SSH ticket keys that cannot be loaded or saved are
// replaced with a warning naming the file.
func TestTicketKeysWarn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sshtm.TicketKeysFile)
	os.WriteFile(path, []byte("not a key\n"), 0o600)
	var buf bytes.Buffer
	k := &loggedTicketKeys{FileTicketKeys: sshtm.FileTicketKeys{Path: path}, log: slog.New(slog.NewTextHandler(&buf, nil))}
	if _, err := k.LoadTicketKeys(); err == nil {
		t.Fatal("damaged ticket keys loaded")
	}
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), path) {
		t.Errorf("load failure not logged:\n%s", buf.String())
	}
	buf.Reset()
	k.Path = filepath.Join(dir, "missing-dir", sshtm.TicketKeysFile)
	if err := k.SaveTicketKeys([]tssh.TicketKey{{}}); err == nil {
		t.Fatal("save into a missing directory succeeded")
	}
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), k.Path) {
		t.Errorf("save failure not logged:\n%s", buf.String())
	}
}
