package config

import "testing"

func TestHTTPListen(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		secure   bool
		hostport string
		ok, err  bool
	}{
		{"https:127.0.0.1:8443", true, "127.0.0.1:8443", true, false},
		{"http:[::1]:8080", false, "[::1]:8080", true, false},
		{"HTTPS:8443", true, ":8443", true, false},
		{"http://localhost:80", false, "localhost:80", true, false},
		{"http:", false, "", true, true},
		{"https:127.0.0.1", true, "", true, true},
		{"http:127.0.0.1:99999", false, "", true, true},
		{"http:bad host:80", false, "", true, true},
		{"udp:127.0.0.1:161", false, "", false, false},
		{"127.0.0.1:161", false, "", false, false},
	} {
		secure, hp, ok, err := HTTPListen(tc.spec)
		if ok != tc.ok || (err != nil) != tc.err || err == nil && (secure != tc.secure || hp != tc.hostport) {
			t.Errorf("%q: %v %q %v %v", tc.spec, secure, hp, ok, err)
		}
	}
	c, err := ParseYAML("t.yaml", []byte("listen: [\"https:127.0.0.1:8443\", udp:127.0.0.1:1161]\nhttp:\n  allow_plain: true\n  max_body: 1024\n"))
	if err != nil || !c.HTTP.AllowPlain || c.HTTP.MaxBody != 1024 {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := ParseYAML("t.yaml", []byte("listen: [\"http:nope\"]\n")); err == nil {
		t.Error("bad http listen address accepted")
	}
}
