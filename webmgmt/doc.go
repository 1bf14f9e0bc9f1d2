// Package webmgmt serves the agent's MIB tree over HTTP/1.1 and HTTP/2
// (JSON, plain XML and SOAP 1.1) under the same access control as SNMP:
// every request is authenticated to an SNMP principal (securityModel,
// securityName, securityLevel, contextName) and VACM decides what it may
// read or write, through the agent's command responder (agent.Session).
//
// Resources (GET and HEAD; PUT writes):
//
//	/mib/sysDescr.0               one object
//	/mib/ifTable                  a whole table, by row
//	/mib/ifTable/2                one row (index 2)
//	/mib/ifTable/ifInOctets       one column (also /mib/ifInOctets)
//	/mib/ifTable/ifInOctets/2     one object (also /mib/ifInOctets.2)
//	/mib/system, /mib/1.3.6.1.2.1.1   every instance in a subtree
//	/soap                         SOAP 1.1 Get, GetIfTable and Set (POST)
//	/soap?wsdl, /wsdl             the WSDL
//	/metrics                      the handler's counters (authenticated)
//
// Names are any form mib/smi resolves (SNMPv2-MIB::sysDescr.0,
// .1.3.6.1.2.1.1.1.0); indexes are dotted numbers or Net-SNMP's index
// syntax. A whole read comes from one snapshot of the MIB (one
// mib.Request), as one SNMP PDU does.
//
// Representations are chosen by ?format=json|xml|soap|html or the Accept
// header (application/json, application/xml or text/xml,
// application/soap+xml, text/html); the default is JSON. Browsers get
// HTML pages (html.go): an index of the caller's view at /mib/, tables
// drawn with their INDEX columns, values printed as tsnmp prints them. Responses are compressed
// with zstd or gzip when Accept-Encoding allows.
//
// Identities:
//
//	Authorization: SNMP-Community NAME   community (v2c, noAuthNoPriv)
//	?community=NAME                      the same, in the query string
//	Authorization: Basic (https only)    USM user and its authentication
//	                                     password (usm, authPriv)
//	TLS client certificate               mapped to a securityName by a
//	                                     CertMapper (tsm, authPriv)
//
// Errors are HTTP statuses with a body in the negotiated format saying
// what went wrong; see Stats for the counters.
package webmgmt
