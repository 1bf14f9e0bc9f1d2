package webmgmt

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// Limits of the decoders (request bodies and, for clients, responses).
const (
	maxXMLDepth    = 16
	maxXMLElements = 1 << 20
	maxJSONDepth   = 16
)

// ErrMalformed is wrapped by decoding errors.
var ErrMalformed = errors.New("malformed document")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// element is a parsed XML element.
type element struct {
	name     xml.Name
	attrs    []xml.Attr
	text     strings.Builder
	children []*element
}

// plainAttr returns the value of an attribute without a namespace prefix.
func (e *element) plainAttr(local string) (string, bool) {
	for _, a := range e.attrs {
		if a.Name.Local == local && a.Name.Space == "" {
			return a.Value, true
		}
	}
	return "", false
}

// parseXML parses one XML document into a tree, refusing DTDs, deep
// nesting and huge element counts. encoding/xml expands only the five
// predefined entities and character references.
func parseXML(data []byte) (*element, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var stack []*element
	var root *element
	n := 0
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, malformed("XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if root != nil && len(stack) == 0 {
				return nil, malformed("XML: more than one root element")
			}
			if n++; n > maxXMLElements {
				return nil, malformed("XML: more than %d elements", maxXMLElements)
			}
			if len(stack) >= maxXMLDepth {
				return nil, malformed("XML: nested deeper than %d", maxXMLDepth)
			}
			e := &element{name: t.Name, attrs: append([]xml.Attr(nil), t.Attr...)}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, e)
			} else {
				root = e
			}
			stack = append(stack, e)
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, malformed("XML: unexpected end element")
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, malformed("XML: text outside the root element")
			}
		case xml.Directive:
			return nil, malformed("XML: DTDs and directives are not accepted")
		}
	}
	if root == nil {
		return nil, malformed("XML: no root element")
	}
	if len(stack) != 0 {
		return nil, malformed("XML: unclosed element <%s>", stack[len(stack)-1].name.Local)
	}
	return root, nil
}

// localName strips a namespace prefix that RawToken leaves in Local.
func localName(n xml.Name) string {
	if n.Space != "" {
		return n.Local
	}
	if i := strings.IndexByte(n.Local, ':'); i >= 0 {
		return n.Local[i+1:]
	}
	return n.Local
}

// soapBody returns the first element of a SOAP 1.1 envelope's Body.
func soapBody(root *element) (*element, error) {
	if localName(root.name) != "Envelope" {
		return nil, malformed("SOAP: root element is <%s>, not Envelope", root.name.Local)
	}
	for _, c := range root.children {
		if localName(c.name) == "Body" {
			if len(c.children) == 0 {
				return nil, malformed("SOAP: empty Body")
			}
			return c.children[0], nil
		}
	}
	return nil, malformed("SOAP: no Body")
}

// Decode parses a representation the handler produced back into variable
// bindings, in document order. Values are the exact SNMP values: the
// object's MIB definition supplies the type where the representation
// leaves it out. A SOAP Fault or error document is returned as an error.
func Decode(f Format, data []byte) ([]snmp.VarBind, error) {
	switch f {
	case JSON:
		return decodeJSON(data)
	case XML:
		root, err := parseXML(data)
		if err != nil {
			return nil, err
		}
		return decodeXMLRoot(root)
	case SOAP:
		root, err := parseXML(data)
		if err != nil {
			return nil, err
		}
		body, err := soapBody(root)
		if err != nil {
			return nil, err
		}
		switch localName(body.name) {
		case "Fault":
			return nil, fmt.Errorf("SOAP fault: %s", faultString(body))
		case "GetResponse", "SetResponse":
			if len(body.children) != 1 {
				return nil, malformed("SOAP: GetResponse holds %d elements", len(body.children))
			}
			return decodeXMLRoot(body.children[0])
		}
		return nil, malformed("SOAP: unexpected <%s> in Body", body.name.Local)
	}
	return nil, fmt.Errorf("unknown format %v", f)
}

func faultString(f *element) string {
	for _, c := range f.children {
		if localName(c.name) == "faultstring" {
			return c.text.String()
		}
	}
	return "(no faultstring)"
}

