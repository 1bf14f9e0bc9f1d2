package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// Plot is a line plot (series of X,Y points) or, when Categories is set, a
// grouped bar chart (series give one Y per category).
type Plot struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Categories            []string
	Series                []Series
	// Spread says what the error bars span, under the legend; empty
	// means min to max of the measured repetitions.
	Spread string
}

// Series is one line or one bar group member. Lo and Hi, when set, hold
// the ends of each point's error bar (NaN: none).
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
}

// Add appends a point at x with the median of m, its error bar from m's
// minimum to its maximum; a Summary of no value adds a gap.
func (s *Series) Add(x float64, m Summary) {
	s.X = append(s.X, x)
	s.AddBar(m)
}

// AddBar appends a bar (or a point without X) as Add does.
func (s *Series) AddBar(m Summary) {
	for len(s.Lo) < len(s.Y) {
		s.Lo, s.Hi = append(s.Lo, math.NaN()), append(s.Hi, math.NaN())
	}
	if m.N == 0 {
		s.Y, s.Lo, s.Hi = append(s.Y, math.NaN()), append(s.Lo, math.NaN()), append(s.Hi, math.NaN())
		return
	}
	s.Y, s.Lo, s.Hi = append(s.Y, m.Median), append(s.Lo, m.Min), append(s.Hi, m.Max)
}

// AddValue appends a bar (or a point without X) with no error bar.
func (s *Series) AddValue(y float64) {
	for len(s.Lo) < len(s.Y) {
		s.Lo, s.Hi = append(s.Lo, math.NaN()), append(s.Hi, math.NaN())
	}
	s.Y, s.Lo, s.Hi = append(s.Y, y), append(s.Lo, math.NaN()), append(s.Hi, math.NaN())
}

// bar returns the error bar of point i, and false when it has none.
func (s *Series) bar(i int) (lo, hi float64, ok bool) {
	if i >= len(s.Lo) || i >= len(s.Hi) || math.IsNaN(s.Lo[i]) || math.IsNaN(s.Hi[i]) || s.Lo[i] == s.Hi[i] {
		return 0, 0, false
	}
	return s.Lo[i], s.Hi[i], true
}

// HasSpread reports whether any point of the plot has an error bar.
func (p *Plot) HasSpread() bool {
	for _, s := range p.Series {
		for i := range s.Y {
			if _, _, ok := s.bar(i); ok {
				return true
			}
		}
	}
	return false
}

