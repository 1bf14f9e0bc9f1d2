package webmgmt

import (
	"strconv"
	"unicode/utf8"

	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// Format is a representation of resources.
type Format uint8

// Formats. HTML pages are for browsers: the Handler renders them (they
// need the request's session for names, links and the identity), so
// Encode and Decode do not take HTML.
const (
	JSON Format = iota + 1
	XML
	SOAP
	HTML
)

var formatNames = [...]string{"", "json", "xml", "soap", "html"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// ContentType returns the media type of f.
func (f Format) ContentType() string {
	switch f {
	case XML:
		return "application/xml; charset=utf-8"
	case SOAP:
		return "text/xml; charset=utf-8"
	case HTML:
		return "text/html; charset=utf-8"
	}
	return "application/json"
}

// ParseFormat parses a ?format= value.
func ParseFormat(s string) (Format, bool) {
	switch s {
	case "json":
		return JSON, true
	case "xml":
		return XML, true
	case "soap":
		return SOAP, true
	case "html":
		return HTML, true
	}
	return 0, false
}

// Object is one instance of a result.
type Object struct {
	OID   snmp.OID
	Value snmp.Value
	// Node is the MIB definition OID is an instance of (its longest
	// known prefix); nil when no loaded module names it.
	Node *smi.Node
}

// name returns the object's descriptor and instance index.
func (o *Object) name() (string, snmp.OID) {
	if o.Node == nil {
		return "", nil
	}
	return o.Node.Name, o.OID[len(o.Node.OID):]
}

// ObjectNode returns the MIB definition an instance oid belongs to: the
// scalar or column above it (sysUpTime for sysUpTime.0, even though
// SNMPv2-MIB also names that instance sysUpTimeInstance), else the
// longest known prefix.
func ObjectNode(oid snmp.OID) *smi.Node {
	n, _ := smi.Lookup(oid)
	for p := n; p != nil; p = p.Parent() {
		if p.Kind == smi.KindScalar || p.Kind == smi.KindColumn {
			return p
		}
	}
	return n
}

// Result is what a read returned: the instances of a resource in OID
// order (for tables: column by column, as a walk returns them).
type Result struct {
	Resource *Resource
	Objects  []Object
	// Truncated is set when the walk stopped at the object limit; Next
	// is the OID to continue from.
	Truncated bool
	Next      snmp.OID
}

// Namespaces of the XML and SOAP representations.
const (
	XMLNamespace  = "urn:tsnmp:mib:1"
	SOAPNamespace = "urn:tsnmp:soap:1"
	soapEnvNS     = "http://schemas.xmlsoap.org/soap/envelope/"
)

// Encode appends the representation of res in format f to b.
func Encode(b []byte, f Format, res *Result) []byte {
	switch f {
	case XML:
		b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"...)
		return appendXML(b, res, false, ` xmlns="`+XMLNamespace+`"`)
	case SOAP:
		return encodeSOAPWrapped(b, "GetResponse", res)
	}
	return appendJSON(b, res)
}

// appendSOAPStart appends the envelope start of Figure 9 of the paper
// this interface is modelled on, with tsnmp's namespace.
func appendSOAPStart(b []byte) []byte {
	return append(b, `<?xml version="1.0" encoding="UTF-8"?>
<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" xmlns:SOAP-ENC="http://schemas.xmlsoap.org/soap/encoding/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:tsnmp="`+SOAPNamespace+`">
<SOAP-ENV:Body>
`...)
}

func appendSOAPEnd(b []byte) []byte {
	return append(b, "</SOAP-ENV:Body>\n</SOAP-ENV:Envelope>\n"...)
}

// row is one row of a table result: its index and the positions of its
// objects in Result.Objects, in column order.
type row struct {
	index snmp.OID
	objs  []int
}

// rows groups a table result's objects by index, in index order.
func rows(res *Result) []row {
	entry := res.Resource.Entry
	var out []row
	pos := map[string]int{}
	var key []byte
	for i := range res.Objects {
		o := &res.Objects[i]
		if len(o.OID) <= len(entry.OID)+1 || !o.OID.HasPrefix(entry.OID) {
			continue
		}
		idx := o.OID[len(entry.OID)+1:]
		key = idx.AppendTo(key[:0])
		k, ok := pos[string(key)]
		if !ok {
			k = len(out)
			pos[string(key)] = k
			out = append(out, row{index: idx})
		}
		out[k].objs = append(out[k].objs, i)
	}
	// Walks return column by column, each column in index order, so rows
	// are first seen in index order unless a column lacks early rows.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j-1].index.Compare(out[j].index) > 0; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// isTable reports whether res is written in table form.
func isTable(res *Result) bool {
	return (res.Resource.Kind == KindTable || res.Resource.Kind == KindRow) && res.Resource.Entry != nil
}

func appendJSON(b []byte, res *Result) []byte {
	r := res.Resource
	if r.Kind == KindObject && len(res.Objects) == 1 {
		b = appendJSONObject(b, &res.Objects[0])
		return append(b, '\n')
	}
	if isTable(res) {
		b = append(b, `{"table":`...)
		b = appendJSONString(b, r.Table.Name)
		b = append(b, `,"oid":"`...)
		b = snmp.OID(r.Table.OID).AppendTo(b)
		b = append(b, `","rows":[`...)
		for i, rw := range rows(res) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":"`...)
			b = rw.index.AppendTo(b)
			b = append(b, '"')
			for _, k := range rw.objs {
				o := &res.Objects[k]
				if o.Node == nil || len(o.OID) <= len(o.Node.OID) {
					continue
				}
				b = append(b, ',')
				b = appendJSONString(b, o.Node.Name)
				b = append(b, ':')
				start := len(b)
				var flagged bool
				b, flagged = appendJSONValue(b, o)
				if flagged {
					val := string(b[start:])
					b = append(b[:start], `{"value":`...)
					b = append(b, val...)
					b = append(b, `,"encoding":"hex"}`...)
				}
			}
			b = append(b, '}')
		}
	} else {
		b = append(b, `{"resource":`...)
		b = appendJSONString(b, r.Path)
		b = append(b, `,"oid":"`...)
		b = r.OID.AppendTo(b)
		b = append(b, `","objects":[`...)
		for i := range res.Objects {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONObject(b, &res.Objects[i])
		}
	}
	b = append(b, ']')
	if res.Truncated {
		b = append(b, `,"truncated":true,"next":"`...)
		b = res.Next.AppendTo(b)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

func appendJSONObject(b []byte, o *Object) []byte {
	name, idx := o.name()
	b = append(b, '{')
	if name != "" {
		b = append(b, `"name":`...)
		b = appendJSONString(b, name)
		b = append(b, `,"index":"`...)
		b = idx.AppendTo(b)
		b = append(b, `",`...)
	}
	b = append(b, `"oid":"`...)
	b = o.OID.AppendTo(b)
	b = append(b, `","type":"`...)
	b = append(b, typeName(o.Node, o.Value.Type)...)
	b = append(b, `","value":`...)
	b, flagged := appendJSONValue(b, o)
	if flagged {
		b = append(b, `,"encoding":"hex"`...)
	}
	if o.Node != nil && o.Value.Type == snmp.Integer {
		if l, ok := o.Node.EnumLabel(int64(o.Value.Num)); ok {
			b = append(b, `,"label":`...)
			b = appendJSONString(b, l)
		}
	}
	return append(b, '}')
}

// appendJSONValue appends the value as a JSON number or string.
func appendJSONValue(b []byte, o *Object) ([]byte, bool) {
	if isNumeric(o.Value.Type) {
		return appendValueText(b, o.Node, o.Value, false)
	}
	if o.Value.Type == snmp.Null {
		return append(b, "null"...), false
	}
	var tmp [64]byte
	t, flagged := appendValueText(tmp[:0], o.Node, o.Value, false)
	return appendJSONString(b, string(t)), flagged
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD (values that are not valid UTF-8 are written as hex instead).
func appendJSONString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, '\\', 'u', '2', '0', '2', hexd[r&15])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// appendXML appends the XML form of res; soap selects xsi:type
// attributes and the SOAP value forms instead of type attributes.
func appendXML(b []byte, res *Result, soap bool, rootAttrs string) []byte {
	r := res.Resource
	if r.Kind == KindObject && len(res.Objects) == 1 {
		return appendXMLObject(b, &res.Objects[0], soap, rootAttrs)
	}
	var trunc []byte
	if res.Truncated {
		trunc = append(trunc, ` truncated="true" next="`...)
		trunc = res.Next.AppendTo(trunc)
		trunc = append(trunc, '"')
	}
	if isTable(res) {
		b = append(b, `<table`...)
		b = append(b, rootAttrs...)
		b = append(b, ` name="`...)
		b = appendXMLText(b, r.Table.Name)
		b = append(b, `" oid="`...)
		b = snmp.OID(r.Table.OID).AppendTo(b)
		b = append(b, '"')
		b = append(b, trunc...)
		b = append(b, ">\n"...)
		for _, rw := range rows(res) {
			b = append(b, '<')
			b = append(b, r.Entry.Name...)
			b = append(b, ` index="`...)
			b = rw.index.AppendTo(b)
			b = append(b, "\">\n"...)
			for _, k := range rw.objs {
				o := &res.Objects[k]
				if o.Node == nil || len(o.OID) <= len(o.Node.OID) {
					continue
				}
				b = appendXMLElement(b, o.Node.Name, o, soap, "")
			}
			b = append(b, "</"...)
			b = append(b, r.Entry.Name...)
			b = append(b, ">\n"...)
		}
		return append(b, "</table>\n"...)
	}
	b = append(b, `<objects`...)
	b = append(b, rootAttrs...)
	b = append(b, ` resource="`...)
	b = appendXMLText(b, r.Path)
	b = append(b, `" oid="`...)
	b = r.OID.AppendTo(b)
	b = append(b, '"')
	b = append(b, trunc...)
	b = append(b, ">\n"...)
	for i := range res.Objects {
		b = appendXMLObject(b, &res.Objects[i], soap, "")
	}
	return append(b, "</objects>\n"...)
}

func appendXMLObject(b []byte, o *Object, soap bool, rootAttrs string) []byte {
	var attrs []byte
	attrs = append(attrs, rootAttrs...)
	if name, idx := o.name(); name != "" {
		attrs = append(attrs, ` name="`...)
		attrs = append(attrs, name...)
		attrs = append(attrs, `" index="`...)
		attrs = idx.AppendTo(attrs)
		attrs = append(attrs, '"')
	}
	attrs = append(attrs, ` oid="`...)
	attrs = o.OID.AppendTo(attrs)
	attrs = append(attrs, '"')
	if soap {
		// xsi:type does not tell Counter32 from Gauge32: say it.
		attrs = append(attrs, ` type="`...)
		attrs = append(attrs, typeName(o.Node, o.Value.Type)...)
		attrs = append(attrs, '"')
	}
	return appendXMLElement(b, "object", o, soap, string(attrs))
}

// appendXMLElement appends <name attrs type>value</name>.
func appendXMLElement(b []byte, name string, o *Object, soap bool, attrs string) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, attrs...)
	if soap {
		b = append(b, ` xsi:type="`...)
		b = append(b, xsdType(o.Node, o.Value)...)
		b = append(b, '"')
	} else {
		b = append(b, ` type="`...)
		b = append(b, typeName(o.Node, o.Value.Type)...)
		b = append(b, '"')
	}
	var tmp [64]byte
	t, flagged := appendValueText(tmp[:0], o.Node, o.Value, soap)
	if flagged && !soap {
		b = append(b, ` encoding="hex"`...)
	}
	b = append(b, '>')
	b = appendXMLText(b, string(t))
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, ">\n"...)
}

// appendXMLText appends s escaped for XML text and attribute values.
// Characters XML 1.0 cannot carry never reach here: values with control
// characters are written as hex.
func appendXMLText(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '&':
			b = append(b, "&amp;"...)
		case '"':
			b = append(b, "&quot;"...)
		case '\'':
			b = append(b, "&apos;"...)
		case '\r':
			b = append(b, "&#xD;"...)
		case '\t':
			b = append(b, "&#x9;"...)
		case '\n':
			b = append(b, "&#xA;"...)
		default:
			if c < 0x20 {
				b = append(b, "\uFFFD"...)
			} else if c >= utf8.RuneSelf {
				r, size := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && size == 1 || r == 0xFFFE || r == 0xFFFF {
					b = append(b, "\uFFFD"...)
				} else {
					b = append(b, s[i:i+size]...)
				}
				i += size
				continue
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return b
}
