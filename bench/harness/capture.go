package harness

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
	done chan struct{} // closed when tcpdump has exited
	log  *strings.Builder
}

var capSeq atomic.Int32

// StartCapture starts tcpdump on lo (inside ns when not nil) with a BPF
// filter, writing into dir, and returns once tcpdump listens.
func StartCapture(ns *netns.NS, dir, filter string) (*Capture, error) {
	bin := Path("tcpdump")
	if bin == "" {
		return nil, errors.New("tcpdump is not installed (apt-get install tcpdump)")
	}
	file := filepath.Join(dir, fmt.Sprintf("cap%d.pcap", capSeq.Add(1)))
	args := []string{"-i", "lo", "-n", "-U", "--immediate-mode", "-s", "160", "-Z", "root", "-w", file, filter}
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
	c := &Capture{cmd: cmd, file: file, done: make(chan struct{}), log: &strings.Builder{}}
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
		cmd.Wait()
		close(c.done)
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

// WaitActive calls probe, which should send a packet the capture
// matches, until a packet reaches the capture file: tcpdump says it
// listens slightly before the kernel delivers packets to it.
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

// Stop ends the capture, once the packets in flight have reached the
// file (it stops growing for 30 ms, within half a second), and returns
// the packets.
func (c *Capture) Stop() ([]Packet, error) {
	var last int64 = -1
	for i := 0; i < 16; i++ {
		time.Sleep(30 * time.Millisecond)
		st, err := os.Stat(c.file)
		if err != nil || st.Size() == last {
			break
		}
		last = st.Size()
	}
	terminate(c.cmd, c.done, 5*time.Second)
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
