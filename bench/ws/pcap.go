package ws

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
	"syscall"
	"time"
)

// Packet is one captured IPv4 packet on the loopback interface.
type Packet struct {
	Time    time.Time
	IPLen   int // IPv4 total length: what the packet costs at the IP level
	Proto   uint8
	SrcPort uint16
	DstPort uint16
	Payload int // TCP or UDP payload bytes
	Flags   uint8
}

// TCP flags.
const (
	flagFIN = 0x01
	flagSYN = 0x02
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

// ReadPcap parses a pcap file of Ethernet (lo) or raw IPv4 frames and
// returns its IPv4 TCP and UDP packets.
func ReadPcap(r io.Reader) ([]Packet, error) {
	br := bufio.NewReader(r)
	var gh [24]byte
	if _, err := io.ReadFull(br, gh[:]); err != nil {
		return nil, fmt.Errorf("pcap: %w", err)
	}
	var bo binary.ByteOrder
	nano := false
	switch binary.LittleEndian.Uint32(gh[:4]) {
	case 0xa1b2c3d4:
		bo = binary.LittleEndian
	case 0xa1b23c4d:
		bo, nano = binary.LittleEndian, true
	default:
		switch binary.BigEndian.Uint32(gh[:4]) {
		case 0xa1b2c3d4:
			bo = binary.BigEndian
		case 0xa1b23c4d:
			bo, nano = binary.BigEndian, true
		default:
			return nil, errors.New("pcap: not a pcap file")
		}
	}
	link := bo.Uint32(gh[20:24])
	var skip int
	switch link {
	case 1: // Ethernet
		skip = 14
	case 101, 228: // raw IPv4
		skip = 0
	case 113: // Linux cooked
		skip = 16
	default:
		return nil, fmt.Errorf("pcap: link type %d not supported", link)
	}
	var pkts []Packet
	var rh [16]byte
	buf := make([]byte, 0, 256)
	for {
		if _, err := io.ReadFull(br, rh[:]); err == io.EOF {
			return pkts, nil
		} else if err != nil {
			return pkts, fmt.Errorf("pcap: truncated record header: %w", err)
		}
		sec, frac := int64(bo.Uint32(rh[0:4])), int64(bo.Uint32(rh[4:8]))
		incl := int(bo.Uint32(rh[8:12]))
		if incl > 1<<18 {
			return pkts, errors.New("pcap: record too large")
		}
		if cap(buf) < incl {
			buf = make([]byte, incl)
		}
		data := buf[:incl]
		if _, err := io.ReadFull(br, data); err != nil {
			return pkts, fmt.Errorf("pcap: truncated record: %w", err)
		}
		if !nano {
			frac *= 1000
		}
		if len(data) < skip+20 {
			continue
		}
		ip := data[skip:]
		if ip[0]>>4 != 4 {
			continue
		}
		ihl := int(ip[0]&15) * 4
		p := Packet{Time: time.Unix(sec, frac), IPLen: int(binary.BigEndian.Uint16(ip[2:4])), Proto: ip[9]}
		if len(ip) < ihl+8 {
			continue
		}
		l4 := ip[ihl:]
		p.SrcPort, p.DstPort = binary.BigEndian.Uint16(l4[0:2]), binary.BigEndian.Uint16(l4[2:4])
		switch p.Proto {
		case 6:
			if len(l4) < 14 {
				continue
			}
			doff := int(l4[12]>>4) * 4
			p.Flags = l4[13]
			p.Payload = p.IPLen - ihl - doff
		case 17:
			p.Payload = p.IPLen - ihl - 8
		default:
			continue
		}
		pkts = append(pkts, p)
	}
}
