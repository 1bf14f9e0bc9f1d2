// Package ws reproduces the comparison of SNMP with web-services
// management (SOAP/XML over HTTP, with and without compression) on the
// ifTable, against one tsnmp agent that serves the same MIB tree over both:
//
//   - bytes on the wire against the number of objects, for SNMP Get and
//     GetBulk and the HTTP representations, at the application level and
//     at the IP level (from a tcpdump capture on lo, or computed from the
//     sockets' segment counts when capturing is not possible);
//   - CPU time of coding (decoding and encoding a message carrying n
//     objects) in BER, XML, SOAP and JSON, and of compression;
//   - data retrieval time against the number of objects: one kernel
//     query per object, one per request, and the shared 1 s cache;
//   - round-trip delay for 1, 22, 66 and 270 objects;
//   - memory allocated per request, and the agent's static footprint.
//
// Run does everything and returns a Report; `go test -bench .` in this
// directory runs the coding and serving benchmarks alone.
package ws

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tsnmp/tsnmp/internal/loopagent"
	"github.com/tsnmp/tsnmp/internal/netns"
)

// Options configure Run. Zero values take the defaults.
type Options struct {
	// Counts are the numbers of objects of the bandwidth experiment
	// (default 1, 2, 5, 10, 22, 50, 66, 100, 150, 200, 270, 300, 400, 500).
	Counts []int
	// RTTCounts are those of the round-trip experiment (default 1, 22,
	// 66, 270).
	RTTCounts []int
	// Rows is the size of the synthetic ifTable the bandwidth, coding and
	// round-trip experiments use (default 23: 506 objects).
	Rows int
	// Repeat is how many times each round trip and retrieval is timed
	// (default 20); the minimum (round trips) and median (retrieval) are
	// reported.
	Repeat int
	// Interfaces is the number of Ethernet (veth) interfaces of the network
	// namespace the retrieval experiment reads (default 23, as many as
	// the synthetic table has rows); negative reads this machine's own
	// interfaces. Without the rights to make a namespace, the machine's
	// interfaces are read and the report says so.
	Interfaces int
	// NoCapture computes IP-level bytes from segment counts instead of
	// capturing with tcpdump.
	NoCapture bool
	// NoNetSNMP skips Net-SNMP's snmpd in the round-trip experiment.
	NoNetSNMP bool
	// Quick shortens the coding and memory measurements (for tests).
	Quick bool
	// TsnmpdBinary, when set, is measured for Table I's static memory
	// (ELF sizes, and resident size after a walk next to snmpd's).
	TsnmpdBinary string
	// Log receives progress lines; nil discards them.
	Log io.Writer

	ns *netns.NS // the namespace of Interfaces, while Run runs
}

