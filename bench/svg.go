package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Plot is a line plot (series of X,Y points) or, when Categories is set, a
// grouped bar chart (series give one Y per category).
type Plot struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Categories            []string
	Series                []Series
}

// Series is one line or one bar group member.
type Series struct {
	Name string
	X, Y []float64
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

const (
	svgW, svgH                     = 760, 440
	padL, padR, padT, padB, legend = 70, 20, 36, 50, 190
)

// WriteSVG draws the plot.
func (p *Plot) WriteSVG(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", padL, html.EscapeString(p.Title))
	x0, x1 := float64(padL), float64(svgW-padR-legend)
	y0, y1 := float64(svgH-padB), float64(padT)
	if len(p.Categories) > 0 {
		y0 -= 90 // room for the slanted category names
	}
	// Y range.
	ymin, ymax := math.Inf(1), math.Inf(-1)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for i, y := range s.Y {
			if math.IsNaN(y) || (p.LogY && y <= 0) {
				continue
			}
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			if i < len(s.X) && !(p.LogX && s.X[i] <= 0) {
				xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
			}
		}
	}
	if math.IsInf(ymin, 0) {
		ymin, ymax = 0, 1
	}
	if !p.LogY {
		ymin = math.Min(0, ymin)
	}
	if ymax == ymin {
		ymax = ymin + 1
	}
	ty := axis(ymin, ymax, p.LogY)
	ymin, ymax = ty[0], ty[len(ty)-1]
	ymap := func(y float64) float64 {
		if p.LogY {
			return y0 - (math.Log10(y)-math.Log10(ymin))/(math.Log10(ymax)-math.Log10(ymin))*(y0-y1)
		}
		return y0 - (y-ymin)/(ymax-ymin)*(y0-y1)
	}
	for _, t := range ty {
		y := ymap(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x1, y)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x0-6, y+4, tick(t))
	}
	fmt.Fprintf(&b, `<text transform="translate(16,%.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (y0+y1)/2, html.EscapeString(p.YLabel))
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", (x0+x1)/2, svgH-6, html.EscapeString(p.XLabel))
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
				base := y0
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
					cx+cw*0.1+bw*float64(si), top, bw, math.Max(base-top, 0.5), palette[si%len(palette)],
					html.EscapeString(s.Name), html.EscapeString(name), Num(s.Y[c]))
			}
		}
	} else {
		if math.IsInf(xmin, 0) {
			xmin, xmax = 0, 1
		}
		if xmax == xmin {
			xmax = xmin + 1
		}
		tx := axis(xmin, xmax, p.LogX)
		xmin, xmax = tx[0], tx[len(tx)-1]
		xmap := func(x float64) float64 {
			if p.LogX {
				return x0 + (math.Log10(x)-math.Log10(xmin))/(math.Log10(xmax)-math.Log10(xmin))*(x1-x0)
			}
			return x0 + (x-xmin)/(xmax-xmin)*(x1-x0)
		}
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
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s (%s, %s)</title></circle>`+"\n", px, py, col, html.EscapeString(s.Name), Num(s.X[i]), Num(s.Y[i]))
			}
			if len(pts) > 1 {
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", col, strings.Join(pts, " "))
			}
		}
	}
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#444"/>`+"\n", x0, y1, x1-x0, y0-y1)
	for si, s := range p.Series {
		ly := float64(padT + 10 + 18*si)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`, x1+12, ly-10, palette[si%len(palette)])
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x1+30, ly, html.EscapeString(s.Name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
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
