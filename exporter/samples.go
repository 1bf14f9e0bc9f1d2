package exporter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/snmp"
)

// metricTree finds the metric whose OID is a prefix of a varbind's name.
type metricTree struct {
	children map[uint32]*metricTree
	metric   *Metric
}

func buildTree(ms []*Metric) *metricTree {
	root := &metricTree{children: map[uint32]*metricTree{}}
	for _, m := range ms {
		n := root
		for _, o := range m.oid {
			c := n.children[o]
			if c == nil {
				c = &metricTree{children: map[uint32]*metricTree{}}
				n.children[o] = c
			}
			n = c
		}
		n.metric = m
	}
	return root
}

func (t *metricTree) find(name snmp.OID) (*Metric, snmp.OID) {
	n := t
	for i, o := range name {
		n = n.children[o]
		if n == nil {
			return nil, nil
		}
		if n.metric != nil {
			return n.metric, name[i+1:]
		}
	}
	return nil, nil
}

func ints(o snmp.OID) []int {
	r := make([]int, len(o))
	for i, v := range o {
		r[i] = int(v)
	}
	return r
}

func joinInts(l []int) string {
	var b strings.Builder
	for i, v := range l {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

// prevOID is oid with its last sub-identifier one less: the column
// holding the type of an InetAddress or LldpPortId column.
func prevOID(oid string) string {
	i := strings.LastIndexByte(oid, '.')
	n, _ := strconv.Atoi(oid[i+1:])
	return oid[:i+1] + strconv.Itoa(n-1)
}

// addSamples adds the samples of one varbind of metric m.
func addSamples(f *families, m *Metric, index snmp.OID, vb *snmp.VarBind, pdus map[string]snmp.VarBind) {
	// ls is sorted and shared by the samples of the row: appending to it
	// copies (its capacity is its length).
	var ls []label
	switch {
	case m.labelKey != "":
		b := append(f.keyBuf[:0], m.labelKey...)
		b = append(b, '|')
		b = index.AppendTo(b)
		f.keyBuf = b
		if c, ok := f.labelCache[string(b)]; ok {
			ls = c
		} else {
			ls = rowLabels(index, m, pdus)
			if f.labelCache == nil {
				f.labelCache = map[string][]label{}
			}
			f.labelCache[string(b)] = ls
		}
	case len(m.Indexes) > 0 || len(m.Lookups) > 0:
		ls = rowLabels(index, m, pdus)
	}
	v := &vb.Value
	value := number(v)
	switch m.Type {
	case "counter":
		f.add(m.Name, m.Help, "counter", scale(m, value), ls)
		return
	case "gauge", "Float", "Double":
		f.add(m.Name, m.Help, "gauge", scale(m, value), ls)
		return
	case "DateAndTime":
		t, err := dateAndTime(v.Bytes)
		if err != nil {
			return
		}
		f.add(m.Name, m.Help, "gauge", scale(m, t), ls)
		return
	case "ParseDateAndTime":
		t, err := parseStrftime(valueString(v, "DisplayString", ""), m.DateTimePattern)
		if err != nil {
			return
		}
		f.add(m.Name, m.Help, "gauge", scale(m, t), ls)
		return
	case "NTPTimeStamp":
		t, err := ntpTimestamp(v.Bytes)
		if err != nil {
			return
		}
		f.add(m.Name, m.Help, "gauge", scale(m, t), ls)
		return
	case "EnumAsInfo":
		if hasLabel(ls, m.Name) {
			return
		}
		st, ok := m.EnumValues[int(value)]
		if !ok {
			st = strconv.Itoa(int(value))
		}
		f.add(m.Name+"_info", m.Help+" (EnumAsInfo)", "gauge", 1, append(ls, label{m.Name, st}))
		return
	case "EnumAsStateSet":
		cur := int(value)
		st, ok := m.EnumValues[cur]
		if !ok {
			st = strconv.Itoa(cur)
		}
		f.add(m.Name, m.Help+" (EnumAsStateSet)", "gauge", 1, append(append([]label(nil), ls...), label{m.Name, st}))
		for k, s := range m.EnumValues {
			if k != cur {
				f.add(m.Name, m.Help+" (EnumAsStateSet)", "gauge", 0, append(append([]label(nil), ls...), label{m.Name, s}))
			}
		}
		return
	case "Bits":
		if v.Type != snmp.OctetString {
			f.errs = append(f.errs, fmt.Sprintf("metric %s: BITS value is %v on the wire, not OCTET STRING", m.Name, v.Type))
			return
		}
		for k, s := range m.EnumValues {
			bit := 0.0
			if k >= 0 && k < len(v.Bytes)*8 && v.Bytes[k/8]&(0x80>>(k%8)) != 0 {
				bit = 1
			}
			f.add(m.Name, m.Help+" (Bits)", "gauge", bit, append(append([]label(nil), ls...), label{m.Name, s}))
		}
		return
	}
	// A string: its value becomes a label named after the metric.
	typ := m.Type
	if tm, ok := combined[typ]; ok {
		typ = "OctetString"
		if p, ok := pdus[prevOID(m.Oid)+"."+index.String()]; ok {
			if t, ok := tm[intValue(&p.Value)]; ok {
				typ = t
			}
		}
	}
	s := valueString(v, typ, m.DisplayHint)
	if len(m.RegexpExtracts) > 0 {
		for name, res := range m.RegexpExtracts {
			for _, re := range res {
				loc := re.re.FindStringSubmatchIndex(s)
				if loc == nil {
					continue
				}
				x, err := strconv.ParseFloat(string(re.re.ExpandString(nil, re.Value, s, loc)), 64)
				if err != nil {
					continue
				}
				f.add(m.Name+name, m.Help+" (regex extracted)", "gauge", scale(m, x), ls)
				break
			}
		}
		return
	}
	if !hasLabel(ls, m.Name) {
		ls = append(ls, label{m.Name, s})
	}
	f.add(m.Name, m.Help, "gauge", scale(m, 1), ls)
}

func hasLabel(ls []label, name string) bool {
	for _, l := range ls {
		if l.name == name {
			return true
		}
	}
	return false
}

// rowLabels returns the labels of a row, sorted by name, with no spare
// capacity.
func rowLabels(index snmp.OID, m *Metric, pdus map[string]snmp.VarBind) []label {
	labels, order := indexLabels(ints(index), m, pdus)
	ls := make([]label, 0, len(order))
	for _, n := range order {
		ls = append(ls, label{n, labels[n]})
	}
	sortLabels(ls)
	return ls
}

func scale(m *Metric, v float64) float64 {
	if m.Scale != 0 {
		v *= m.Scale
	}
	return v + m.Offset
}

// indexLabels decodes the index of a row into labels and applies the
// lookups. order lists the label names.
func indexLabels(idx []int, m *Metric, pdus map[string]snmp.VarBind) (map[string]string, []string) {
	labels := map[string]string{}
	var order []string
	set := func(n, v string) {
		if _, ok := labels[n]; !ok {
			order = append(order, n)
		}
		labels[n] = v
	}
	oids := map[string][]int{}
	for _, ix := range m.Indexes {
		s, used, rest := indexString(idx, ix.Type, ix.FixedSize, ix.Implied, ix.EnumValues)
		set(ix.Labelname, strings.ToValidUTF8(s, "\uFFFD"))
		oids[ix.Labelname] = used
		idx = rest
	}
	for _, l := range m.Lookups {
		if len(l.Labels) == 0 {
			if _, ok := labels[l.Labelname]; ok {
				delete(labels, l.Labelname)
				for i, n := range order {
					if n == l.Labelname {
						order = append(order[:i:i], order[i+1:]...)
						break
					}
				}
			}
			continue
		}
		oid := l.Oid
		for _, n := range l.Labels {
			oid += "." + joinInts(oids[n])
		}
		p, ok := pdus[strings.TrimPrefix(oid, ".")]
		if !ok {
			set(l.Labelname, "")
			continue
		}
		t := l.Type
		if tm, ok := combined[t]; ok {
			prev := prevOID(l.Oid)
			for _, n := range l.Labels {
				prev += "." + joinInts(oids[n])
			}
			if pp, ok := pdus[strings.TrimPrefix(prev, ".")]; ok {
				if tt, ok := tm[intValue(&pp.Value)]; ok {
					t = tt
				}
			}
		}
		if t == "EnumAsInfo" && len(l.EnumValues) > 0 {
			iv := intValue(&p.Value)
			if s, ok := l.EnumValues[iv]; ok {
				set(l.Labelname, s)
			} else {
				set(l.Labelname, strconv.Itoa(iv))
			}
		} else {
			set(l.Labelname, valueString(&p.Value, t, l.DisplayHint))
		}
		oids[l.Labelname] = []int{intValue(&p.Value)}
	}
	return labels, order
}
