package exporter

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/snmp"
)

// limitedAgent is an SNMPv2c agent over UDP serving a table of n rows
// (two columns under 1.3.6.1.4.1.99999.1.1) that refuses GetBulk
// requests asking for more than limit varbinds: with tooBig, or by not
// answering when drop is set. No agent here behaves so (tsnmpd and snmpd
// cut GetBulk responses short instead), but devices do.
type limitedAgent struct {
	conn          *net.UDPConn
	limit         int
	drop          bool
	mu            sync.Mutex
	asked         []int      // varbinds asked for, per GetBulk
	requests      [][2]int32 // request ID and number of varbinds, per GetBulk
	refused, sent int
	delay         time.Duration // before each answer
	// answerFrom, if set, is the socket the answers go out on: one on
	// another address, as some devices answer.
	answerFrom *net.UDPConn
}

func startLimitedAgent(t *testing.T, rows, limit int, drop bool) *limitedAgent {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	a := &limitedAgent{conn: c, limit: limit, drop: drop}
	var table []snmp.VarBind
	for col := uint32(1); col <= 2; col++ {
		for r := 1; r <= rows; r++ {
			table = append(table, snmp.VarBind{Name: snmp.OID{1, 3, 6, 1, 4, 1, 99999, 1, 1, col, uint32(r)}, Value: snmp.Counter32Value(uint32(r*10) + col)})
		}
	}
	next := func(o snmp.OID) (snmp.VarBind, bool) {
		for _, vb := range table {
			if vb.Name.Compare(o) > 0 {
				return vb, true
			}
		}
		return snmp.VarBind{Name: o, Value: snmp.Value{Type: snmp.EndOfMibView}}, false
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			var m snmp.Message
			if m.Unmarshal(buf[:n]) != nil || m.PDU.Type != snmp.GetBulkRequest {
				continue
			}
			reps, vbs := m.PDU.ErrorIndex, m.PDU.VarBinds
			resp := &snmp.Message{Version: m.Version, Community: m.Community, PDU: snmp.PDU{Type: snmp.Response, RequestID: m.PDU.RequestID}}
			a.mu.Lock()
			a.asked = append(a.asked, reps*len(vbs))
			a.requests = append(a.requests, [2]int32{m.PDU.RequestID, int32(len(vbs))})
			if reps*len(vbs) > a.limit {
				a.refused++
				a.mu.Unlock()
				if drop {
					continue
				}
				resp.PDU.ErrorStatus, resp.PDU.VarBinds = snmp.TooBig, vbs
				c.WriteToUDP(snmp.AppendMessage(nil, resp), from)
				continue
			}
			a.sent++
			delay, out := a.delay, c
			if a.answerFrom != nil {
				out = a.answerFrom
			}
			a.mu.Unlock()
			time.Sleep(delay)
			last := make([]snmp.OID, len(vbs))
			for i, vb := range vbs {
				last[i] = vb.Name
			}
			for range reps {
				for i := range vbs {
					vb, _ := next(last[i])
					last[i] = vb.Name
					resp.PDU.VarBinds = append(resp.PDU.VarBinds, vb)
				}
			}
			out.WriteToUDP(snmp.AppendMessage(nil, resp), from)
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return a
}

const limitedConf = `modules:
  table:
    walk: [1.3.6.1.4.1.99999.1.1.1, 1.3.6.1.4.1.99999.1.1.2]
    max_repetitions: 25
    timeout: 1s
    retries: 1
    metrics:
    - name: a
      oid: 1.3.6.1.4.1.99999.1.1.1
      type: counter
      help: a
      indexes: [{labelname: row, type: gauge}]
    - name: b
      oid: 1.3.6.1.4.1.99999.1.1.2
      type: counter
      help: b
      indexes: [{labelname: row, type: gauge}]
`

// TestAdaptiveRepetitions: a target that answers tooBig, or lets a large
// request go unanswered, to GetBulk requests for more than 10 varbinds
// is still walked completely; the exporter learns the limit and its next
// scrape asks for no more. A target that takes one varbind per request
// is walked a subtree at a time.
func TestAdaptiveRepetitions(t *testing.T) {
	for _, c := range []struct {
		limit int
		drop  bool
	}{{10, false}, {10, true}, {1, false}} {
		limit, drop := c.limit, c.drop
		t.Run(fmt.Sprintf("limit=%d,drop=%v", limit, drop), func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "snmp.yml")
			conf := limitedConf
			if !drop {
				// Nothing is dropped: a timeout could only come from a
				// loaded machine, and would count as a retransmission.
				conf = strings.Replace(conf, "timeout: 300ms", "timeout: 5s", 1)
			}
			os.WriteFile(f, []byte(conf), 0o600)
			_, url := newTestExporter(t, f)
			a := startLimitedAgent(t, 30, limit, drop)
			q := url + "/snmp?module=table&target=" + a.conn.LocalAddr().String()
			firstRefused, firstAsked := 0, 0
			for scrape := range 3 {
				if scrape == 1 {
					a.mu.Lock()
					firstRefused, firstAsked = a.refused, len(a.asked)
					a.mu.Unlock()
				}
				a.mu.Lock()
				before := len(a.requests)
				a.mu.Unlock()
				code, body := get(t, q)
				if code != 200 {
					t.Fatalf("scrape %d: %d %s", scrape, code, body)
				}
				// Unanswered requests were sent again (retries: 1), and
				// the scrape says so. With nothing dropped, the only
				// requests sent again are those a loaded machine answered
				// after the adaptive timer expired: the agent saw them
				// twice, with the same request-id, and the scrape counts
				// exactly those.
				r := metricValue(t, body, `snmp_scrape_packets_retried{module="table"}`)
				again := 0
				// A request sent again may reach the agent's reader after
				// the answer to its first copy ended the scrape.
				for wait := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					a.mu.Lock()
					seen := map[int32]bool{}
					again = 0
					for _, req := range a.requests[before:] {
						if seen[req[0]] {
							again++
						}
						seen[req[0]] = true
					}
					a.mu.Unlock()
					if drop || float64(again) >= r || time.Now().After(wait) {
						break
					}
				}
				if drop && scrape == 0 && r < 1 || !drop && r != float64(again) {
					t.Errorf("scrape %d: snmp_scrape_packets_retried %v, the agent saw %d requests again", scrape, r, again)
				}
				for r := 1; r <= 30; r++ {
					if v := metricValue(t, body, fmt.Sprintf(`a{row="%d"}`, r)); v != float64(r*10+1) {
						t.Fatalf("scrape %d: a{row=%d} = %v", scrape, r, v)
					}
					metricValue(t, body, fmt.Sprintf(`b{row="%d"}`, r))
				}
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			// The first request asks for 2 subtrees × 25; refusals
			// shrink it in the first scrape, and the size learned there
			// holds for the later ones.
			if firstRefused < 1 || a.asked[0] != 50 {
				t.Errorf("first scrape: %d requests refused (asked: %v)", firstRefused, a.asked)
			}
			if a.refused != firstRefused {
				t.Errorf("later scrapes had %d requests refused (asked: %v)", a.refused-firstRefused, a.asked)
			}
			for _, n := range a.asked[firstAsked:] {
				if n > 10 {
					t.Errorf("asked for %d varbinds after learning the limit of 10 (asked: %v)", n, a.asked)
				}
			}
		})
	}
}

