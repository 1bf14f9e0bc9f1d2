package transport

import "testing"

func TestParseAddress(t *testing.T) {
	for spec, want := range map[string]string{
		"udp:127.0.0.1:1161":  "udp4 127.0.0.1:1161",
		"tcp:[::1]:1161":      "tcp6 [::1]:1161",
		"udp:1161":            "udp :1161",
		"127.0.0.1":           "udp4 127.0.0.1:161",
		"localhost:1161":      "udp localhost:1161",
		"udp6:[::1]":          "udp6 [::1]:161",
		"tcp6:1161":           "tcp6 :1161",
		"tls:host.example":    "tcp host.example:10161",
		"dtls:127.0.0.1":      "udp4 127.0.0.1:10161",
		"ssh:[::1]:2222":      "tcp6 [::1]:2222",
		"::1":                 "udp6 [::1]:161",
		"TCP:127.0.0.1:10000": "tcp4 127.0.0.1:10000",
	} {
		a, err := ParseAddress(spec, 0)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if got := a.Network + " " + a.HostPort(); got != want {
			t.Errorf("%s: got %q, want %q", spec, got, want)
		}
	}
	for _, bad := range []string{"", "udp:", "udp:1.2.3.4:x", "udp:[::1", "udp:1.2.3.4:70000", "bogus:addr:x"} {
		if _, err := ParseAddress(bad, 0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
