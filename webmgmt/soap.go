package webmgmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tsnmp/tsnmp/mib/smi"
	"github.com/tsnmp/tsnmp/snmp"
)

// encodeSOAPWrapped appends a SOAP envelope whose Body holds
// <tsnmp:wrapper> around the XML form of res.
func encodeSOAPWrapped(b []byte, wrapper string, res *Result) []byte {
	b = appendSOAPStart(b)
	b = append(b, "<tsnmp:"...)
	b = append(b, wrapper...)
	b = append(b, ">\n"...)
	b = appendXML(b, res, true, "")
	b = append(b, "</tsnmp:"...)
	b = append(b, wrapper...)
	b = append(b, ">\n"...)
	return appendSOAPEnd(b)
}

// appendFault appends a SOAP 1.1 Fault envelope for e: faultcode Client
// for 4xx statuses and Server otherwise, the message as faultstring and
// the HTTP status in detail.
func appendFault(b []byte, e *httpError) []byte {
	code := "SOAP-ENV:Server"
	if e.status >= 400 && e.status < 500 {
		code = "SOAP-ENV:Client"
	}
	b = appendSOAPStart(b)
	b = append(b, "<SOAP-ENV:Fault>\n<faultcode>"...)
	b = append(b, code...)
	b = append(b, "</faultcode>\n<faultstring>"...)
	b = appendXMLText(b, e.msg)
	b = append(b, "</faultstring>\n<detail><tsnmp:status>"...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, "</tsnmp:status></detail>\n</SOAP-ENV:Fault>\n"...)
	return appendSOAPEnd(b)
}

// SOAPRequest is a parsed SOAP call.
type SOAPRequest struct {
	// Op is Get or Set (GetIfTable is Get of ifTable).
	Op        string
	Resource  string
	Community string
	// value is the Set's <value> or row element.
	value *element
}

// ParseSOAPRequest parses a SOAP 1.1 envelope whose Body holds one of
//
//	<tsnmp:Get><resource>ifTable/2</resource>[<community>public</community>]</tsnmp:Get>
//	<tsnmp:GetIfTable><community>public</community></tsnmp:GetIfTable>
//	<tsnmp:Set><resource>sysLocation.0</resource><value>rack 7</value></tsnmp:Set>
//	<tsnmp:Set><resource>ifTable/2</resource><ifEntry><ifAdminStatus>2</ifAdminStatus></ifEntry></tsnmp:Set>
func ParseSOAPRequest(body []byte) (*SOAPRequest, error) {
	root, err := parseXML(body)
	if err != nil {
		return nil, err
	}
	op, err := soapBody(root)
	if err != nil {
		return nil, err
	}
	req := &SOAPRequest{Op: localName(op.name)}
	switch req.Op {
	case "Get", "Set":
	case "GetIfTable":
		req.Op, req.Resource = "Get", "ifTable"
	default:
		return nil, malformed("SOAP: unknown operation %q (Get, Set, GetIfTable)", op.name.Local)
	}
	for _, c := range op.children {
		switch ln := localName(c.name); ln {
		case "resource":
			req.Resource = strings.TrimSpace(c.text.String())
		case "community":
			req.Community = strings.TrimSpace(c.text.String())
		default:
			if req.Op != "Set" || req.value != nil {
				return nil, malformed("SOAP: unexpected <%s> in %s", c.name.Local, req.Op)
			}
			req.value = c
		}
	}
	if req.Resource == "" {
		return nil, malformed("SOAP: %s without <resource>", req.Op)
	}
	if req.Op == "Set" && req.value == nil {
		return nil, malformed("SOAP: Set without a <value> or row element")
	}
	return req, nil
}