// decodeXMLRoot decodes an <object>, <objects> or <table> element.
func decodeXMLRoot(root *element) ([]snmp.VarBind, error) {
	switch localName(root.name) {
	case "object":
		vb, err := decodeXMLObject(root)
		if err != nil {
			return nil, err
		}
		return []snmp.VarBind{vb}, nil
	case "objects":
		vbs := make([]snmp.VarBind, 0, len(root.children))
		for _, c := range root.children {
			vb, err := decodeXMLObject(c)
			if err != nil {
				return nil, err
			}
			vbs = append(vbs, vb)
		}
		return vbs, nil
	case "table":
		name, _ := root.plainAttr("name")
		table, entry, err := tableNodes(name)
		if err != nil {
			return nil, err
		}
		var vbs []snmp.VarBind
		for _, r := range root.children {
			is, _ := r.plainAttr("index")
			idx, err := snmp.ParseOID(is)
			if err != nil {
				return nil, malformed("row of %s with bad index %q", table.Name, is)
			}
			for _, c := range r.children {
				col := columnOf(entry, localName(c.name))
				if col == nil {
					return nil, malformed("%s has no column %q", table.Name, localName(c.name))
				}
				v, err := xmlValue(col, c)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", col.Name, is, err)
				}
				vbs = append(vbs, snmp.VarBind{Name: append(snmp.OID(col.OID).Clone(), idx...), Value: v})
			}
		}
		return vbs, nil
	case "error":
		return nil, fmt.Errorf("error document: %s", root.text.String())
	}
	return nil, malformed("unexpected root element <%s>", root.name.Local)
}

func tableNodes(name string) (table, entry *smi.Node, err error) {
	n := smi.FindNode(name)
	if n == nil || n.Kind != smi.KindTable {
		return nil, nil, malformed("%q is not a known table", name)
	}
	table, entry = tableOf(n)
	if entry == nil {
		return nil, nil, malformed("table %s has no row definition", name)
	}
	return table, entry, nil
}

func decodeXMLObject(e *element) (snmp.VarBind, error) {
	if localName(e.name) != "object" {
		return snmp.VarBind{}, malformed("unexpected element <%s>", e.name.Local)
	}
	os, _ := e.plainAttr("oid")
	oid, err := snmp.ParseOID(os)
	if err != nil {
		return snmp.VarBind{}, malformed("object with bad oid %q", os)
	}
	n := ObjectNode(oid)
	v, err := xmlValue(n, e)
	if err != nil {
		return snmp.VarBind{}, fmt.Errorf("%s: %w", os, err)
	}
	return snmp.VarBind{Name: oid, Value: v}, nil
}

// xmlValue decodes an element's value: its type from the type attribute,
// else from xsi:type where that is exact, else from the MIB.
func xmlValue(n *smi.Node, e *element) (snmp.Value, error) {
	t, ok := snmp.Type(0), false
	if ts, has := e.plainAttr("type"); has {
		if t, ok = typeFromName(ts); !ok {
			return snmp.Value{}, malformed("unknown type %q", ts)
		}
	} else if t, ok = typeOfNode(n); !ok {
		return snmp.Value{}, malformed("no type given and the object is unknown")
	}
	enc, _ := e.plainAttr("encoding")
	hexFlag := enc == "hex"
	for _, a := range e.attrs {
		if a.Name.Local == "type" && a.Name.Space != "" && a.Value == "xsd:hexBinary" {
			hexFlag = true
		}
	}
	return parseValue(n, t, e.text.String(), hexFlag)
}

