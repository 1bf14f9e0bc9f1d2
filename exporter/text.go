package exporter

import (
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The Prometheus text exposition format (version 0.0.4) is written here
// by hand: the exporter produces constant samples only, and this file is
// smaller than the client library with its dependencies (see
// docs/exporter.md).

type label struct{ name, value string }

type sample struct {
	labels []label
	value  float64
}

type family struct {
	name, help, typ string
	samples         []sample
}

// families collects the samples of one scrape by family name.
type families struct {
	byName map[string]*family
	errs   []string
	// labelCache keeps the decoded index labels of a row per scrape,
	// sorted, shared by the metrics of a table with the same indexes and
	// lookups (and by their samples, which do not modify them).
	labelCache map[string][]label
	keyBuf     []byte
	finished   bool
}

func newFamilies() *families {
	return &families{byName: map[string]*family{}}
}

// sortLabels sorts a few labels by name; they usually are sorted already.
func sortLabels(ls []label) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].name < ls[j-1].name; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

// add adds a sample; labels must not be modified afterwards.
func (f *families) add(name, help, typ string, value float64, labels []label) {
	sortLabels(labels)
	fam := f.byName[name]
	if fam == nil {
		fam = &family{name: name, help: help, typ: typ}
		f.byName[name] = fam
	} else if fam.help != help || fam.typ != typ {
		f.errs = append(f.errs, "collected metric "+name+" has help "+strconv.Quote(help)+" but should have "+strconv.Quote(fam.help))
		return
	}
	fam.samples = append(fam.samples, sample{labels: labels, value: value})
	f.finished = false
}

// merge adds the samples of o.
func (f *families) merge(o *families) {
	for _, of := range o.byName {
		fam := f.byName[of.name]
		if fam == nil {
			f.byName[of.name] = of
			continue
		}
		if fam.help != of.help || fam.typ != of.typ {
			f.errs = append(f.errs, "collected metric "+of.name+" has help "+strconv.Quote(of.help)+" but should have "+strconv.Quote(fam.help))
			continue
		}
		fam.samples = append(fam.samples, of.samples...)
	}
	f.errs = append(f.errs, o.errs...)
	f.finished = false
}

// finish sorts every family's samples by labels and reports (and drops)
// samples collected twice with the same labels.
func (f *families) finish() {
	if f.finished {
		return
	}
	f.finished = true
	for _, fam := range f.byName {
		slices.SortStableFunc(fam.samples, func(a, b sample) int { return compareLabels(a.labels, b.labels) })
		out := fam.samples[:0]
		for i, s := range fam.samples {
			if i > 0 && compareLabels(fam.samples[i-1].labels, s.labels) == 0 {
				f.errs = append(f.errs, "collected metric "+fam.name+" "+labelText(s.labels)+" was collected before with the same name and label values")
				continue
			}
			out = append(out, s)
		}
		fam.samples = out
	}
}

func labelText(ls []label) string {
	return string(appendLabels(nil, ls))
}

func appendLabels(b []byte, ls []label) []byte {
	b = append(b, '{')
	for i, l := range ls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, l.name...)
		b = append(b, '=', '"')
		b = appendEscaped(b, l.value, true)
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendEscaped escapes backslash and newline, and the double quote in
// label values.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '"' && quote:
			b = append(b, '\\', '"')
		default:
			b = append(b, c)
		}
	}
	return b
}

func escapeLabel(s string) string { return string(appendEscaped(nil, s, true)) }

func formatFloat(v float64) string { return string(appendFloat(nil, v)) }

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// writeBufs are the output buffers of write, kept between scrapes.
var writeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1<<15); return &b }}

// write writes the families sorted by name, samples sorted by labels.
func (f *families) write(w io.Writer) error {
	f.finish()
	names := make([]string, 0, len(f.byName))
	for n := range f.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	bp := writeBufs.Get().(*[]byte)
	defer writeBufs.Put(bp)
	b := (*bp)[:0]
	defer func() { *bp = b[:0] }()
	for _, n := range names {
		fam := f.byName[n]
		b = append(b, "# HELP "...)
		b = append(b, n...)
		b = append(b, ' ')
		b = appendEscaped(b, fam.help, false)
		b = append(b, "\n# TYPE "...)
		b = append(b, n...)
		b = append(b, ' ')
		b = append(b, fam.typ...)
		b = append(b, '\n')
		for _, s := range fam.samples {
			b = append(b, n...)
			if len(s.labels) > 0 {
				b = appendLabels(b, s.labels)
			}
			b = append(b, ' ')
			b = appendFloat(b, s.value)
			b = append(b, '\n')
		}
		if len(b) > 1<<15 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}

func compareLabels(a, b []label) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i].name, b[i].name); c != 0 {
			return c
		}
		if c := strings.Compare(a[i].value, b[i].value); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}
