package config

import (
	"strings"
	"testing"
	"time"
)

func TestAgentXAndProgramDirectives(t *testing.T) {
	c, err := ParseSnmpdConf("s.conf", []byte(`rocommunity public
master agentx
agentXSocket /tmp/ax.sock,tcp:127.0.0.1:705
agentXPerms 0660 0750 snmp snmp
agentXTimeout 2.5
agentXRetries 3
extend hello /bin/echo hi there
extend-sh load cat /proc/loadavg
exec e1 /bin/true
extend .1.3.6.1.4.1.2021.50 moved /bin/true
pass -p 10 .1.3.6.1.4.1.8072.2.255 /usr/bin/passtest -x
pass_persist .1.3.6.1.4.1.8072.2.256 /usr/bin/pp
`))
	if err != nil {
		t.Fatal(err)
	}
	a := c.AgentX
	socks, _ := a.AgentXSockets()
	if !a.Enabled || len(socks) != 2 || socks[0] != (AgentXSocket{"unix", "/tmp/ax.sock"}) || socks[1] != (AgentXSocket{"tcp", "127.0.0.1:705"}) ||
		a.Perms != "0660" || a.DirPerms != "0750" || time.Duration(a.Timeout) != 2500*time.Millisecond || a.Retries != 3 {
		t.Errorf("agentx: %+v %v", a, socks)
	}
	if len(c.Extend) != 3 || c.Extend[0].Args != "hi there" || !c.Extend[1].Shell || c.Extend[1].Command != "cat" || !c.Extend[2].Legacy {
		t.Errorf("extend: %+v", c.Extend)
	}
	if len(c.Pass) != 2 || c.Pass[0].OID != ".1.3.6.1.4.1.8072.2.255" || c.Pass[0].Args[0] != "-x" || !c.Pass[1].Persist {
		t.Errorf("pass: %+v", c.Pass)
	}
	w := strings.Join(c.Warnings, "\n")
	if !strings.Contains(w, "s.conf:4: agentXPerms") || !strings.Contains(w, "s.conf:10: extend: placing the output under another OID") {
		t.Errorf("warnings:\n%s", w)
	}
	for _, bad := range []string{"agentXTimeout x\n", "agentXPerms 999\n", "agentXSocket nocolon\n", "pass notanoid /bin/x\n", "extend a /x\nextend a /y\n"} {
		if _, err := ParseSnmpdConf("b.conf", []byte("rocommunity public\n"+bad)); err == nil || !strings.Contains(err.Error(), "b.conf:") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	y, err := ParseYAML("c.yaml", []byte("communities: [{community: public}]\nagentx:\n  enabled: true\n  timeout: 3s\nextend:\n  - {name: a, command: /bin/true}\npass:\n  - {oid: .1.3.6.1.4.1.1, program: /bin/x, persist: true}\n"))
	if err != nil || !y.AgentX.Enabled || time.Duration(y.AgentX.Timeout) != 3*time.Second || len(y.Extend) != 1 || !y.Pass[0].Persist {
		t.Errorf("yaml: %v %+v", err, y)
	}
}
