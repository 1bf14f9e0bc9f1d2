/*
 * vectors.c prints key-derivation and cipher vectors computed by the
 * Net-SNMP library, in the line format read by crypto_test.go.
 *
 * Regenerate testdata/netsnmp/vectors.txt (needs libsnmp-dev):
 *   cc -o /tmp/vectors vectors.c $(net-snmp-config --libs) && /tmp/vectors > vectors.txt
 */
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
#include <net-snmp/library/keytools.h>
#include <net-snmp/library/scapi.h>
#include <net-snmp/library/transform_oids.h>
#include <net-snmp/library/snmpusm.h>
#include <stdio.h>
#include <string.h>

static void hex(const char *tag, const u_char *b, size_t n) {
	size_t i;
	printf("%s ", tag);
	for (i = 0; i < n; i++)
		printf("%02x", b[i]);
	printf("\n");
}

static void oidstr(const char *name, const oid *o, size_t n) {
	size_t i;
	printf("oid %s ", name);
	for (i = 0; i < n; i++)
		printf(i ? ".%lu" : "%lu", (unsigned long)o[i]);
	printf("\n");
}

struct auth { const char *name; oid *o; size_t n; };
struct priv { const char *name; int type; };

int main(void) {
	struct auth auths[] = {
		{"MD5", usmHMACMD5AuthProtocol, 10},
		{"SHA", usmHMACSHA1AuthProtocol, 10},
		{"SHA-224", usmHMAC128SHA224AuthProtocol, 10},
		{"SHA-256", usmHMAC192SHA256AuthProtocol, 10},
		{"SHA-384", usmHMAC256SHA384AuthProtocol, 10},
		{"SHA-512", usmHMAC384SHA512AuthProtocol, 10},
	};
	const char *privnames[] = {"DES", "AES", "AES128", "AES192", "AES256",
		"AES192C", "AES256C", "aes256c", "3DES", NULL};
	const char *authnames[] = {"MD5", "SHA", "SHA1", "SHA-224", "SHA-256",
		"SHA-384", "SHA-512", "sha-512", "SHA512", "SHA256", NULL};
	const char *pass[] = {"maplesyrup", "authpriv-Pa55phrase!"};
	u_char eids[2][32];
	size_t eidl[2];
	size_t a, p, e, i;
	netsnmp_priv_alg_info *pai;
	u_char plain[100];

	init_snmp("vectors");
	oidstr("usmNoAuthProtocol", usmNoAuthProtocol, 10);
	oidstr("usmDESPrivProtocol", usmDESPrivProtocol, 10);
	oidstr("usmAESPrivProtocol", usmAESPrivProtocol, 10);
	oidstr("usmAES192PrivProtocol", usmAES192PrivProtocol, 9);
	oidstr("usmAES256PrivProtocol", usmAES256PrivProtocol, 9);
	oidstr("usmAES192CiscoPrivProtocol", usmAES192CiscoPrivProtocol, 11);
	oidstr("usmAES256CiscoPrivProtocol", usmAES256CiscoPrivProtocol, 11);
	for (a = 0; a < 6; a++)
		oidstr(auths[a].name, auths[a].o, auths[a].n);
	for (i = 0; privnames[i]; i++) {
		int t = usm_lookup_priv_type(privnames[i]);
		printf("privname %s %d %s\n", privnames[i], t,
		       t >= 0 ? usm_lookup_priv_str(t) : "-");
	}
	for (i = 0; authnames[i]; i++)
		printf("authname %s %d\n", authnames[i],
		       usm_lookup_auth_type(authnames[i]));
	for (i = 0; (pai = sc_get_priv_alg_byindex(i)) != NULL; i++) {
		printf("privalg %s type=0x%x len=%d iv=%d pad=%d ", pai->name,
		       pai->type, pai->proper_length, pai->iv_length, pai->pad_size);
		oidstr(pai->name, pai->alg_oid, pai->oid_len);
	}

	memset(eids[0], 0, 12);
	eids[0][11] = 2;
	eidl[0] = 12;
	memcpy(eids[1], "\x80\x00\x1f\x88\x80\xe9\xbd\x0c\x1d\x12\x66\x7a\x51\x00\x00\x00\x00", 17);
	eidl[1] = 17;
	for (i = 0; i < sizeof(plain); i++)
		plain[i] = (u_char)(i * 7 + 3);

	for (a = 0; a < 6; a++) {
		for (p = 0; p < 2; p++) {
			for (e = 0; e < 2; e++) {
				u_char ku[64], kul[64], mac[64];
				size_t kulen = sizeof(ku), kullen = sizeof(kul), maclen;
				generate_Ku(auths[a].o, 10, (const u_char *)pass[p],
					    strlen(pass[p]), ku, &kulen);
				generate_kul(auths[a].o, 10, eids[e], eidl[e], ku,
					     kulen, kul, &kullen);
				printf("key %s %s ", auths[a].name, pass[p]);
				hex("", eids[e], eidl[e]);
				hex("ku", ku, kulen);
				hex("kul", kul, kullen);
				maclen = sc_get_auth_maclen(sc_get_authtype(auths[a].o, 10));
				sc_generate_keyed_hash(auths[a].o, 10, kul, kullen,
						       plain, sizeof(plain), mac, &maclen);
				hex("mac", mac, maclen);
				for (i = 0; (pai = sc_get_priv_alg_byindex(i)) != NULL; i++) {
					u_char *buf = calloc(1, 128);
					size_t blen = kullen;
					u_char iv[16], ct[128];
					size_t ctlen = sizeof(ct), ivlen = 16;
					int rc;
					if (pai->type == 0)
						continue;
					memcpy(buf, kul, kullen);
					rc = netsnmp_extend_kul(pai->proper_length, auths[a].o, 10,
								pai->type, eids[e], eidl[e],
								&buf, &blen, 128);
					printf("privkey %s %d ", pai->name, rc);
					hex("", buf, blen);
					for (ivlen = 0; ivlen < 16; ivlen++)
						iv[ivlen] = (u_char)(0xa0 + ivlen);
					ivlen = pai->iv_length;
					rc = sc_encrypt(pai->alg_oid, pai->oid_len, buf, blen,
							iv, ivlen, plain, pai->type == 1 ? 96 : sizeof(plain),
							ct, &ctlen);
					printf("cipher %s %d ", pai->name, rc);
					hex("", ct, ctlen);
					free(buf);
				}
			}
		}
	}
	return 0;
}