func (h *Handler) soap(w http.ResponseWriter, r *http.Request, q query) *httpError {
	if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); ct != "" {
		if ct = strings.ToLower(strings.TrimSpace(ct)); ct != "text/xml" && ct != "application/soap+xml" && ct != "application/xml" {
			return errorf(http.StatusUnsupportedMediaType, "SOAP requests are text/xml, not %q", ct)
		}
	}
	body, herr := h.readBody(w, r)
	if herr != nil {
		return herr
	}
	req, err := ParseSOAPRequest(body)
	if err != nil {
		h.Stats.BadBodies.Add(1)
		return errorf(http.StatusBadRequest, "%v", err)
	}
	res, err := ParsePath(req.Resource)
	if err != nil {
		return pathHTTPError(err)
	}
	var vbs []snmp.VarBind
	if req.Op == "Set" {
		if vbs, err = setFromXML(res, req.value); err != nil {
			h.Stats.BadBodies.Add(1)
			return errorf(http.StatusBadRequest, "%v", err)
		}
	}
	s, herr := h.open(r, q, req.Community)
	if herr != nil {
		return herr
	}
	defer s.Close()
	if req.Op == "Set" {
		return h.set(w, r, SOAP, s, res, vbs, "SetResponse")
	}
	return h.respond(w, r, SOAP, s, res, q, "GetResponse")
}

// setTarget returns the instance a single-object set writes: the object
// itself, or instance 0 of a scalar named without it.
func setTarget(res *Resource) (snmp.OID, *smi.Node, error) {
	switch {
	case res.Kind == KindObject:
		n := ObjectNode(res.OID)
		return res.OID, n, nil
	case res.Kind == KindSubtree && res.Node != nil && res.Node.Kind == smi.KindScalar && len(res.OID) == len(res.Node.OID):
		return append(res.OID.Clone(), 0), res.Node, nil
	}
	return nil, nil, fmt.Errorf("%s is a %v: PUT writes one object (e.g. sysLocation.0, ifTable/ifAdminStatus/2) or one row (ifTable/2)", res.Path, res.Kind)
}

// ParseSetJSON parses a PUT body in JSON for res: for one object
// {"value": V} (optionally with "type" and "encoding": "hex") or a bare
// JSON string or number; for a row {"column": V, ...}; for a subtree
// {"instance": V, ...} with instances named as in /mib/ paths
// ("sysContact.0").
func ParseSetJSON(res *Resource, body []byte) ([]snmp.VarBind, error) {
	if err := checkJSONDepth(body); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return nil, malformed("JSON: %v", err)
	}
	if d.More() {
		return nil, malformed("JSON: data after the document")
	}
	if res.Kind == KindRow {
		m, ok := doc.(map[string]any)
		if !ok || len(m) == 0 {
			return nil, malformed("a row PUT takes a JSON object of column names and values")
		}
		var vbs []snmp.VarBind
		for _, col := range Columns(res.Entry) {
			v, ok := m[col.Name]
			if !ok {
				continue
			}
			val, err := jsonValue(col, 0, v, false)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", col.Name, err)
			}
			vbs = append(vbs, snmp.VarBind{Name: append(snmp.OID(col.OID).Clone(), res.Index...), Value: val})
		}
		for k, v := range m {
			if k == "index" {
				if s, _ := v.(string); s != res.Index.String() {
					return nil, malformed("index %v does not match the resource's %s", v, res.Index)
				}
				continue
			}
			if columnOf(res.Entry, k) == nil {
				return nil, malformed("%s has no column %q", res.Table.Name, k)
			}
		}
		return vbs, nil
	}
	if m, ok := doc.(map[string]any); ok && res.Kind == KindSubtree {
		if _, one := m["value"]; !one || res.Node == nil || res.Node.Kind != smi.KindScalar {
			return setObjects(res, m)
		}
	}
	oid, n, err := setTarget(res)
	if err != nil {
		return nil, err
	}
	var t snmp.Type
	if m, ok := doc.(map[string]any); ok {
		for k := range m {
			if k != "value" && k != "type" && k != "encoding" && k != "oid" && k != "name" && k != "index" && k != "label" {
				return nil, malformed("unknown key %q: give {\"value\": ...} with optional \"type\" and \"encoding\"", k)
			}
		}
		if _, ok := m["value"]; !ok {
			return nil, malformed(`no "value"`)
		}
	}
	if n == nil || n.Base == smi.BaseNone {
		m, _ := doc.(map[string]any)
		if _, ok := m["type"]; !ok {
			return nil, malformed("%s is not an object this agent knows the type of: give \"type\"", res.Path)
		}
	}
	v, err := jsonValue(n, t, doc, false)
	if err != nil {
		return nil, err
	}
	return []snmp.VarBind{{Name: oid, Value: v}}, nil
}

