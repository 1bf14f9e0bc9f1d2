package notify

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tsnmp/tsnmp/transport"
)

// The counters are written in the Prometheus text exposition format
// (version 0.0.4) by hand: a few counter lines need no client library,
// and tsnmp's web interface writes its own the same way.

// AppendMetrics appends the receiver's self-counters and its outputs'
// (o may be nil) to b, in the Prometheus text format: tsnmp trapd's
// /metrics.
func AppendMetrics(b []byte, r *Receiver, o *Outputs) []byte {
	s := &r.Stats
	family := func(name, help string) {
		b = append(b, "# HELP tsnmp_trapd_"+name+" "+help+"\n# TYPE tsnmp_trapd_"+name+" counter\n"...)
	}
	sample := func(name, labels string, v uint64) {
		b = append(b, "tsnmp_trapd_"+name...)
		if labels != "" {
			b = append(b, "{"+labels+"}"...)
		}
		b = append(b, ' ')
		b = strconv.AppendUint(b, v, 10)
		b = append(b, '\n')
	}
	one := func(name, help string, v uint64) {
		family(name, help)
		sample(name, "", v)
	}
	family("received_total", "Notifications accepted, by SNMP version.")
	sample("received_total", `version="1"`, s.V1.Load())
	sample("received_total", `version="2c"`, s.V2c.Load())
	sample("received_total", `version="3"`, s.V3.Load())
	family("received_by_transport_total", "Notifications accepted, by transport domain.")
	type dc struct {
		d string
		v uint64
	}
	var ds []dc
	s.ByDomain.Range(func(k, v any) bool {
		ds = append(ds, dc{string(k.(transport.Domain)), v.(*atomic.Uint64).Load()})
		return true
	})
	slices.SortFunc(ds, func(a, b dc) int { return strings.Compare(a.d, b.d) })
	for _, d := range ds {
		sample("received_by_transport_total", `transport="`+d.d+`"`, d.v)
	}
	one("informs_answered_total", "InformRequests answered with a Response.", s.Informs.Load())
	one("reports_total", "Reports sent (RFC 3414 discovery and errors).", s.Reports.Load())
	one("parse_errors_total", "Messages that could not be decoded (snmpInASNParseErrs).", s.ParseErrors.Load())
	one("bad_versions_total", "Messages of an unknown SNMP version (snmpInBadVersions).", s.BadVersions.Load())
	one("bad_communities_total", "SNMPv1/v2c notifications no authCommunity allows (snmpInBadCommunityNames).", s.BadCommunity.Load())
	one("auth_failures_total", "SNMPv3 messages the security model refused.", s.AuthFailures.Load())
	one("not_authorized_total", "Authentic SNMPv3 notifications no authUser allows.", s.NotAllowed.Load())
	one("not_notifications_total", "PDUs that are not notifications.", s.UnknownPDUs.Load())
	one("queue_drops_total", "Notifications dropped because the output queue was full.", s.Dropped.Load())
	if o != nil {
		os := &o.Stats
		one("logged_total", "Notifications written to the text log.", os.Logged.Load())
		one("handlers_run_total", "traphandle programs run.", os.Handled.Load())
		one("handler_errors_total", "traphandle programs that failed or timed out.", os.HandlerErrors.Load())
		one("handler_drops_total", "Notifications the traphandle queue had no room for.", os.HandlerDropped.Load())
		one("forwarded_total", "Notifications forwarded.", os.Forwarded.Load())
		one("forward_errors_total", "Forwards that failed.", os.ForwardErrors.Load())
	}
	return b
}

// AppendMetrics appends the targets' counters (sent, acknowledged,
// retried, dropped, inform failures, filtered; label target, the target's name) and
// snmpOutTraps to b, in the Prometheus text format.
func (o *Originator) AppendMetrics(b []byte) []byte {
	for _, c := range []struct {
		name, help string
		v          func(*TargetStats) uint64
	}{
		{"sent_total", "Notifications sent to the target (informs: first attempts).", func(s *TargetStats) uint64 { return s.Sent.Load() }},
		{"acknowledged_total", "Informs the target acknowledged.", func(s *TargetStats) uint64 { return s.Acked.Load() }},
		{"retried_total", "Inform rounds that timed out and were tried again.", func(s *TargetStats) uint64 { return s.Retried.Load() }},
		{"dropped_total", "Notifications dropped: queue full, or refused by the target.", func(s *TargetStats) uint64 { return s.Dropped.Load() }},
		{"inform_failures_total", "Informs the target refused (a Report or an error status), given up.", func(s *TargetStats) uint64 { return s.Failed.Load() }},
		{"filtered_total", "Notifications the target's filter profile or notify view kept from it.", func(s *TargetStats) uint64 { return s.Filtered.Load() }},
	} {
		b = append(b, "# HELP tsnmp_notify_"+c.name+" "+c.help+"\n# TYPE tsnmp_notify_"+c.name+" counter\n"...)
		for _, t := range o.targets {
			b = append(b, "tsnmp_notify_"+c.name+`{target="`...)
			b = appendLabel(b, t.cfg.Name)
			b = append(b, `"} `...)
			b = strconv.AppendUint(b, c.v(&t.Stats), 10)
			b = append(b, '\n')
		}
	}
	b = append(b, "# HELP tsnmp_notify_out_traps_total Notifications sent (snmpOutTraps).\n# TYPE tsnmp_notify_out_traps_total counter\ntsnmp_notify_out_traps_total "...)
	b = strconv.AppendUint(b, o.OutTraps.Load(), 10)
	return append(b, '\n')
}

// appendLabel appends a label value with \, " and newline escaped.
func appendLabel(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, s[i])
		}
	}
	return b
}
