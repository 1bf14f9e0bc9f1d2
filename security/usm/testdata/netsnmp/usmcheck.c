/*
 * usmcheck exchanges complete SNMPv3 messages between tsnmp's USM and the
 * Net-SNMP library, without any network traffic. It is built and driven by
 * TestNetSNMPMessages (netsnmp_test.go).
 *
 *   usmcheck parse ENGINEID BOOTS TIME USER AUTH AUTHPW PRIV PRIVPW HEXMSG
 *       Parses a message from the authoritative engine ENGINEID as a
 *       non-authoritative Net-SNMP engine and prints
 *       "ok <command> <reqid> <securityName> <securityLevel> <varbinds>" or
 *       "err <snmp error>".
 *   usmcheck build ENGINEID BOOTS TIME USER AUTH AUTHPW PRIV PRIVPW LEVEL REQID
 *       Builds a GetRequest for sysDescr.0 to ENGINEID and prints it in hex.
 *
 *   usmcheck keychange AUTH OLDKEY KEYCHANGE
 *       Applies a KeyChange value (hex) to OLDKEY (hex) with decode_keychange
 *       and prints "ok <new key>".
 *
 * AUTH/PRIV are Net-SNMP names; "-" means none.
 */
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
#include <net-snmp/library/snmpusm.h>
#include <net-snmp/library/lcd_time.h>
#include <net-snmp/library/keytools.h>
#include <net-snmp/library/scapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t unhex(const char *s, u_char *out, size_t max) {
	size_t n = 0;
	unsigned int v;
	while (s[0] && s[1] && n < max) {
		sscanf(s, "%2x", &v);
		out[n++] = (u_char)v;
		s += 2;
	}
	return n;
}

int main(int argc, char **argv) {
	u_char eid[64], *msg;
	size_t eidlen, msglen;
	char line[1024];
	int boots, etime;

	setenv("MIBS", "", 1);
	setenv("MIBDIRS", "/nonexistent", 1);
	if (argc == 5 && strcmp(argv[1], "keychange") == 0) {
		u_char old[128], kc[256], nk[128];
		size_t oldlen, kclen, nklen = sizeof(nk), i;
		oid *hash;
		size_t hashlen;
		init_snmp("usmcheck");
		hash = sc_get_auth_oid(usm_lookup_auth_type(argv[2]), &hashlen);
		oldlen = unhex(argv[3], old, sizeof(old));
		kclen = unhex(argv[4], kc, sizeof(kc));
		if (hash == NULL || decode_keychange(hash, hashlen, old, oldlen, kc, kclen, nk, &nklen) != SNMPERR_SUCCESS) {
			printf("err decode_keychange\n");
			return 0;
		}
		printf("ok ");
		for (i = 0; i < nklen; i++)
			printf("%02x", nk[i]);
		printf("\n");
		return 0;
	}
	if (argc < 10) {
		fprintf(stderr, "usage\n");
		return 2;
	}
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_CONFIG_LOAD, 1);
	if (getenv("USMCHECK_DEBUG")) {
		debug_register_tokens(getenv("USMCHECK_DEBUG"));
		snmp_set_do_debugging(1);
	}
	init_snmp("usmcheck");

	eidlen = unhex(argv[2], eid, sizeof(eid));
	boots = atoi(argv[3]);
	etime = atoi(argv[4]);
	if (strcmp(argv[6], "-") == 0)
		snprintf(line, sizeof(line), "-e 0x%s %s", argv[2], argv[5]);
	else if (strcmp(argv[8], "-") == 0)
		snprintf(line, sizeof(line), "-e 0x%s %s %s %s", argv[2], argv[5], argv[6], argv[7]);
	else
		snprintf(line, sizeof(line), "-e 0x%s %s %s %s %s %s", argv[2], argv[5],
			 argv[6], argv[7], argv[8], argv[9]);
	usm_parse_create_usmUser("createUser", line);
	if (usm_get_user(eid, eidlen, argv[5]) == NULL) {
		printf("err createUser failed: %s\n", line);
		return 1;
	}
	set_enginetime(eid, eidlen, boots, etime, TRUE);

	if (strcmp(argv[1], "parse") == 0) {
		netsnmp_session sess;
		netsnmp_pdu *pdu;
		netsnmp_variable_list *v;
		int rc, n = 0;

		msg = malloc(strlen(argv[10]) / 2 + 1);
		msglen = unhex(argv[10], msg, strlen(argv[10]) / 2);
		snmp_sess_init(&sess);
		sess.version = SNMP_VERSION_3;
		sess.isAuthoritative = SNMP_SESS_NONAUTHORITATIVE;
		pdu = snmp_pdu_create(0);
		rc = snmp_parse(NULL, &sess, pdu, msg, msglen);
		if (rc != 0) {
			printf("err %d %s\n", sess.s_snmp_errno, snmp_api_errstring(sess.s_snmp_errno));
			return 0;
		}
		for (v = pdu->variables; v; v = v->next_variable)
			n++;
		printf("ok %d %ld %s %d %d\n", pdu->command, pdu->reqid,
		       pdu->securityName ? pdu->securityName : "", pdu->securityLevel, n);
		return 0;
	}
	if (strcmp(argv[1], "build") == 0 && argc >= 12) {
		netsnmp_session sess;
		netsnmp_pdu *pdu;
		size_t pktlen = 4096, offset = 0, i;
		u_char *pkt = malloc(pktlen);
		oid sysDescr[] = {1, 3, 6, 1, 2, 1, 1, 1, 0};
		int rc;

		snmp_sess_init(&sess);
		sess.version = SNMP_VERSION_3;
		sess.securityModel = SNMP_SEC_MODEL_USM;
		sess.securityName = argv[5];
		sess.securityNameLen = strlen(argv[5]);
		sess.securityLevel = atoi(argv[10]);
		sess.securityEngineID = eid;
		sess.securityEngineIDLen = eidlen;
		sess.contextEngineID = eid;
		sess.contextEngineIDLen = eidlen;
		pdu = snmp_pdu_create(SNMP_MSG_GET);
		pdu->version = SNMP_VERSION_3;
		pdu->securityModel = SNMP_SEC_MODEL_USM;
		pdu->securityLevel = sess.securityLevel;
		pdu->securityName = strdup(argv[5]);
		pdu->securityNameLen = strlen(argv[5]);
		pdu->securityEngineID = netsnmp_memdup(eid, eidlen);
		pdu->securityEngineIDLen = eidlen;
		pdu->contextEngineID = netsnmp_memdup(eid, eidlen);
		pdu->contextEngineIDLen = eidlen;
		pdu->contextName = strdup("");
		pdu->contextNameLen = 0;
		pdu->reqid = atol(argv[11]);
		pdu->msgid = atol(argv[11]);
		snmp_add_null_var(pdu, sysDescr, OID_LENGTH(sysDescr));
		rc = snmp_build(&pkt, &pktlen, &offset, &sess, pdu);
		if (rc != 0) {
			printf("err %d %s\n", sess.s_snmp_errno, snmp_api_errstring(sess.s_snmp_errno));
			return 0;
		}
		printf("ok ");
		for (i = pktlen - offset; i < pktlen; i++)
			printf("%02x", pkt[i]);
		printf("\n");
		return 0;
	}
	fprintf(stderr, "bad command\n");
	return 2;
}
