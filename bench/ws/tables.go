package ws

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/tsnmp/tsnmp/bench/harness"
)

// Method describes how the report was measured, one paragraph each.
func (r *Report) Method() []string {
	return []string{
		fmt.Sprintf("One in-process tsnmp agent serves a synthetic ifTable of %d Ethernet rows (%d objects) over SNMP (UDP) and HTTP/1.1; \"n objects\" are the first n instances of a walk of ifTable. SNMP Get names them, GetBulk asks for n repetitions of ifTable; web services GET /mib/ifTable?max=n (SOAP: POST /soap?max=n with a Figure 8 style envelope), with Accept-Encoding for the compressed variants. Every response is checked to carry n objects.", r.Rows, r.Rows*22),
		"Application-level bytes are the SNMP or HTTP messages both ways; IP-level bytes: " + r.IPMethod + ", acknowledgements included, TCP connection setup and release excluded.",
		"Coding time is decoding then encoding one message carrying n objects (BER, XML, SOAP, JSON), and compressing the documents; the lowest mean of five batches.",
		fmt.Sprintf("Retrieval reads ifTable objects from the kernel in-process (%s, %d objects): one kernel query per object (as Net-SNMP 5.0 did), one per request (tsnmp without its cache), and tsnmp's shared 1 s snapshot; medians.", r.RetrievalSource, r.RetrievalObjects),
		"Round trips are the lowest of the repetitions on kept loopback sockets and connections. Memory per request is what the agent side allocates (Go runtime counters).",
	}
}

// Tables returns the report's tables.
func (r *Report) Tables() []*harness.Table {
	var out []*harness.Table
	for _, level := range []string{"application", "IP"} {
		t := &harness.Table{Title: "Bytes per exchange at the " + level + " level (Figures 11, 12)", Columns: append([]string{"objects"}, Methods...)}
		for _, p := range r.Bandwidth {
			row := []string{strconv.Itoa(p.Objects)}
			for _, m := range Methods {
				v := p.Bytes[m].App
				if level == "IP" {
					v = p.Bytes[m].IP
				}
				row = append(row, strconv.Itoa(v))
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
	}
	t := &harness.Table{Title: "Coding CPU time, µs (Figure 13)", Columns: append([]string{"objects"}, Codecs...)}
	for _, p := range r.Coding {
		row := []string{strconv.Itoa(p.Objects)}
		for _, c := range Codecs {
			row = append(row, fmt.Sprintf("%.1f", p.NsPerOp[c]/1000))
		}
		t.Rows = append(t.Rows, row)
	}
	out = append(out, t)
	t = &harness.Table{Title: "Data retrieval time, µs (Figure 14)", Columns: []string{"objects", "query per object", "query per request", "shared 1 s cache"}}
	for _, p := range r.Retrieval {
		t.Rows = append(t.Rows, []string{strconv.Itoa(p.Objects), fmt.Sprintf("%.1f", us(p.PerObject)), fmt.Sprintf("%.1f", us(p.PerRequest)), fmt.Sprintf("%.1f", us(p.Cached))})
	}
	out = append(out, t)
	t = &harness.Table{Title: "Round-trip delay, ms (Table II)", Columns: []string{"method"}}
	for _, p := range r.RoundTrip {
		t.Columns = append(t.Columns, strconv.Itoa(p.Objects))
	}
	for _, m := range r.RTTMethods {
		row := []string{m}
		for _, p := range r.RoundTrip {
			if d, ok := p.Delay[m]; ok {
				row = append(row, fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond)))
			} else {
				row = append(row, "-")
			}
		}
		t.Rows = append(t.Rows, row)
	}
	out = append(out, t)
	var counts []int
	if len(r.Memory) > 0 {
		for n := range r.Memory[0].BytesPerRequest {
			counts = append(counts, n)
		}
		sort.Ints(counts)
	}
	t = &harness.Table{Title: "Memory allocated per request, bytes / allocations (Table I)", Columns: []string{"path"}}
	for _, n := range counts {
		t.Columns = append(t.Columns, strconv.Itoa(n))
	}
	for _, m := range r.Memory {
		row := []string{m.What}
		for _, n := range counts {
			row = append(row, fmt.Sprintf("%d / %d", m.BytesPerRequest[n], m.AllocsPerRequest[n]))
		}
		t.Rows = append(t.Rows, row)
	}
	out = append(out, t)
	t = &harness.Table{Title: "Static memory (Table I)", Columns: []string{"binary", "text kB", "data kB", "bss kB", "RSS after a walk kB"}}
	for _, b := range r.Static.Binaries {
		t.Rows = append(t.Rows, []string{b.Path, strconv.FormatUint(b.Text/1024, 10), strconv.FormatUint(b.Data/1024, 10),
			strconv.FormatUint(b.BSS/1024, 10), strconv.FormatUint(b.RSSAfterWalk/1024, 10)})
	}
	return append(out, t)
}
