package config

import (
	"strings"
	"testing"
)

func TestNotificationDirectives(t *testing.T) {
	c, err := ParseSnmpdConf("n.conf", []byte(`trapcommunity traps
trapsink 127.0.0.1
trap2sink 127.0.0.1 other 1162
informsink tcp:127.0.0.1
trapsess -v 3 -u alice -l authPriv -a SHA -A authpass123 -x AES -X privpass123 -Ci udp:127.0.0.1:1162
authtrapenable 1
linkUpDownNotifications yes
`))
	if err != nil {
		t.Fatal(err)
	}
	n := c.Notifications
	if n.Community != "traps" || !n.AuthTraps || !n.LinkUpDown || len(n.Sinks) != 4 {
		t.Fatalf("%+v", n)
	}
	if s := n.Sinks[1]; s.Type != "trap2" || s.Address != "127.0.0.1:1162" || s.Community != "other" || s.Origin != "n.conf:3" {
		t.Errorf("trap2sink %+v", s)
	}
	if s := n.Sinks[3]; s.Type != "session" || len(s.Args) != 16 || s.Args[15] != "udp:127.0.0.1:1162" {
		t.Errorf("trapsess %+v", s)
	}
	for conf, want := range map[string]string{
		"authtrapenable 3\n":              "n.conf:1",
		"trapsink a b c d\n":              "n.conf:1",
		"linkUpDownNotifications maybe\n": "n.conf:1",
	} {
		if _, err := ParseSnmpdConf("n.conf", []byte(conf)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v", conf, err)
		}
	}
	y, err := ParseYAML("c.yaml", []byte("notifications:\n  auth_traps: true\n  sinks:\n    - type: inform\n      address: 127.0.0.1\n    - type: bogus\n"))
	if err == nil || !strings.Contains(err.Error(), "notifications.sinks[1]") {
		t.Errorf("YAML bad sink type: %v %+v", err, y)
	}
}
