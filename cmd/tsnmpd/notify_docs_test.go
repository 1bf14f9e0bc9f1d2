package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/tsnmp/tsnmp/agent/config"
)

// TestNotificationDocExamples loads the snmpd.conf and YAML examples of
// docs/notifications.md and builds their notification targets.
func TestNotificationDocExamples(t *testing.T) {
	b, err := os.ReadFile("../../docs/notifications.md")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, kind := range []string{"snmpd.conf", "yaml"} {
		for _, m := range regexp.MustCompile("(?s)```"+regexp.QuoteMeta(kind)+"\n(.*?)```").FindAllSubmatch(b, -1) {
			var c *config.Config
			if kind == "yaml" {
				c, err = config.ParseYAML("docs/notifications.md", m[1])
			} else {
				c, err = config.ParseSnmpdConf("docs/notifications.md", m[1])
			}
			if err != nil {
				t.Errorf("%s example: %v", kind, err)
				continue
			}
			targets, err := notifyTargets(&c.Notifications)
			if err != nil || len(targets) < 4 || !c.Notifications.AuthTraps || !c.Notifications.LinkUpDown {
				t.Errorf("%s example: %d targets, %+v, %v", kind, len(targets), c.Notifications, err)
			}
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d examples, want the snmpd.conf and the YAML one", n)
	}
}