// setObjects parses the JSON object of a subtree PUT: instance names
// (sysContact.0, or OIDs) under the subtree and their values, written
// together, all or nothing.
func setObjects(res *Resource, m map[string]any) ([]snmp.VarBind, error) {
	if len(m) == 0 {
		return nil, malformed("a subtree PUT takes a JSON object of instance names and values")
	}
	vbs := make([]snmp.VarBind, 0, len(m))
	for k, v := range m {
		oid, err := smi.Resolve(k)
		if err != nil || len(oid) > 128 {
			return nil, malformed("%q is not an object name", k)
		}
		if !snmp.OID(oid).HasPrefix(res.OID) {
			return nil, malformed("%s is not under %s", k, res.Path)
		}
		n := ObjectNode(oid)
		val, err := jsonValue(n, 0, v, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		vbs = append(vbs, snmp.VarBind{Name: oid, Value: val})
	}
	slices.SortFunc(vbs, func(a, b snmp.VarBind) int { return a.Name.Compare(b.Name) })
	return vbs, nil
}

// ParseSetXML parses a PUT body in XML for res: for one object
// <value [type="..."] [encoding="hex"]>V</value>; for a row an element
// (the entry's name, e.g. <ifEntry>) holding one element per column.
func ParseSetXML(res *Resource, body []byte) ([]snmp.VarBind, error) {
	root, err := parseXML(body)
	if err != nil {
		return nil, err
	}
	return setFromXML(res, root)
}

func setFromXML(res *Resource, e *element) ([]snmp.VarBind, error) {
	if res.Kind == KindRow {
		if len(e.children) == 0 {
			return nil, malformed("a row set takes an element holding one element per column")
		}
		var vbs []snmp.VarBind
		for _, c := range e.children {
			col := columnOf(res.Entry, localName(c.name))
			if col == nil {
				return nil, malformed("%s has no column %q", res.Table.Name, localName(c.name))
			}
			v, err := xmlValue(col, c)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", col.Name, err)
			}
			vbs = append(vbs, snmp.VarBind{Name: append(snmp.OID(col.OID).Clone(), res.Index...), Value: v})
		}
		return vbs, nil
	}
	oid, n, err := setTarget(res)
	if err != nil {
		return nil, err
	}
	if ln := localName(e.name); ln != "value" && ln != "object" {
		return nil, malformed("expected <value>, not <%s>", e.name.Local)
	}
	if len(e.children) > 0 {
		return nil, malformed("<value> holds elements")
	}
	v, err := xmlValue(n, e)
	if err != nil {
		return nil, err
	}
	return []snmp.VarBind{{Name: oid, Value: v}}, nil
}

// ParseSetText parses a text/plain PUT body: the value of one object
// whose type the MIB gives.
func ParseSetText(res *Resource, body []byte) ([]snmp.VarBind, error) {
	oid, n, err := setTarget(res)
	if err != nil {
		return nil, err
	}
	t, ok := typeOfNode(n)
	if !ok {
		return nil, malformed("%s is not an object this agent knows the type of: PUT JSON with \"type\"", res.Path)
	}
	v, err := parseValue(n, t, strings.TrimSuffix(string(body), "\n"), false)
	if err != nil {
		return nil, err
	}
	return []snmp.VarBind{{Name: oid, Value: v}}, nil
}

