"""A minimal pysnmp agent for tsnmp's interoperability tests.

Usage: pysnmp_agent.py PORT ENGINEID_HEX

Serves SNMPv2-MIB on 127.0.0.1:PORT (UDP) to the USM users
  md5user  (authNoPriv, HMAC-MD5, "authpass1")
  shaaes   (authPriv, HMAC-SHA, "authpass1", AES-128, "privpass1")
and prints "ready" on stdout once the socket is bound.
"""

import sys

from pysnmp.carrier.asyncio.dgram import udp
from pysnmp.entity import config, engine
from pysnmp.entity.rfc3413 import cmdrsp, context
from pysnmp.proto import rfc1902


def main():
    port = int(sys.argv[1])
    engine_id = bytes.fromhex(sys.argv[2])
    snmp_engine = engine.SnmpEngine(rfc1902.OctetString(engine_id))
    config.add_transport(
        snmp_engine,
        udp.DOMAIN_NAME,
        udp.UdpTransport().open_server_mode(("127.0.0.1", port)),
    )
    config.add_v3_user(snmp_engine, "md5user", config.USM_AUTH_HMAC96_MD5, "authpass1")
    config.add_v3_user(
        snmp_engine,
        "shaaes",
        config.USM_AUTH_HMAC96_SHA,
        "authpass1",
        config.USM_PRIV_CFB128_AES,
        "privpass1",
    )
    config.add_vacm_user(snmp_engine, 3, "md5user", "authNoPriv", (1, 3, 6))
    config.add_vacm_user(snmp_engine, 3, "shaaes", "authPriv", (1, 3, 6))
    ctx = context.SnmpContext(snmp_engine)
    cmdrsp.GetCommandResponder(snmp_engine, ctx)
    cmdrsp.NextCommandResponder(snmp_engine, ctx)
    cmdrsp.BulkCommandResponder(snmp_engine, ctx)
    snmp_engine.transport_dispatcher.job_started(1)
    print("ready", flush=True)
    try:
        snmp_engine.open_dispatcher()
    finally:
        snmp_engine.close_dispatcher()


if __name__ == "__main__":
    main()
