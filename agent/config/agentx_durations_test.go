package config

import (
	"strings"
	"testing"
)

// TestAgentXDurations: agentXTimeout, agentXPingInterval and
// agentXOpenTimeout take a
// number of seconds that a time.Duration holds and that is not lost to
// rounding; NaN, infinities, values below a millisecond and values
// beyond a day are refused naming the file and line, never read as the
// default or as "never".
func TestAgentXDurations(t *testing.T) {
	for _, tok := range []string{"agentXTimeout", "agentXPingInterval", "agentXOpenTimeout"} {
		for _, v := range []string{"NaN", "Inf", "-Inf", "1e-12", "1e300", "0.0001"} {
			c, err := ParseSnmpdConf("snmpd.conf", []byte("master agentx\n"+tok+" "+v+"\n"))
			if err == nil || !strings.Contains(err.Error(), "snmpd.conf:2") {
				t.Errorf("%s %s: accepted (%v, timeout %v, ping interval %v)", tok, v, err, c.AgentX.Timeout, c.AgentX.PingInterval)
			}
		}
	}
	for line, want := range map[string]Duration{
		"agentXTimeout 0.5":       Duration(500e6),
		"agentXPingInterval 0.2":  Duration(200e6),
		"agentXPingInterval -1":   -1,
		"agentXPingInterval off":  -1,
		"agentXPingInterval 3600": Duration(3600e9),
		"agentXOpenTimeout 0.5":   Duration(500e6),
		"agentXOpenTimeout off":   -1,
	} {
		c, err := ParseSnmpdConf("snmpd.conf", []byte("master agentx\n"+line+"\n"))
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		got := c.AgentX.Timeout
		if strings.HasPrefix(line, "agentXPing") || strings.HasPrefix(line, "agentXOpen") {
			got = c.AgentX.PingInterval
			if strings.HasPrefix(line, "agentXOpen") {
				got = c.AgentX.OpenTimeout
			}
			if want < 0 && got < 0 {
				continue
			}
		}
		if got != want {
			t.Errorf("%s: %v, want %v", line, got, want)
		}
	}
}
