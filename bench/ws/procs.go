package ws

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tsnmp/tsnmp/internal/localhost"
)

// proc is an agent process started for the experiment; it is stopped by
// its PID.
type proc struct {
	cmd  *exec.Cmd
	Addr string // host:port of its UDP listener
	log  strings.Builder
	dir  string // removed by Stop when set
}

// Pid returns the process ID.
func (p *proc) Pid() int { return p.cmd.Process.Pid }

// Stop terminates the process.
func (p *proc) Stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}

// startAgent runs an agent and waits until it answers SNMP at addr (in
// network namespace ns when not empty).
func startAgent(addr, ns string, cmd *exec.Cmd) (*proc, error) {
	p := &proc{cmd: cmd, Addr: addr}
	cmd.Stdout, cmd.Stderr = &p.log, &p.log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	wait := func() error { return localhost.WaitSNMP(addr, 200) }
	if ns != "" {
		wait = func() error {
			var werr error
			if err := inNetns(ns, func() { werr = localhost.WaitSNMP(addr, 200) }); err != nil {
				return err
			}
			return werr
		}
	}
	if err := wait(); err != nil {
		p.Stop()
		return nil, fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, p.log.String())
	}
	return p, nil
}

// startNetSNMP starts Net-SNMP's snmpd with community public on loopback
// (of network namespace ns when not empty).
func startNetSNMP(ns string) (*proc, error) {
	bin, err := exec.LookPath("snmpd")
	if err != nil {
		bin = "/usr/sbin/snmpd"
		if _, err := os.Stat(bin); err != nil {
			return nil, errors.New("Net-SNMP's snmpd is not installed (apt-get install snmpd)")
		}
	}
	dir, err := os.MkdirTemp("", "ws-snmpd")
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rocommunity public 127.0.0.1\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := localhost.FreePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{bin, "-f", "-Lo", "-C", "-c", conf, "-p", filepath.Join(dir, "snmpd.pid"), "udp:" + addr, "tcp:" + addr}
	if ns != "" {
		args = append([]string{"ip", "netns", "exec", ns}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+dir, "MIBS=", "MIBDIRS=/dev/null")
	p, err := startAgent(addr, ns, cmd)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p.dir = dir
	return p, nil
}

// startTsnmpd starts a tsnmpd binary with an snmpd.conf on loopback.
func startTsnmpd(bin, conf, stateDir string) (*proc, error) {
	port, err := localhost.FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--snmpd-conf", conf, "--state-dir", stateDir, "--quiet", "--log-level", "warn",
		"--listen", "udp:"+addr, "--listen", "tcp:"+addr)
	return startAgent(addr, "", cmd)
}