// TestUnconnectedUDPSocket: a target that answers from another of its
// addresses (127.0.0.2 for requests to 127.0.0.1) is scraped by a module
// with use_unconnected_udp_socket, whose session takes answers from any
// address, and not by the same module without it, whose connected socket
// drops them.
func TestUnconnectedUDPSocket(t *testing.T) {
	f := filepath.Join(t.TempDir(), "snmp.yml")
	loose := strings.Replace(strings.TrimPrefix(limitedConf, "modules:\n"), "  table:\n", "  loose:\n    use_unconnected_udp_socket: true\n", 1)
	conf := strings.Replace(limitedConf, "retries: 1", "retries: 0", 1) + loose
	os.WriteFile(f, []byte(conf), 0o600)
	_, url := newTestExporter(t, f)
	a := startLimitedAgent(t, 5, 1000, false)
	other, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	a.mu.Lock()
	a.answerFrom = other
	a.mu.Unlock()
	target := a.conn.LocalAddr().String()
	code, body := get(t, url+"/snmp?module=loose&target="+target)
	if code != 200 {
		t.Fatalf("module with use_unconnected_udp_socket: %d %s", code, body)
	}
	for r := 1; r <= 5; r++ {
		if v := metricValue(t, body, fmt.Sprintf(`a{row="%d"}`, r)); v != float64(r*10+1) {
			t.Errorf("a{row=%d} = %v", r, v)
		}
	}
	if code, body := get(t, url+"/snmp?module=table&target="+target); code == 200 && strings.Contains(body, `a{row="1"}`) {
		t.Errorf("module without use_unconnected_udp_socket took answers from another address: %d %s", code, body)
	}
}

