package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/manager/snmpdtest"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// pauseReloads makes the next reload wait in prepare, once everything
// is built and before its listen addresses are opened: paused is closed
// when it gets there, and it goes on when resume is closed. Start-up is
// not held (armed only once start returned: call it after start).
func pauseReloads(t *testing.T) (paused, resume chan struct{}) {
	paused, resume = make(chan struct{}), make(chan struct{})
	done := false
	testHookPrepared = func() {
		if done {
			return
		}
		done = true
		close(paused)
		<-resume
	}
	t.Cleanup(func() { testHookPrepared = nil })
	return paused, resume
}

// TestReloadKeepsRacingUSMSet: a usmUserTable set (Net-SNMP's snmpusm
// create) that arrives while a reload is between reading the table's
// rows and installing what it made of them is not lost: it waits for the
// reload to install its users, then applies to them, and the user it
// made authenticates after the reload and after the next one.
func TestReloadKeepsRacingUSMSet(t *testing.T) {
	testenv.Need(t, "snmpusm")
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	conf := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(conf, []byte("createUser admin SHA authpass1 AES privpass1\nrwuser admin priv\nrwuser net priv\nagentaddress "+listen+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	d, err := start(&options{snmpdConf: conf, stateDir: t.TempDir(), quiet: true}, slog.New(slog.NewTextHandler(&log, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	t.Setenv("SNMPCONFPATH", t.TempDir())
	works := func(user string) bool {
		r := snmpdtest.Tool(t, "snmpget", "-v3", "-u", user, "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1",
			"-r", "0", "-t", "5", listen, "sysObjectID.0")
		return r.Code == 0
	}
	if works("net") {
		t.Fatal("net answered before it was created")
	}

	paused, resume := pauseReloads(t)
	reloaded := make(chan error, 1)
	go func() { reloaded <- d.reload() }()
	<-paused
	// The set, while the reload has read the rows and not yet installed
	// what it made of them.
	set := make(chan snmpdtest.Result, 1)
	go func() {
		set <- snmpdtest.Tool(t, "snmpusm", "-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1",
			"-r", "0", "-t", "30", listen, "create", "net", "admin")
	}()
	var r snmpdtest.Result
	early := false
	select {
	case r = <-set:
		early = true
	case <-time.After(2 * time.Second):
	}
	close(resume)
	if err := <-reloaded; err != nil {
		t.Fatalf("reload: %v\n%s", err, log.String())
	}
	if !early {
		r = <-set
	}
	if r.Code != 0 {
		t.Fatalf("snmpusm create: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if early {
		t.Errorf("the usmUserTable set was applied while a reload held the rows it read (%q): it should wait for the reload's commit", r.Stdout)
	}
	if !works("net") {
		t.Errorf("the user snmpusm created while a reload ran does not authenticate after the reload: the set was lost\n%s", log.String())
	}
	if err := d.reload(); err != nil {
		t.Fatal(err)
	}
	if !works("net") {
		t.Errorf("the user snmpusm created while a reload ran does not authenticate after the next reload: usm-users.conf lost it\n%s", log.String())
	}
}

// TestReloadRefusedNeverAuthenticates: while a reload that will be
// refused (its last listen address is in use) waits between building
// its users and opening its addresses, the user only its file defines
// gets no answer; the running user answers throughout.
func TestReloadRefusedNeverAuthenticates(t *testing.T) {
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	common := "createUser ops SHA-256 authpass123 AES privpass123\nrouser ops authpriv\nrouser dev authpriv\nagentaddress " + listen + "\n"
	conf := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(conf, []byte(common), 0o600); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	d, err := start(&options{snmpdConf: conf, stateDir: t.TempDir(), quiet: true}, slog.New(slog.NewTextHandler(&log, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	busy, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	refused := common + "createUser dev SHA-256 authpass123 AES privpass123\n" +
		fmt.Sprintf("agentaddress %s,udp:127.0.0.1:%d\n", listen, busy.LocalAddr().(*net.UDPAddr).Port)
	if err := os.WriteFile(conf, []byte(refused), 0o600); err != nil {
		t.Fatal(err)
	}
	session := func(user string) *manager.Session {
		s, err := manager.Dial(context.Background(), listen, manager.Config{Version: snmp.V3, User: user, Level: snmp.AuthPriv,
			AuthProtocol: usm.AuthSHA256, AuthPassword: "authpass123", PrivProtocol: usm.PrivAES128, PrivPassword: "privpass123",
			Timeout: time.Second, Retries: 0})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	ops, dev := session("ops"), session("dev")
	if _, err := ops.Get(context.Background(), sysDescr0); err != nil {
		t.Fatalf("ops before the reload: %v", err)
	}

	paused, resume := pauseReloads(t)
	reloaded := make(chan error, 1)
	go func() { reloaded <- d.reload() }()
	<-paused
	for i := range 3 {
		if _, err := dev.Get(context.Background(), sysDescr0); err == nil {
			t.Errorf("probe %d during the refused reload: dev, whom only the refused file defines, got an answer", i)
		}
		if _, err := ops.Get(context.Background(), sysDescr0); err != nil {
			t.Errorf("probe %d during the refused reload: ops: %v", i, err)
		}
	}
	close(resume)
	if err := <-reloaded; err == nil {
		t.Fatal("a reload naming an address in use was applied")
	}
	if _, err := dev.Get(context.Background(), sysDescr0); err == nil {
		t.Error("after the refused reload dev got an answer")
	}
	if _, err := ops.Get(context.Background(), sysDescr0); err != nil {
		t.Errorf("ops after the refused reload: %v", err)
	}
}

// TestReloadKeepsRacingVACMSet: a vacmViewTreeFamilyTable set (Net-SNMP's
// snmpset) that arrives while a reload is between reading the rows SNMP
// made and installing the VACM it built from them is not lost: it waits,
// then applies to the reloaded VACM.
func TestReloadKeepsRacingVACMSet(t *testing.T) {
	testenv.Need(t, "snmpset")
	// The MIB directory is looked up here, where a missing one can end the
	// test; the snmpset below runs on a goroutine of its own.
	snmpdtest.MIBDir(t)
	listen := fmt.Sprintf("udp:127.0.0.1:%d", testenv.FreePort(t))
	conf := filepath.Join(t.TempDir(), "snmpd.conf")
	if err := os.WriteFile(conf, []byte("createUser admin SHA authpass1 AES privpass1\ngroup gadmin usm admin\nview vall included .1\n"+
		"access gadmin \"\" usm priv exact vall vall none\nagentaddress "+listen+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	d, err := start(&options{snmpdConf: conf, stateDir: t.TempDir(), quiet: true}, slog.New(slog.NewTextHandler(&log, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	t.Setenv("SNMPCONFPATH", t.TempDir())
	admin := []string{"-Ob", "-OQ", "-v3", "-u", "admin", "-l", "authPriv", "-a", "SHA", "-A", "authpass1", "-x", "AES", "-X", "privpass1", listen}
	// vacmViewTreeFamilyStatus of view "vkeep", subtree 1.3.6.1.2.1.2.
	const status = "1.3.6.1.6.3.16.1.5.2.1.6.5.118.107.101.101.112.7.1.3.6.1.2.1.2"
	get := func() string {
		r := snmpdtest.Tool(t, "snmpget", append([]string{"-r", "0", "-t", "5"}, append(admin, status)...)...)
		return strings.TrimSpace(r.Stdout + r.Stderr)
	}

	paused, resume := pauseReloads(t)
	reloaded := make(chan error, 1)
	go func() { reloaded <- d.reload() }()
	<-paused
	set := make(chan snmpdtest.Result, 1)
	go func() {
		set <- snmpdtest.Tool(t, "snmpset", append([]string{"-r", "0", "-t", "30"}, append(admin, status, "i", "4")...)...)
	}()
	var r snmpdtest.Result
	early := false
	select {
	case r = <-set:
		early = true
	case <-time.After(2 * time.Second):
	}
	close(resume)
	if err := <-reloaded; err != nil {
		t.Fatalf("reload: %v\n%s", err, log.String())
	}
	if !early {
		r = <-set
	}
	if r.Code != 0 {
		t.Fatalf("snmpset createAndGo: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if early {
		t.Errorf("the VACM set was applied while a reload held the rows it read (%q): it should wait for the reload's commit", r.Stdout)
	}
	if got := get(); !strings.HasSuffix(got, "= active") {
		t.Errorf("the view family snmpset created while a reload ran, after the reload: %q, want active: the set was lost\n%s", got, log.String())
	}
}