func (o *Options) defaults() {
	if len(o.Counts) == 0 {
		o.Counts = []int{1, 2, 5, 10, 22, 50, 66, 100, 150, 200, 270, 300, 400, 500}
	}
	if len(o.RTTCounts) == 0 {
		o.RTTCounts = []int{1, 22, 66, 270}
	}
	if o.Rows <= 0 {
		o.Rows = 23
	}
	if o.Repeat <= 0 {
		o.Repeat = 20
	}
	if o.Interfaces == 0 {
		o.Interfaces = 23
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// Methods of retrieval compared.
const (
	SNMPGet     = "SNMP Get"
	SNMPGetBulk = "SNMP GetBulk"
	SOAP        = "SOAP"
	SOAPGzip    = "SOAP+gzip"
	XML         = "XML"
	XMLGzip     = "XML+gzip"
	JSON        = "JSON"
	JSONGzip    = "JSON+gzip"
	JSONZstd    = "JSON+zstd"
)

// Methods lists the bandwidth methods in report order.
var Methods = []string{SNMPGet, SNMPGetBulk, SOAP, SOAPGzip, XML, XMLGzip, JSON, JSONGzip, JSONZstd}

// Bytes is the cost of one request-response exchange.
type Bytes struct {
	// App is the request plus the response at the application level:
	// SNMP messages (UDP payloads) or HTTP messages (TCP payloads).
	App int
	// IP is the same exchange at the IP level: every IPv4 packet of the
	// exchange, acknowledgements included, without connection setup and
	// release.
	IP int
	// Conn is what TCP connection setup and release add at the IP level.
	Conn int `json:",omitempty"`
	// Packets is the number of IP packets of the exchange.
	Packets int
	// Zlib is, for SNMP, the application-level bytes with each message
	// compressed by zlib (not on the wire: the paper's fairness check).
	Zlib int `json:",omitempty"`
}

// BandwidthPoint is one number of objects of Figures 11 and 12.
type BandwidthPoint struct {
	Objects int
	Bytes   map[string]Bytes
}

// CodingPoint is one number of objects of Figure 13: the CPU time of
// decoding and then encoding a message carrying that many objects, and of
// compressing it.
type CodingPoint struct {
	Objects int
	NsPerOp map[string]float64
}

// RetrievalPoint is one number of objects of Figure 14.
type RetrievalPoint struct {
	Objects int
	// PerObject queries the kernel for every object (Net-SNMP 5.0's
	// behaviour the paper measured); PerRequest queries it once per
	// request (tsnmp without its cache); Cached serves from tsnmp's
	// shared 1 s snapshot.
	PerObject, PerRequest, Cached time.Duration
	// Dumps is the number of kernel queries per request of each.
	DumpsPerObject, DumpsPerRequest, DumpsCached float64
}

// RTTPoint is one column of Table II: the lowest round-trip delay seen.
type RTTPoint struct {
	Objects int
	Delay   map[string]time.Duration
}

// MemoryRow is one row of Table I.
type MemoryRow struct {
	What string
	// BytesPerRequest and AllocsPerRequest are the dynamic memory of one
	// request, by object count.
	BytesPerRequest  map[int]int64
	AllocsPerRequest map[int]int64
}

// Static is the static footprint of the agents.
type Static struct {
	// HeapInUse is the in-process agent's heap after start and one walk.
	HeapInUse uint64
	// Text, Data are the ELF sizes of the binaries, where found.
	Binaries []Binary
}

// Binary is the size of an executable or library.
type Binary struct {
	Path            string
	Text, Data, BSS uint64
	RSSAfterWalk    uint64 `json:",omitempty"`
}

// Report is everything Run measured.
type Report struct {
	Started   time.Time
	GoVersion string
	CPU       string
	IPMethod  string // "tcpdump on lo" or "computed from TCP_INFO segment counts"
	Rows      int
	Bandwidth []BandwidthPoint
	Coding    []CodingPoint
	Retrieval []RetrievalPoint
	// RetrievalSource says whose interfaces the retrieval read, and
	// RetrievalObjects how many ifTable instances they make (objects
	// repeat beyond that).
	RetrievalSource  string
	RetrievalObjects int
	RoundTrip        []RTTPoint
	RTTMethods       []string
	Memory           []MemoryRow
	Static           Static
	Notes            []string
}

// Run runs every experiment.
func Run(ctx context.Context, o Options) (*Report, error) {
	o.defaults()
	rep := &Report{Started: time.Now(), GoVersion: runtime.Version(), CPU: cpuModel(), Rows: o.Rows}
	a, err := loopagent.Start(loopagent.Options{Rows: o.Rows, NoTLS: true, Config: loopagent.DefaultConfig + "limits:\n  max_getbulk_responses: -1\n"}) // GetBulk answers up to 500 objects, as in the paper
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if max := o.Rows * 22; o.Counts[len(o.Counts)-1] > max {
		rep.Notes = append(rep.Notes, fmt.Sprintf("counts above %d objects are capped to the table's %d", max, max))
	}
	if o.Interfaces > 0 {
		ns, n, err := interfacesNetns(o.Interfaces)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("kernel experiments read this machine's interfaces: no namespace with %d veth interfaces (%v)", o.Interfaces, err))
		} else {
			defer ns.Delete()
			o.ns, o.Interfaces = ns, n
		}
	}
	fmt.Fprintln(o.Log, "bandwidth...")
	if err := runBandwidth(ctx, a, &o, rep); err != nil {
		return nil, fmt.Errorf("bandwidth: %w", err)
	}
	fmt.Fprintln(o.Log, "coding...")
	rep.Coding = runCoding(&o, a)
	fmt.Fprintln(o.Log, "retrieval...")
	if rep.Retrieval, err = runRetrieval(ctx, &o, rep); err != nil {
		return nil, fmt.Errorf("retrieval: %w", err)
	}
	fmt.Fprintln(o.Log, "round trips...")
	if err := runRTT(ctx, a, &o, rep); err != nil {
		return nil, fmt.Errorf("round trips: %w", err)
	}
	fmt.Fprintln(o.Log, "memory...")
	runMemory(&o, a, rep)
	return rep, nil
}

