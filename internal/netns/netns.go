// Package netns creates Linux network namespaces, fills them with virtual
// interfaces and runs code or processes inside them. Creating namespaces
// needs root (CAP_SYS_ADMIN); Available reports whether this process can.
package netns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// NS is a named network namespace (/run/netns/NAME) created by New.
type NS struct {
	Name string
}

var seq atomic.Int32

// Available returns nil if this process can create namespaces, or an
// error saying why not.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("needs root (network namespaces)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("needs the ip command (Debian package iproute2)")
	}
	return nil
}

// New creates a namespace named prefix-PID-SEQ with its loopback up.
func New(prefix string) (*NS, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("netns: ip netns add %s: %v: %s", name, err, out)
	}
	ns := &NS{Name: name}
	if err := ns.IPBatch("link set lo up\n"); err != nil {
		ns.Delete()
		return nil, err
	}
	return ns, nil
}

// Delete removes the namespace (and the interfaces in it).
func (ns *NS) Delete() error {
	if ns == nil {
		return nil
	}
	if out, err := exec.Command("ip", "netns", "del", ns.Name).CombinedOutput(); err != nil {
		return fmt.Errorf("netns: ip netns del %s: %v: %s", ns.Name, err, out)
	}
	return nil
}

// IPBatch runs ip commands, one a line, inside the namespace.
func (ns *NS) IPBatch(script string) error {
	cmd := exec.Command("ip", "-n", ns.Name, "-batch", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("netns: ip -batch in %s: %v: %s", ns.Name, err, out)
	}
	return nil
}

// AddVeths adds veth pairs named PREFIXa<i>/PREFIXb<i> for i in [from, to)
// and sets them up: 2*(to-from) interfaces.
func (ns *NS) AddVeths(prefix string, from, to int) error {
	var s strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&s, "link add %sa%d type veth peer name %sb%d\nlink set %sa%d up\nlink set %sb%d up\n",
			prefix, i, prefix, i, prefix, i, prefix, i)
		if s.Len() > 1<<20 {
			if err := ns.IPBatch(s.String()); err != nil {
				return err
			}
			s.Reset()
		}
	}
	if s.Len() == 0 {
		return nil
	}
	return ns.IPBatch(s.String())
}

// Command returns a command that runs name inside the namespace through
// "ip netns exec", which execs it: the process's PID is the command's.
func (ns *NS) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// Do runs fn on an OS thread that has joined the namespace; sockets fn
// opens stay in it. The thread is locked to fn's goroutine and returns to
// its own namespace afterwards; if it cannot, it is discarded, so no other
// goroutine ever runs in the namespace. (Keeping the thread matters to
// processes started with Pdeathsig from it, which a thread's exit kills.)
func (ns *NS) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("netns: %w", err)
			return // the thread exits with the goroutine
		}
		defer unix.Close(self)
		fd, err := unix.Open(filepath.Join("/run/netns", ns.Name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netns: %w", err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("netns: setns %s: %w", ns.Name, err)
			return
		}
		err = fn()
		if unix.Setns(self, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		} // else the thread stays locked and exits with the goroutine
		errc <- err
	}()
	return <-errc
}