// Empty reports whether the plot has no point to draw.
func (p *Plot) Empty() bool {
	for _, s := range p.Series {
		for _, y := range s.Y {
			if !math.IsNaN(y) {
				return false
			}
		}
	}
	return true
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"}

// Layout, in pixels. Text is 12 px sans-serif (10 px for category names);
// textWidth overestimates its width so that nothing is laid out too
// tight.
const (
	svgW                 = 760
	padL, padR, padT     = 70, 20, 36
	plotH                = 300
	legendRow, legendGap = 18, 16
)

// textWidth is an upper estimate of the width of s in a sans-serif font
// of size px: 0.62 em a character, wider than the average glyph of
// DejaVu Sans, Liberation Sans, Arial and Helvetica.
func textWidth(s string, px float64) float64 {
	return float64(utf8.RuneCountInString(s)) * 0.62 * px
}

// legendItem is one legend entry's place.
type legendItem struct{ x, y float64 }

// layoutLegend flows the legend entries in rows from left to right
// between x0 and x1, starting at y, and returns their places and the
// height used.
func layoutLegend(series []Series, x0, x1, y float64) ([]legendItem, float64) {
	items := make([]legendItem, len(series))
	x, rows := x0, 1
	for i, s := range series {
		w := 18 + textWidth(s.Name, 12)
		if x > x0 && x+w > x1 {
			x, rows = x0, rows+1
		}
		items[i] = legendItem{x, y + float64(rows-1)*legendRow}
		x += w + legendGap
	}
	if len(series) == 0 {
		return nil, 0
	}
	return items, float64(rows) * legendRow
}

// WriteSVG draws the plot: title, plot area, axis labels, then the legend
// and what the error bars span, each below the one before, in an image as
// tall as they need.
func (p *Plot) WriteSVG(w io.Writer) error {
	var b strings.Builder
	x0, x1 := float64(padL), float64(svgW-padR)
	y1 := float64(padT)
	y0 := y1 + plotH
	// Below the plot: tick labels or slanted category names, then the X
	// label, the legend and the spread note.
	below := 24.0
	if len(p.Categories) > 0 {
		longest := 0.0
		for _, c := range p.Categories {
			longest = math.Max(longest, textWidth(c, 10))
		}
		below = 16 + longest*0.5 // sin(30°) of the name, and its height
	}
	xlabelY := y0 + below + 12
	legendY := xlabelY + 22
	if p.XLabel == "" {
		legendY = xlabelY
	}
	items, legendH := layoutLegend(p.Series, x0, x1, legendY)
	noteY := legendY + legendH + 4
	spread := p.HasSpread()
	height := noteY
	if spread {
		height += legendRow
	}
	svgH := int(math.Ceil(height + 4))

	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", padL, html.EscapeString(p.Title))
	// Y range, error bars included.
	ymin, ymax := math.Inf(1), math.Inf(-1)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for i, y := range s.Y {
			if math.IsNaN(y) || (p.LogY && y <= 0) {
				continue
			}
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			if lo, hi, ok := s.bar(i); ok {
				if !p.LogY || lo > 0 {
					ymin = math.Min(ymin, lo)
				}
				ymax = math.Max(ymax, hi)
			}
			if i < len(s.X) && !(p.LogX && s.X[i] <= 0) {
				xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
			}
		}
	}
	if !p.LogY && !math.IsInf(ymin, 0) {
		ymin = math.Min(0, ymin)
	}
	ty, ymap := scale(ymin, ymax, p.LogY, y0, y1)
	for _, t := range ty {
		y := ymap(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x1, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x0-6, y+4, tick(t))
	}
	fmt.Fprintf(&b, `<text transform="translate(16,%.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (y0+y1)/2, html.EscapeString(p.YLabel))
	if p.XLabel != "" {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", (x0+x1)/2, xlabelY, html.EscapeString(p.XLabel))
	}
	// errorBar draws a whisker with caps from lo to hi at x.
	errorBar := func(x, lo, hi float64, name string) {
		a, c := ymap(lo), ymap(hi)
		fmt.Fprintf(&b, `<path class="errorbar" d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f" stroke="#222" stroke-width="1" fill="none"><title>%s: %s to %s</title></path>`+"\n",
			x, a, c, x-3, a, x+3, x-3, c, x+3, html.EscapeString(name), Num(lo), Num(hi))
	}
	if len(p.Categories) > 0 {
		nc, ns := len(p.Categories), max(len(p.Series), 1)
		cw := (x1 - x0) / float64(nc)
		bw := cw * 0.8 / float64(ns)
		for c, name := range p.Categories {
			cx := x0 + cw*float64(c)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" font-size="10" transform="rotate(-30 %.1f %.1f)">%s</text>`+"\n", cx+cw/2, y0+12, cx+cw/2, y0+12, html.EscapeString(name))
			for si, s := range p.Series {
				if c >= len(s.Y) || math.IsNaN(s.Y[c]) || (p.LogY && s.Y[c] <= 0) {
					continue
				}
				top := ymap(s.Y[c])
				bx := cx + cw*0.1 + bw*float64(si)
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
					bx, top, bw, math.Max(y0-top, 0.5), palette[si%len(palette)],
					html.EscapeString(s.Name), html.EscapeString(name), Num(s.Y[c]))
				if lo, hi, ok := s.bar(c); ok {
					errorBar(bx+bw/2, lo, hi, s.Name+" "+name)
				}
			}
		}
	} else {
		tx, xmap := scale(xmin, xmax, p.LogX, x0, x1)
		for _, t := range tx {
			x := xmap(t)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", x, y0, x, y1)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, y0+16, tick(t))
		}
		for si, s := range p.Series {
			col := palette[si%len(palette)]
			var pts []string
			for i := range s.Y {
				if i >= len(s.X) || math.IsNaN(s.Y[i]) || (p.LogY && s.Y[i] <= 0) || (p.LogX && s.X[i] <= 0) {
					continue
				}
				px, py := xmap(s.X[i]), ymap(s.Y[i])
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px, py))
				if lo, hi, ok := s.bar(i); ok {
					errorBar(px, lo, hi, s.Name)
				}
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s (%s, %s)</title></circle>`+"\n", px, py, col, html.EscapeString(s.Name), Num(s.X[i]), Num(s.Y[i]))
			}
			if len(pts) > 1 {
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", col, strings.Join(pts, " "))
			}
		}
	}
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#444"/>`+"\n", x0, y1, x1-x0, y0-y1)
	for si, s := range p.Series {
		it := items[si]
		fmt.Fprintf(&b, `<g class="legend"><rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`, it.x, it.y, palette[si%len(palette)])
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text></g>`+"\n", it.x+18, it.y+11, html.EscapeString(s.Name))
	}
	if spread {
		note := p.Spread
		if note == "" {
			note = "Error bars span the minimum to the maximum of the measured repetitions."
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#444">%s</text>`+"\n", x0, noteY+12, html.EscapeString(note))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// scale returns the ticks of an axis covering [lo, hi] (or [0, 1] when
// there is no value) and the map of values onto pixels, from a at the
// first tick to b at the last. On a log axis, values <= 0 map to a.
func scale(lo, hi float64, log bool, a, b float64) ([]float64, func(float64) float64) {
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	if hi == lo {
		hi = lo + 1
	}
	t := axis(lo, hi, log)
	lo, hi = t[0], t[len(t)-1]
	return t, func(v float64) float64 {
		if log {
			if v <= 0 {
				return a
			}
			return a + (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(b-a)
		}
		return a + (v-lo)/(hi-lo)*(b-a)
	}
}

// axis returns tick values covering [lo, hi].
func axis(lo, hi float64, log bool) []float64 {
	if log {
		a, b := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if a == b {
			b++
		}
		var t []float64
		for e := a; e <= b; e++ {
			t = append(t, math.Pow(10, e))
		}
		return t
	}
	span := hi - lo
	step := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 6 {
			step *= m
			break
		}
	}
	start := math.Floor(lo/step) * step
	var t []float64
	for v := start; v < hi+step*0.999; v += step {
		t = append(t, v)
	}
	if len(t) < 2 {
		t = append(t, start+step)
	}
	return t
}

func tick(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%gk", v/1e3)
	default:
		return fmt.Sprintf("%g", math.Round(v*1e4)/1e4)
	}
}
