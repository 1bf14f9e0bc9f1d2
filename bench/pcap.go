package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/pcap"
)

// Packet is one captured frame.
type Packet = pcap.Packet

// ReadPcap reads a pcap file as tcpdump writes it.
func ReadPcap(r io.Reader) ([]Packet, error) { return pcap.Read(r) }

// Capture is a running tcpdump on the loopback interface.
type Capture struct {
	cmd  *exec.Cmd
	file string
	done chan error
	log  *strings.Builder
}

var capSeq atomic.Int32

// StartCapture starts tcpdump on lo (inside ns when not nil) with a BPF
// filter, writing into dir, and returns once tcpdump listens.
func StartCapture(ns *netns.NS, dir, filter string) (*Capture, error) {
	bin := peerPath("tcpdump")
	if bin == "" {
		return nil, errors.New("tcpdump is not installed (apt-get install tcpdump)")
	}
	file := filepath.Join(dir, fmt.Sprintf("cap%d.pcap", capSeq.Add(1)))
	args := []string{"-i", "lo", "-n", "-U", "--immediate-mode", "-s", "128", "-Z", "root", "-w", file, filter}
	cmd := exec.Command(bin, args...)
	if ns != nil {
		cmd = ns.Command(bin, args...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Capture{cmd: cmd, file: file, done: make(chan error, 1), log: &strings.Builder{}}
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
		c.done <- cmd.Wait()
	}()
	select {
	case ok := <-ready:
		if ok {
			return c, nil
		}
	case <-time.After(10 * time.Second):
	}
	cmd.Process.Kill()
	<-c.done
	return nil, fmt.Errorf("tcpdump did not start: %s", c.log.String())
}

// Stop ends the capture (after a short pause for packets in flight) and
// returns the packets.
func (c *Capture) Stop() ([]Packet, error) {
	time.Sleep(60 * time.Millisecond)
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
	f, err := os.Open(c.file)
	if err != nil {
		return nil, err
	}
	defer os.Remove(c.file)
	defer f.Close()
	return ReadPcap(f)
}

// Totals sums frame bytes.
func Totals(ps []Packet) (bytes, packets int) {
	for _, p := range ps {
		bytes += p.Len
	}
	return bytes, len(ps)
}
