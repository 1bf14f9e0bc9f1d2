package ws

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tsnmp/tsnmp/internal/pcap"
)

// Packet is one captured packet.
type Packet = pcap.Packet

const (
	flagFIN = pcap.FlagFIN
	flagSYN = pcap.FlagSYN
)

// Capture is a running tcpdump on lo.
type Capture struct {
	cmd  *exec.Cmd
	file string
	dir  string
	log  strings.Builder
}

// StartCapture runs tcpdump on lo for the given TCP and UDP ports. It
// needs tcpdump and the right to capture (root or CAP_NET_RAW).
func StartCapture(ports ...int) (*Capture, error) {
	bin, err := exec.LookPath("tcpdump")
	if err != nil {
		for _, p := range []string{"/usr/bin/tcpdump", "/usr/sbin/tcpdump"} {
			if _, e := os.Stat(p); e == nil {
				bin, err = p, nil
			}
		}
		if err != nil {
			return nil, errors.New("tcpdump is not installed")
		}
	}
	dir, err := os.MkdirTemp("", "ws-capture")
	if err != nil {
		return nil, err
	}
	var filter []string
	for _, p := range ports {
		filter = append(filter, fmt.Sprintf("port %d", p))
	}
	c := &Capture{file: filepath.Join(dir, "lo.pcap"), dir: dir}
	c.cmd = exec.Command(bin, append([]string{"-i", "lo", "-n", "--immediate-mode", "-s", "160", "-U", "-w", c.file, "ip", "and", "("},
		append(strings.Fields(strings.Join(filter, " or ")), ")")...)...)
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			c.log.WriteString(sc.Text() + "\n")
			if !sent && strings.Contains(sc.Text(), "listening on") {
				sent = true
				ready <- true
			}
		}
		if !sent {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			c.cmd.Wait()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("tcpdump: %s", strings.TrimSpace(c.log.String()))
		}
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		c.cmd.Wait()
		os.RemoveAll(dir)
		return nil, errors.New("tcpdump did not start")
	}
	return c, nil
}

// WaitActive calls probe (which should send a packet the capture
// matches) until a packet reaches the capture file: "listening on" is
// printed slightly before the kernel delivers packets.
func (c *Capture) WaitActive(probe func()) error {
	for i := 0; i < 100; i++ {
		probe()
		time.Sleep(20 * time.Millisecond)
		if st, err := os.Stat(c.file); err == nil && st.Size() > 24 {
			return nil
		}
	}
	return errors.New("tcpdump captures nothing")
}

// Stop ends the capture and returns its packets.
func (c *Capture) Stop() ([]Packet, error) {
	defer os.RemoveAll(c.dir)
	// Let the last packets reach the file, then stop the tcpdump we
	// started, by its PID.
	time.Sleep(200 * time.Millisecond)
	c.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
	f, err := os.Open(c.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadPcap(f)
}

// ReadPcap parses a pcap file and returns its IPv4 TCP and UDP packets.
func ReadPcap(r io.Reader) ([]Packet, error) {
	all, err := pcap.Read(r)
	out := all[:0]
	for _, p := range all {
		if p.Version == 4 && (p.Proto == 6 || p.Proto == 17) {
			out = append(out, p)
		}
	}
	return out, err
}