func cpuModel() string {
	out, err := exec.Command("sh", "-c", "grep -m1 'model name' /proc/cpuinfo").Output()
	if err != nil {
		return runtime.GOARCH
	}
	_, m, _ := strings.Cut(string(out), ":")
	return fmt.Sprintf("%s (%d CPUs)", strings.TrimSpace(m), runtime.NumCPU())
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// WriteText prints the report as tables.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "tsnmp web services vs SNMP (%s, %s, synthetic ifTable of %d rows)\n", r.GoVersion, r.CPU, r.Rows)
	fmt.Fprintf(w, "IP-level bytes: %s\n\n", r.IPMethod)
	for _, level := range []string{"application", "IP"} {
		fmt.Fprintf(w, "Bytes per exchange (request + response) at the %s level (Figures 11, 12):\n", level)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "objects\t")
		for _, m := range Methods {
			fmt.Fprintf(tw, "%s\t", m)
		}
		fmt.Fprintln(tw)
		for _, p := range r.Bandwidth {
			fmt.Fprintf(tw, "%d\t", p.Objects)
			for _, m := range Methods {
				b := p.Bytes[m]
				v := b.App
				if level == "IP" {
					v = b.IP
				}
				fmt.Fprintf(tw, "%d\t", v)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if len(r.Bandwidth) > 0 {
		fmt.Fprintln(w, "SNMP with each message compressed by zlib, application level (the paper's compressed SNMP):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "objects\tGet+zlib\tof Get\tGetBulk+zlib\tof GetBulk\t")
		for _, p := range r.Bandwidth {
			g, b := p.Bytes[SNMPGet], p.Bytes[SNMPGetBulk]
			fmt.Fprintf(tw, "%d\t%d\t%.0f%%\t%d\t%.0f%%\t\n", p.Objects, g.Zlib, pct(g.Zlib, g.App), b.Zlib, pct(b.Zlib, b.App))
		}
		tw.Flush()
		fmt.Fprintln(w)
		fmt.Fprint(w, "TCP connection setup and release at the IP level (not in the IP figures above):")
		for _, m := range Methods[2:] {
			fmt.Fprintf(w, " %s %d;", m, r.Bandwidth[0].Bytes[m].Conn)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Coding CPU time, decode + encode of one message, µs (Figure 13):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var keys []string
	if len(r.Coding) > 0 {
		for k := range r.Coding[0].NsPerOp {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	fmt.Fprintf(tw, "objects\t%s\t\n", strings.Join(keys, "\t"))
	for _, p := range r.Coding {
		fmt.Fprintf(tw, "%d\t", p.Objects)
		for _, k := range keys {
			fmt.Fprintf(tw, "%.1f\t", p.NsPerOp[k]/1000)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Data retrieval time from the kernel (%s, %d ifTable objects), µs (median) and kernel queries per request (Figure 14):\n", r.RetrievalSource, r.RetrievalObjects)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "objects\tper object\tqueries\tper request\tqueries\tcached (1 s)\tqueries\t")
	for _, p := range r.Retrieval {
		fmt.Fprintf(tw, "%d\t%.1f\t%.0f\t%.1f\t%.0f\t%.1f\t%.2f\t\n", p.Objects, us(p.PerObject), p.DumpsPerObject,
			us(p.PerRequest), p.DumpsPerRequest, us(p.Cached), p.DumpsCached)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Round-trip delay, ms, lowest of the repetitions (Table II):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, p := range r.RoundTrip {
		fmt.Fprintf(tw, "%d\t", p.Objects)
	}
	fmt.Fprintln(tw)
	for _, m := range r.RTTMethods {
		fmt.Fprintf(tw, "%s\t", m)
		for _, p := range r.RoundTrip {
			if d, ok := p.Delay[m]; ok {
				fmt.Fprintf(tw, "%.3f\t", float64(d)/float64(time.Millisecond))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Memory allocated per request, bytes / allocations (Table I, dynamic):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var counts []int
	if len(r.Memory) > 0 {
		for n := range r.Memory[0].BytesPerRequest {
			counts = append(counts, n)
		}
		sort.Ints(counts)
	}
	fmt.Fprint(tw, "\t")
	for _, n := range counts {
		fmt.Fprintf(tw, "%d objects\t", n)
	}
	fmt.Fprintln(tw)
	for _, m := range r.Memory {
		fmt.Fprintf(tw, "%s\t", m.What)
		for _, n := range counts {
			fmt.Fprintf(tw, "%d / %d\t", m.BytesPerRequest[n], m.AllocsPerRequest[n])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nStatic (Table I): in-process agent heap in use %d kB\n", r.Static.HeapInUse/1024)
	for _, b := range r.Static.Binaries {
		fmt.Fprintf(w, "  %s: text %d kB, data %d kB, bss %d kB", b.Path, b.Text/1024, b.Data/1024, b.BSS/1024)
		if b.RSSAfterWalk > 0 {
			fmt.Fprintf(w, ", RSS after a walk %d kB", b.RSSAfterWalk/1024)
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
