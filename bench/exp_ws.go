package bench

import (
	"context"
	"io"

	"github.com/tsnmp/tsnmp/bench/ws"
)

// runWS runs the web-services comparison of package bench/ws (owned by
// the web-services side) and puts its tables into the report.
func runWS(ctx context.Context, env *Env, s *Section) error {
	o := ws.Options{TsnmpdBinary: env.Tsnmpd, Log: io.Discard, NoNetSNMP: peerPath("snmpd") == ""}
	if env.Quick {
		o.Counts, o.RTTCounts, o.Repeat, o.Quick, o.Rows = []int{1, 22, 100}, []int{1, 22}, 2, true, 5
	}
	env.Step(0, 1, "bench/ws.Run")
	rep, err := ws.Run(ctx, o)
	if err != nil {
		return err
	}
	s.Method = append(s.Method, rep.Method()...)
	s.Tables = append(s.Tables, rep.Tables()...)
	for _, n := range rep.Notes {
		s.Note("%s", n)
	}
	plot := &Plot{Title: "Bytes per exchange at the IP level against objects", XLabel: "objects", YLabel: "bytes", LogX: true, LogY: true}
	for _, m := range ws.Methods {
		sr := Series{Name: m}
		for _, p := range rep.Bandwidth {
			sr.X = append(sr.X, float64(p.Objects))
			sr.Y = append(sr.Y, float64(p.Bytes[m].IP))
		}
		plot.Series = append(plot.Series, sr)
	}
	s.Plot = plot
	return nil
}
