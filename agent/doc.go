// Package agent is tsnmp's SNMP entity in the agent role: the dispatcher,
// the message processing models and the command responder of RFC 3411.
//
// An Agent implements transport.Handler. ServeSNMP takes one message and
// the transport's tmStateReference and returns the reply, if any:
//
//   - the dispatcher (ServeSNMP) peeks at msgVersion and counts the
//     SNMPv2-MIB snmp group;
//   - SNMPv1 and SNMPv2c messages are checked by the community model of
//     RFC 3584 (Policy.Communities), which gives a securityName and
//     contextName;
//   - SNMPv3 messages (RFC 3412 §7.2) go to the security model that
//     msgSecurityModel names in Policy.SecurityModels (a security.Model:
//     *usm.USM, *tsm.Model); an error indication that calls for a Report
//     comes back as a *security.ReportError and is answered with a Report
//     PDU where RFC 3412 allows one;
//   - the command responder (RFC 3413 §3.2) resolves the Principal's VACM
//     view once per request (Policy.Access) and answers Get, GetNext,
//     GetBulk and Set from the mib.Tree, within the size that the
//     requester's msgMaxSize, the transport and Policy.MaxResponse allow.
//
// Everything that a configuration reload replaces is in a Policy, swapped
// atomically by SetPolicy; the counters (Stats), the MIB tree and the
// engine state outlive reloads. Session gives the same command responder,
// under the same view lookup, to requesters authenticated outside SNMP
// (webmgmt's HTTP principals).
package agent
