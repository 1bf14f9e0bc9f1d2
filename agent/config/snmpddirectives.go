package config

import (
	"strings"
	"sync"
)

// netSNMPDirectives says, for each snmpd.conf(5) directive that tsnmpd
// accepts without acting on it, what snmpd would have done with it. The
// warning for such a line names the file, the line and this text, so an
// operator migrating from snmpd sees what the agent no longer does.
// Directives tsnmpd implements are not listed (ignoredDirectives and the
// parser's cases say which); a directive in neither is unknown: warned
// about as Net-SNMP does, or fatal under Strict.
var netSNMPDirectives = sync.OnceValue(func() map[string]string {
	return map[string]string{
		// Agent behaviour.
		"agentgroup":                     "run snmpd as this group after start (tsnmpd: -g or --group)",
		"agentuser":                      "run snmpd as this user after start (tsnmpd: -u or --user)",
		"leave_pidfile":                  "leave the pid file behind at exit",
		"dontlogtcpwrappersconnects":     "not log connections accepted by TCP wrappers",
		"engineidtype":                   "derive the engine ID from an IPv4/IPv6/MAC address",
		"engineidnic":                    "take the MAC address for engineIDType 3 from this interface",
		"serialize":                      "serialise requests to handlers",
		"bulk_to_next":                   "turn GetBulk into GetNext for some handlers",
		"stash_cache":                    "cache tables for walks",
		"snmpd":                          "configure a Net-SNMP internal option",
		"debug":                          "turn on Net-SNMP debug tokens",
		"avoid_multiple_packet_requests": "avoid multi-packet requests",
		// VACM forms for other security models.
		"com2secunix":           "map Unix-socket (AgentX/local) requests to a security name",
		"authgroup":             "define a group for a notification authorisation (snmptrapd)",
		"authaccess":            "grant access for notification types to a group (snmptrapd)",
		"tsmusetransportprefix": "prefix TSM security names with the transport (tls:, dtls:, ssh:)",
		// AgentX subagent side and SMUX.
		"smuxpeer":   "accept a SMUX peer (RFC 1227) for this subtree",
		"smuxsocket": "listen for SMUX peers on this address",
		// Notifications.
		"authtrapenable":          "send authenticationFailure notifications",
		"trapsink":                "send SNMPv1 traps to this host",
		"trap2sink":               "send SNMPv2c traps to this host",
		"informsink":              "send SNMPv2c informs to this host",
		"trapcommunity":           "use this community in the traps it sends",
		"trapsess":                "send notifications over this session (any version)",
		"v1trapaddress":           "set the agent address in SNMPv1 traps",
		"iquerysecname":           "query its own MIB as this user for DisMan monitors",
		"agentsecname":            "query its own MIB as this user for DisMan monitors",
		"monitor":                 "poll an object and send a notification on a threshold (DisMan Event MIB)",
		"defaultmonitors":         "send notifications when UCD-SNMP-MIB error flags are set",
		"linkupdownnotifications": "send linkUp/linkDown on interface status changes",
		"notificationevent":       "define a DisMan Event notification",
		"setevent":                "define a DisMan Event SET action",
		"strictdisman":            "order DisMan Event varbinds strictly",
		"repeat":                  "SET an object periodically (DisMan Schedule MIB)",
		"cron":                    "SET an object on a schedule (DisMan Schedule MIB)",
		"at":                      "SET an object once at a time (DisMan Schedule MIB)",
		// Extension and UCD-SNMP-MIB monitoring.
		"proc":                "watch a process count in prTable",
		"procfix":             "run a command to fix a prTable error",
		"load":                "set laTable thresholds",
		"swap":                "set the memory table's swap threshold",
		"extendfix":           "run a command to fix an extend entry",
		"execfix":             "run a command to fix an extTable error",
		"dlmod":               "load a shared-object MIB module",
		"perl":                "run embedded Perl",
		"perlinitfile":        "run this Perl file at start",
		"disableperl":         "turn off embedded Perl",
		"override":            "serve a fixed value for an object",
		"injecthandler":       "insert a handler into a MIB module's chain",
		"table":               "define a data table for add_row",
		"add_row":             "add a row to a table defined with table",
		"proxy":               "forward a subtree to another agent",
		"sysorldescr":         "set an sysORTable description",
		"diskio":              "list only these devices in diskIOTable",
		"diskio_exclude_fd":   "leave floppy disks out of diskIOTable",
		"diskio_exclude_loop": "leave loop devices out of diskIOTable",
		"diskio_exclude_ram":  "leave RAM disks out of diskIOTable",
		"diskio_exclude_md":   "leave software RAID devices out of diskIOTable",
		"diskio_exclude_nbd":  "leave network block devices out of diskIOTable",
		// Interfaces.
		// What snmpd 5.9.3 and 5.9.5 do with these three on Linux: the
		// first changes nothing (ifType and ifSpeed stay the kernel's),
		// the other two thin ipAddressTable alone, IF-MIB unchanged.
		"interface":                  "set an interface's ifType and ifSpeed, which snmpd 5.9 on Linux leaves as the kernel gives them",
		"interface_fadeout":          "keep vanished interfaces this long",
		"interface_replace_old":      "reuse the index of a vanished interface of the same name",
		"ifmib_max_num_ifaces":       "leave the addresses of interfaces whose ifIndex is above this number out of ipAddressTable, ifTable and ipAddrTable unchanged (snmpd 5.9 on Linux)",
		"include_ifmib_iface_prefix": "keep in ipAddressTable only the addresses of interfaces whose names match one of these regular expressions anywhere, ifTable and ipAddrTable unchanged (snmpd 5.9 on Linux)",
		// Host resources.
		"ignoredisk": "leave a disk out of hrDiskStorageTable",
		// snmpd's persistent file, when found in a configuration file.
		"oldengineid":           "restore the engine ID (read from the persistent file, not here)",
		"engineboots":           "restore the boot counter (read from the persistent file, not here)",
		"usmuser":               "restore a USM user (read from the persistent file, not here)",
		"setserialno":           "restore snmpSetSerialNo (read from the persistent file, not here)",
		"psyslocation":          "restore an SNMP-set sysLocation (read from the persistent file, not here)",
		"psyscontact":           "restore an SNMP-set sysContact (read from the persistent file, not here)",
		"psysname":              "restore an SNMP-set sysName (read from the persistent file, not here)",
		"vacmview":              "restore an SNMP-created view (read from the persistent file, not here)",
		"vacmgroup":             "restore an SNMP-created group (read from the persistent file, not here)",
		"vacmaccess":            "restore an SNMP-created access entry (read from the persistent file, not here)",
		"vacmauthaccess":        "restore an SNMP-created access entry (read from the persistent file, not here)",
		"iftable":               "restore ifTable settings",
		"ifxtable":              "restore ifXTable settings",
		"snmpnotifyfiltertable": "restore notification filters",
		"targetaddr":            "restore an SNMP-TARGET-MIB address",
		"targetparams":          "restore SNMP-TARGET-MIB parameters",
		"notifytable":           "restore an SNMP-NOTIFICATION-MIB entry",
		"schedtable":            "restore a DisMan Schedule entry",
		"mteobjectstable":       "restore a DisMan Event entry",
		"mtetriggertable":       "restore a DisMan Event entry",
		"mteeventtable":         "restore a DisMan Event entry",
		"nlmconfig":             "restore NOTIFICATION-LOG-MIB settings",
		"nsextendlinelimit":     "restore an extend entry's line limit",
	}
})

// wouldHave returns what snmpd would have done with directive d (lower
// case), or "".
func wouldHave(d string) string {
	if s, ok := netSNMPDirectives()[d]; ok {
		return s
	}
	if strings.HasPrefix(d, "deliverbynotify") {
		return "deliver MIB data in notifications (NET-SNMP deliverByNotify)"
	}
	return ""
}
