package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
)

// dumpPacket writes a message sent or received as Net-SNMP's -d does: a
// header naming the transport addresses, then 16 bytes a line, in hex
// and as text.
func dumpPacket(w io.Writer, network string, sent bool, msg []byte, local, remote net.Addr) {
	var b strings.Builder
	addr := transportAddr(network, sent, local, remote)
	if sent {
		fmt.Fprintf(&b, "\nSending %d bytes to %s\n", len(msg), addr)
	} else {
		fmt.Fprintf(&b, "\nReceived %d byte packet from %s\n", len(msg), addr)
	}
	b.WriteString(hexDump(msg))
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

// hexDump formats bytes as Net-SNMP's xdump: decimal offset, four
// groups of four bytes, the printable characters.
func hexDump(msg []byte) string {
	var b strings.Builder
	for off := 0; off < len(msg); off += 16 {
		line := msg[off:min(off+16, len(msg))]
		fmt.Fprintf(&b, "%04d: ", off)
		n := 6
		for i, c := range line {
			fmt.Fprintf(&b, "%02X ", c)
			n += 3
			if i%4 == 3 {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(strings.Repeat(" ", 60-n))
		for _, c := range line {
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				b.WriteByte('.')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// transportAddr names a connection as Net-SNMP's transports do (sent
// tells a message sent from one received):
// "UDP: [remote]:port->[0.0.0.0]:localport" (its IPv4 sockets are not
// bound to an address), "TCP: [remote]:port->[0.0.0.0]:0",
// "UDP/IPv6: [remote]:port"; as Net-SNMP 5.9.5 names them, a TLS
// connection "TLSTCP: [0.0.0.0]:0->[0.0.0.0]:0" (its TLS transport has
// no addresses to show), a DTLS message sent by its UDP socket
// "UDP: [remote]:port->[0.0.0.0]:localport" and one received
// "DTLSUDP: [remote]:port->[local]:localport".
func transportAddr(network string, sent bool, local, remote net.Addr) string {
	host, port := splitAddr(remote)
	lhost, lport := splitAddr(local)
	v6 := strings.Contains(host, ":")
	switch {
	case strings.HasPrefix(network, "udp") && v6:
		return fmt.Sprintf("UDP/IPv6: [%s]:%s", host, port)
	case strings.HasPrefix(network, "tcp") && v6:
		return fmt.Sprintf("TCP/IPv6: [%s]:%s", host, port)
	case strings.HasPrefix(network, "tcp"):
		return fmt.Sprintf("TCP: [%s]:%s->[0.0.0.0]:0", host, port)
	case strings.HasPrefix(network, "udp"):
		return fmt.Sprintf("UDP: [%s]:%s->[0.0.0.0]:%s", host, port, lport)
	case network == "tls" && !v6:
		return "TLSTCP: [0.0.0.0]:0->[0.0.0.0]:0"
	case network == "tls":
		return fmt.Sprintf("TLSTCP: [%s]:%s", host, port)
	case network == "dtls" && !v6 && sent:
		return fmt.Sprintf("UDP: [%s]:%s->[0.0.0.0]:%s", host, port, lport)
	case network == "dtls" && !v6:
		if ip := net.ParseIP(lhost); ip == nil || ip.IsUnspecified() {
			lhost = sourceFor(host, port)
		}
		return fmt.Sprintf("DTLSUDP: [%s]:%s->[%s]:%s", host, port, lhost, lport)
	case network == "dtls":
		return fmt.Sprintf("DTLSUDP: [%s]:%s", host, port)
	}
	return fmt.Sprintf("%s: [%s]:%s", strings.ToUpper(network), host, port)
}

// sourceFor returns the address a message to host:port leaves from
// (the address a reply arrives at, which Net-SNMP reads with each
// message), as the kernel would choose it; connecting a UDP socket sends
// nothing.
func sourceFor(host, port string) string {
	if v, ok := sources.Load(host); ok {
		return v.(string)
	}
	src := "0.0.0.0"
	if c, err := net.Dial("udp4", net.JoinHostPort(host, port)); err == nil {
		src, _ = splitAddr(c.LocalAddr())
		c.Close()
	}
	sources.Store(host, src)
	return src
}

var sources sync.Map // host -> sourceFor's answer

func splitAddr(a net.Addr) (string, string) {
	if a == nil {
		return "", "0"
	}
	h, p, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String(), "0"
	}
	return h, p
}

// debugHandler prints debug messages as Net-SNMP's -D does, "token: text",
// for the tokens asked for (a message's token is the text before its
// first colon: usm, tls, dtls, ssh, mibs, snmp.conf…); all when none
// were named. Attributes follow as key=value.
type debugHandler struct {
	w      io.Writer
	mu     *sync.Mutex
	tokens []string
	attrs  []slog.Attr
}

func newDebugLogger(w io.Writer, tokens string) *slog.Logger {
	h := &debugHandler{w: w, mu: &sync.Mutex{}}
	for _, t := range strings.Split(tokens, ",") {
		if t = strings.TrimSpace(t); t != "" && t != "ALL" {
			h.tokens = append(h.tokens, t)
		}
	}
	return slog.New(h)
}

func (h *debugHandler) Enabled(context.Context, slog.Level) bool { return true }

// wants reports whether a message of token tok is asked for: tokens
// match it or a prefix of it, and "-t" turns t off.
func (h *debugHandler) wants(tok string) bool {
	if len(h.tokens) == 0 {
		return true
	}
	on := false
	for _, t := range h.tokens {
		if off, ok := strings.CutPrefix(t, "-"); ok {
			if strings.HasPrefix(tok, off) {
				return false
			}
			continue
		}
		if strings.HasPrefix(tok, t) {
			on = true
		}
	}
	return on
}

func (h *debugHandler) Handle(_ context.Context, r slog.Record) error {
	tok, _, ok := strings.Cut(r.Message, ":")
	if !ok {
		tok = "tsnmp"
	}
	if !h.wants(tok) {
		return nil
	}
	var b strings.Builder
	if !ok {
		b.WriteString("tsnmp: ")
	}
	b.WriteString(r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *debugHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &n
}

func (h *debugHandler) WithGroup(string) slog.Handler { return h }
