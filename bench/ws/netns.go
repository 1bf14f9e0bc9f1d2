package ws

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// dummyNetns creates a network namespace holding n Ethernet interfaces
// (veth, up), so that the kernel's ifTable has the
// rows the paper's agents had. It needs root (or CAP_SYS_ADMIN and
// CAP_NET_ADMIN) and iproute2; the returned function removes it.
func dummyNetns(n int) (string, func(), error) {
	if _, err := exec.LookPath("ip"); err != nil {
		return "", nil, errors.New("iproute2 (ip) is not installed")
	}
	name := fmt.Sprintf("tsnmp-ws-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("ip netns add: %v: %s", err, strings.TrimSpace(string(out)))
	}
	remove := func() { exec.Command("ip", "netns", "del", name).Run() }
	var script strings.Builder
	script.WriteString("link set lo up\n")
	// veth pairs: Ethernet interfaces every kernel with namespaces has
	// (the dummy driver is often a module that is not loaded).
	for i := 0; i < n; i += 2 {
		if i+1 < n {
			fmt.Fprintf(&script, "link add eth%d type veth peer name eth%d\n", i, i+1)
		} else {
			fmt.Fprintf(&script, "link add eth%d type veth peer name spare%d\n", i, i)
		}
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&script, "link set eth%d address 02:00:00:00:%02x:%02x up\n", i, i>>8, i&0xff)
	}
	cmd := exec.Command("ip", "-n", name, "-batch", "-")
	cmd.Stdin = strings.NewReader(script.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		remove()
		return "", nil, fmt.Errorf("ip -batch: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return name, remove, nil
}

// inNetns runs fn on an OS thread that has joined namespace ns. Sockets
// fn opens stay in the namespace when used from other threads. The
// thread is locked and discarded when fn returns.
func inNetns(ns string, fn func()) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		fd, err := unix.Open(filepath.Join("/run/netns", ns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		fn()
		errc <- nil
	}()
	return <-errc
}
