package notify

import (
	"os"
	"regexp"
	"testing"
)

// TestDocExamples parses every snmptrapd.conf example of
// docs/notifications.md.
func TestDocExamples(t *testing.T) {
	b, err := os.ReadFile("../docs/notifications.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```snmptrapd.conf\n(.*?)```").FindAllSubmatch(b, -1)
	if len(blocks) == 0 {
		t.Fatal("no snmptrapd.conf example in docs/notifications.md")
	}
	for _, m := range blocks {
		c, err := ParseConfig("docs/notifications.md", m[1])
		if err != nil {
			t.Errorf("example does not parse: %v", err)
			continue
		}
		if _, err := c.Policy(receiverEngine, 1); err != nil {
			t.Error(err)
		}
	}
}