// wsdl describes the SOAP service (document/literal, SOAP 1.1 over HTTP).
const wsdl = `<?xml version="1.0" encoding="UTF-8"?>
<definitions name="tsnmp"
  targetNamespace="` + SOAPNamespace + `"
  xmlns="http://schemas.xmlsoap.org/wsdl/"
  xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
  xmlns:xsd="http://www.w3.org/2001/XMLSchema"
  xmlns:tsnmp="` + SOAPNamespace + `">
  <documentation>
    tsnmpd's MIB data over SOAP 1.1. A resource names a MIB object,
    table, column or subtree as the REST interface's paths under /mib/ do:
    "sysDescr.0", "system", "1.3.6.1.2.1.1", "ifTable" (whole table),
    "ifTable/2" (row), "ifTable/ifInOctets" (column),
    "ifTable/ifInOctets/2" (object). The community may be given in the
    request (as below), in an "Authorization: SNMP-Community NAME" header,
    or replaced by HTTP Basic (USM user, https only) or a TLS client
    certificate. Responses hold an &lt;object&gt; (one object),
    &lt;objects&gt; (column, subtree) or &lt;table&gt; of rows named after
    the MIB entry (ifEntry), each value with its xsi:type. Errors are
    SOAP Faults whose detail carries the HTTP status.
  </documentation>
  <types>
    <xsd:schema targetNamespace="` + SOAPNamespace + `" elementFormDefault="unqualified">
      <xsd:element name="Get">
        <xsd:complexType><xsd:sequence>
          <xsd:element name="resource" type="xsd:string"/>
          <xsd:element name="community" type="xsd:string" minOccurs="0"/>
        </xsd:sequence></xsd:complexType>
      </xsd:element>
      <xsd:element name="GetIfTable">
        <xsd:complexType><xsd:sequence>
          <xsd:element name="community" type="xsd:string" minOccurs="0"/>
        </xsd:sequence></xsd:complexType>
      </xsd:element>
      <xsd:element name="Set">
        <xsd:complexType><xsd:sequence>
          <xsd:element name="resource" type="xsd:string"/>
          <xsd:element name="community" type="xsd:string" minOccurs="0"/>
          <xsd:any processContents="lax"/>
        </xsd:sequence></xsd:complexType>
      </xsd:element>
      <xsd:complexType name="Values">
        <xsd:sequence><xsd:any processContents="lax" minOccurs="0" maxOccurs="unbounded"/></xsd:sequence>
      </xsd:complexType>
      <xsd:element name="GetResponse" type="tsnmp:Values"/>
      <xsd:element name="SetResponse" type="tsnmp:Values"/>
    </xsd:schema>
  </types>
  <message name="GetRequest"><part name="body" element="tsnmp:Get"/></message>
  <message name="GetIfTableRequest"><part name="body" element="tsnmp:GetIfTable"/></message>
  <message name="GetResponse"><part name="body" element="tsnmp:GetResponse"/></message>
  <message name="SetRequest"><part name="body" element="tsnmp:Set"/></message>
  <message name="SetResponse"><part name="body" element="tsnmp:SetResponse"/></message>
  <portType name="MIBPortType">
    <operation name="Get"><input message="tsnmp:GetRequest"/><output message="tsnmp:GetResponse"/></operation>
    <operation name="GetIfTable"><input message="tsnmp:GetIfTableRequest"/><output message="tsnmp:GetResponse"/></operation>
    <operation name="Set"><input message="tsnmp:SetRequest"/><output message="tsnmp:SetResponse"/></operation>
  </portType>
  <binding name="MIBBinding" type="tsnmp:MIBPortType">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="Get"><soap:operation soapAction="` + SOAPNamespace + `#Get"/>
      <input><soap:body use="literal"/></input><output><soap:body use="literal"/></output></operation>
    <operation name="GetIfTable"><soap:operation soapAction="` + SOAPNamespace + `#GetIfTable"/>
      <input><soap:body use="literal"/></input><output><soap:body use="literal"/></output></operation>
    <operation name="Set"><soap:operation soapAction="` + SOAPNamespace + `#Set"/>
      <input><soap:body use="literal"/></input><output><soap:body use="literal"/></output></operation>
  </binding>
  <service name="tsnmp">
    <port name="MIBPort" binding="tsnmp:MIBBinding"><soap:address location="/soap"/></port>
  </service>
</definitions>
`
