package exporter

import (
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
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
	// dup counts samples dropped as duplicates of earlier ones.
	seen map[string]bool
	errs []string
	// labelCache keeps the decoded index labels of a row per scrape,
	// shared by the metrics of a table with the same indexes and lookups.
	labelCache map[string][]label
}

func newFamilies() *families {
	return &families{byName: map[string]*family{}, seen: map[string]bool{}}
}

func (f *families) add(name, help, typ string, value float64, labels []label) {
	sort.Slice(labels, func(i, j int) bool { return labels[i].name < labels[j].name })
	fam := f.byName[name]
	if fam == nil {
		fam = &family{name: name, help: help, typ: typ}
		f.byName[name] = fam
	} else if fam.help != help || fam.typ != typ {
		f.errs = append(f.errs, "collected metric "+name+" has help "+strconv.Quote(help)+" but should have "+strconv.Quote(fam.help))
		return
	}
	var key strings.Builder
	key.WriteString(name)
	for _, l := range labels {
		key.WriteString("\xff" + l.name + "\xfe" + l.value)
	}
	if f.seen[key.String()] {
		f.errs = append(f.errs, "collected metric "+name+" "+labelText(labels)+" was collected before with the same name and label values")
		return
	}
	f.seen[key.String()] = true
	fam.samples = append(fam.samples, sample{labels: labels, value: value})
}

func labelText(ls []label) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.name + `="`)
		b.WriteString(escapeLabel(l.value))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// write writes the families sorted by name, samples sorted by labels.
func (f *families) write(w io.Writer) error {
	names := make([]string, 0, len(f.byName))
	for n := range f.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fam := f.byName[n]
		sort.SliceStable(fam.samples, func(i, j int) bool { return lessLabels(fam.samples[i].labels, fam.samples[j].labels) })
		b.WriteString("# HELP " + n + " " + helpEscaper.Replace(fam.help) + "\n")
		b.WriteString("# TYPE " + n + " " + fam.typ + "\n")
		for _, s := range fam.samples {
			b.WriteString(n)
			if len(s.labels) > 0 {
				b.WriteString(labelText(s.labels))
			}
			b.WriteByte(' ')
			b.WriteString(formatFloat(s.value))
			b.WriteByte('\n')
		}
		if b.Len() > 1<<16 {
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func lessLabels(a, b []label) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i].name != b[i].name {
			return a[i].name < b[i].name
		}
		if a[i].value != b[i].value {
			return a[i].value < b[i].value
		}
	}
	return len(a) < len(b)
}
