# Walks a subtree with pysnmp (v2c, community "private") and prints
# "OID = TYPE VALUE" lines, for tsnmpd's tests.
# Usage: pysnmp_walk.py HOST PORT OID
import asyncio, sys
from pysnmp.hlapi.v3arch.asyncio import *

async def main(host, port, oid):
    eng = SnmpEngine()
    target = await UdpTransportTarget.create((host, int(port)), timeout=5, retries=1)
    async for err, status, idx, vbs in walk_cmd(eng, CommunityData("private"), target, ContextData(),
                                                 ObjectType(ObjectIdentity(oid)), lexicographicMode=False, lookupMib=False):
        if err or status:
            print("ERROR", err, status.prettyPrint() if status else "")
            return 1
        for name, val in vbs:
            print(name.prettyPrint(), "=", val.__class__.__name__, val.prettyPrint())
    return 0

sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3])))