// decodeJSON decodes the JSON object, subtree and table forms.
func decodeJSON(data []byte) ([]snmp.VarBind, error) {
	if err := checkJSONDepth(data); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		return nil, malformed("JSON: %v", err)
	}
	if d.More() {
		return nil, malformed("JSON: data after the document")
	}
	if e, ok := doc["error"].(string); ok {
		return nil, fmt.Errorf("error document: %s", e)
	}
	if _, ok := doc["type"]; ok {
		vb, err := jsonObject(doc)
		if err != nil {
			return nil, err
		}
		return []snmp.VarBind{vb}, nil
	}
	if objs, ok := doc["objects"].([]any); ok {
		vbs := make([]snmp.VarBind, 0, len(objs))
		for _, o := range objs {
			m, ok := o.(map[string]any)
			if !ok {
				return nil, malformed("JSON: objects holds a non-object")
			}
			vb, err := jsonObject(m)
			if err != nil {
				return nil, err
			}
			vbs = append(vbs, vb)
		}
		return vbs, nil
	}
	rowsv, ok := doc["rows"].([]any)
	if !ok {
		return nil, malformed("JSON: neither an object, objects nor rows")
	}
	name, _ := doc["table"].(string)
	table, entry, err := tableNodes(name)
	if err != nil {
		return nil, err
	}
	var vbs []snmp.VarBind
	for _, rv := range rowsv {
		m, ok := rv.(map[string]any)
		if !ok {
			return nil, malformed("JSON: rows holds a non-object")
		}
		is, _ := m["index"].(string)
		idx, err := snmp.ParseOID(is)
		if err != nil {
			return nil, malformed("row of %s with bad index %q", table.Name, is)
		}
		// Columns in OID order, as the row was written.
		for _, col := range Columns(entry) {
			cv, ok := m[col.Name]
			if !ok {
				continue
			}
			v, err := jsonValue(col, 0, cv, false)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", col.Name, is, err)
			}
			vbs = append(vbs, snmp.VarBind{Name: append(snmp.OID(col.OID).Clone(), idx...), Value: v})
		}
		for k := range m {
			if k != "index" && columnOf(entry, k) == nil {
				return nil, malformed("%s has no column %q", table.Name, k)
			}
		}
	}
	return vbs, nil
}

func jsonObject(m map[string]any) (snmp.VarBind, error) {
	os, _ := m["oid"].(string)
	oid, err := snmp.ParseOID(os)
	if err != nil {
		return snmp.VarBind{}, malformed("object with bad oid %q", os)
	}
	n := ObjectNode(oid)
	var t snmp.Type
	if ts, ok := m["type"].(string); ok {
		if t, ok = typeFromName(ts); !ok {
			return snmp.VarBind{}, malformed("unknown type %q", ts)
		}
	}
	enc, _ := m["encoding"].(string)
	v, err := jsonValue(n, t, m["value"], enc == "hex")
	if err != nil {
		return snmp.VarBind{}, fmt.Errorf("%s: %w", os, err)
	}
	return snmp.VarBind{Name: oid, Value: v}, nil
}

// jsonValue converts a JSON value for object n; t is the type if given
// (0: from the MIB). A JSON object {"value": ..., "encoding": "hex"} is
// a flagged value.
func jsonValue(n *smi.Node, t snmp.Type, v any, hexFlag bool) (snmp.Value, error) {
	if m, ok := v.(map[string]any); ok {
		enc, _ := m["encoding"].(string)
		if ts, ok := m["type"].(string); ok {
			if t, ok = typeFromName(ts); !ok {
				return snmp.Value{}, malformed("unknown type %q", ts)
			}
		}
		return jsonValue(n, t, m["value"], enc == "hex")
	}
	if t == 0 {
		var ok bool
		if t, ok = typeOfNode(n); !ok {
			return snmp.Value{}, malformed("no type given and the object is unknown")
		}
	}
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return snmp.Value{}, malformed("bad number %s", x)
		}
		return jsonNumberValue(n, t, f, x.String())
	case float64:
		return jsonNumberValue(n, t, x, fmt.Sprint(x))
	case string:
		return parseValue(n, t, x, hexFlag)
	case nil:
		if t == snmp.Null {
			return snmp.NullValue(), nil
		}
		return snmp.Value{}, malformed("no value")
	}
	return snmp.Value{}, malformed("a JSON %T is not a value", v)
}

// checkJSONDepth refuses JSON nested deeper than maxJSONDepth before it
// is decoded.
func checkJSONDepth(data []byte) error {
	depth := 0
	inStr, esc := false, false
	for _, c := range data {
		switch {
		case esc:
			esc = false
		case inStr:
			if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			if depth++; depth > maxJSONDepth {
				return malformed("JSON nested deeper than %d", maxJSONDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}
