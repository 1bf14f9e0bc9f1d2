package agentx

import "strconv"

// AppendMetrics appends the master's counters to b in the Prometheus
// text format (tsnmp_agentx_*), as tsnmpd's web interface serves them
// at /metrics. No standard MIB object holds them: AGENTX-MIB (RFC 4088)
// describes sessions and registrations, not traffic or liveness.
func (s *Stats) AppendMetrics(b []byte) []byte {
	b = append(b, "# HELP tsnmp_agentx_sessions AgentX sessions open now.\n# TYPE tsnmp_agentx_sessions gauge\ntsnmp_agentx_sessions "...)
	b = strconv.AppendInt(b, s.Sessions.Load(), 10)
	b = append(b, '\n')
	for _, c := range []struct {
		name, help string
		v          uint64
	}{
		{"sessions_opened_total", "AgentX sessions opened.", s.Opens.Load()},
		{"sessions_closed_total", "AgentX sessions closed, for any reason.", s.Closes.Load()},
		{"parse_errors_total", "Malformed PDUs received from subagents.", s.ParseErrors.Load()},
		{"requests_total", "Requests sent to subagents.", s.Requests.Load()},
		{"timeouts_total", "Requests a subagent left unanswered in time.", s.Timeouts.Load()},
		{"failures_total", "Requests lost with a subagent's connection or answered in error.", s.Failures.Load()},
		{"notifications_total", "Notifications received from subagents.", s.Notifies.Load()},
		{"probes_total", "Liveness probes sent to silent subagents.", s.Pings.Load()},
		{"probes_unanswered_total", "Liveness probes left unanswered in time.", s.PingsLost.Load()},
		{"closed_unanswering_total", "Connections closed because liveness probes went unanswered.", s.PingCloses.Load()},
		{"closed_sessionless_total", "Connections closed for having no open session for the open timeout.", s.OpenCloses.Load()},
	} {
		b = append(b, "# HELP tsnmp_agentx_"+c.name+" "+c.help+"\n# TYPE tsnmp_agentx_"+c.name+" counter\ntsnmp_agentx_"+c.name+" "...)
		b = strconv.AppendUint(b, c.v, 10)
		b = append(b, '\n')
	}
	return b
}