// withSmallModule is limitedConf with a module "small" that walks root
// one varbind per request, with the table module's timeout and retries
// (so that both share a session).
func withSmallModule(root string) string {
	return limitedConf + `  small:
    walk: [` + root + `]
    max_repetitions: 1
    timeout: 1s
    retries: 1
    metrics:
    - name: c
      oid: 1.3.6.1.4.1.99999.1.1.1
      type: counter
      help: c
      indexes: [{labelname: row, type: gauge}]
`
}

// TestRetriesCountedPerModule: two scrapes of different modules of one
// target share a session; each module's snmp_scrape_packets_retried
// counts the requests of its own walk that the agent received again, not
// the other's (the table module's large requests go unanswered), and
// snmp_packets_total counts each packet once.
func TestRetriesCountedPerModule(t *testing.T) {
	f := filepath.Join(t.TempDir(), "snmp.yml")
	os.WriteFile(f, []byte(withSmallModule("1.3.6.1.4.1.99999.1.1")), 0o600)
	_, url := newTestExporter(t, f)
	a := startLimitedAgent(t, 30, 10, true)
	a.mu.Lock()
	a.delay = 20 * time.Millisecond // the small module's walk (61 requests) outlasts the table's lost requests
	a.mu.Unlock()
	q := url + "/snmp?target=" + a.conn.LocalAddr().String() + "&module="
	var small string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		code, body := get(t, q+"small")
		if code != 200 {
			t.Errorf("small: %d %s", code, body)
		}
		small = body
	}()
	code, table := get(t, q+"table")
	wg.Wait()
	if code != 200 {
		t.Fatalf("table: %d %s", code, table)
	}
	// Retransmissions the agent saw: the table module's requests name
	// two subtrees, the small module's one.
	a.mu.Lock()
	ids := map[int32]map[int32]bool{1: {}, 2: {}}
	seen := map[int32]int{}
	for _, r := range a.requests {
		ids[r[1]][r[0]] = true
		seen[r[1]]++
	}
	a.mu.Unlock()
	sent := 0.0
	for _, c := range []struct {
		module, body string
		width        int32
	}{{"table", table, 2}, {"small", small, 1}} {
		want := float64(seen[c.width] - len(ids[c.width]))
		if c.module == "table" && want < 1 {
			t.Errorf("the agent saw no retransmission of the table module's lost requests")
		}
		if r := metricValue(t, c.body, `snmp_scrape_packets_retried{module="`+c.module+`"}`); r != want {
			t.Errorf("%s: snmp_scrape_packets_retried %v, the agent received %v requests again", c.module, r, want)
		}
		sent += metricValue(t, c.body, `snmp_scrape_packets_sent{module="`+c.module+`"}`)
	}
	_, m := get(t, url+"/metrics")
	if total := metricValue(t, m, "snmp_packets_total"); total != sent {
		t.Errorf("snmp_packets_total %v, want %v (the two scrapes' packets)", total, sent)
	}
}

// TestRepetitionsLearnedPerTarget: what a target is known to take holds
// for every module walked over its session. Scrapes of a module that asks
// for fewer varbinds than that (max_repetitions: 1) prove nothing about
// larger requests, and do not let the next scrape of the table module ask
// for more than the target takes.
func TestRepetitionsLearnedPerTarget(t *testing.T) {
	f := filepath.Join(t.TempDir(), "snmp.yml")
	os.WriteFile(f, []byte(withSmallModule("1.3.6.1.4.1.99999.1.1.1")), 0o600)
	_, url := newTestExporter(t, f)
	a := startLimitedAgent(t, 30, 10, false)
	q := url + "/snmp?target=" + a.conn.LocalAddr().String() + "&module="
	scrape := func(module string) {
		t.Helper()
		if code, body := get(t, q+module); code != 200 {
			t.Fatalf("%s: %d %s", module, code, body)
		}
	}
	scrape("table")
	for range growAfter + 1 {
		scrape("small")
	}
	a.mu.Lock()
	refused, asked := a.refused, len(a.asked)
	a.mu.Unlock()
	scrape("table")
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refused != refused {
		t.Errorf("the table module's second scrape had %d requests refused (asked: %v)", a.refused-refused, a.asked[asked:])
	}
}
