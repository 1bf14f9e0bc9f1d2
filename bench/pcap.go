package bench

import (
	"bufio"
	"encoding/binary"
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
)

// Packet is one captured frame.
type Packet struct {
	Len              int // frame length on the wire (Ethernet header included)
	Proto            int // 6 TCP, 17 UDP
	SrcPort, DstPort int
	Payload          int // bytes above TCP or UDP
}

// ReadPcap reads a classic pcap file of Ethernet (loopback) frames.
func ReadPcap(r io.Reader) ([]Packet, error) {
	br := bufio.NewReader(r)
	var gh [24]byte
	if _, err := io.ReadFull(br, gh[:]); err != nil {
		return nil, fmt.Errorf("pcap: header: %w", err)
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(gh[:4]) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		bo = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		bo = binary.BigEndian
	default:
		return nil, errors.New("pcap: not a pcap file")
	}
	if lt := bo.Uint32(gh[20:24]); lt != 1 {
		return nil, fmt.Errorf("pcap: link type %d, want Ethernet (1)", lt)
	}
	var out []Packet
	var rh [16]byte
	for {
		if _, err := io.ReadFull(br, rh[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return out, nil // tcpdump killed mid-record leaves a tail
			}
			return out, err
		}
		incl, orig := int(bo.Uint32(rh[8:12])), int(bo.Uint32(rh[12:16]))
		if incl > 1<<18 {
			return out, errors.New("pcap: bad record length")
		}
		data := make([]byte, incl)
		if _, err := io.ReadFull(br, data); err != nil {
			return out, nil
		}
		p := Packet{Len: orig}
		parseFrame(data, orig, &p)
		out = append(out, p)
	}
}

func parseFrame(d []byte, orig int, p *Packet) {
	if len(d) < 14 {
		return
	}
	et := binary.BigEndian.Uint16(d[12:14])
	d = d[14:]
	var l4 []byte
	var l4len int
	switch et {
	case 0x0800:
		if len(d) < 20 {
			return
		}
		ihl := int(d[0]&0xf) * 4
		total := int(binary.BigEndian.Uint16(d[2:4]))
		p.Proto = int(d[9])
		if len(d) < ihl {
			return
		}
		l4, l4len = d[ihl:], total-ihl
	case 0x86dd:
		if len(d) < 40 {
			return
		}
		p.Proto = int(d[6])
		l4, l4len = d[40:], int(binary.BigEndian.Uint16(d[4:6]))
	default:
		return
	}
	if len(l4) < 4 {
		return
	}
	p.SrcPort, p.DstPort = int(binary.BigEndian.Uint16(l4[0:2])), int(binary.BigEndian.Uint16(l4[2:4]))
	switch p.Proto {
	case 17:
		p.Payload = l4len - 8
	case 6:
		if len(l4) >= 13 {
			p.Payload = l4len - int(l4[12]>>4)*4
		}
	}
}

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
