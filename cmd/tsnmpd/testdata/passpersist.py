#!/usr/bin/env python3
"""A pass_persist program: Net-SNMP's line protocol on stdin/stdout.

PING -> PONG; get/getnext OID -> OID, TYPE, VALUE or NONE; set OID
"TYPE VALUE" -> DONE or an error word. Serves BASE.1.N (N=1..3, strings)
and BASE.2.0, a writable integer.
"""
import sys

BASE = (1, 3, 6, 1, 4, 1, 8072, 2, 256)
value = 5


def objects():
    objs = {BASE + (1, n): ("string", "line %d" % n) for n in range(1, 4)}
    objs[BASE + (2, 0)] = ("integer", str(value))
    return objs


def parse(s):
    return tuple(int(x) for x in s.strip().lstrip(".").split(".") if x)


def out(*lines):
    sys.stdout.write("".join(l + "\n" for l in lines))
    sys.stdout.flush()


while True:
    cmd = sys.stdin.readline()
    if not cmd:
        break
    cmd = cmd.strip()
    if cmd == "PING":
        out("PONG")
        continue
    oid = parse(sys.stdin.readline())
    objs = objects()
    if cmd == "get":
        if oid in objs:
            out("." + ".".join(map(str, oid)), *objs[oid])
        else:
            out("NONE")
    elif cmd == "getnext":
        after = [o for o in sorted(objs) if o > oid]
        if after:
            out("." + ".".join(map(str, after[0])), *objs[after[0]])
        else:
            out("NONE")
    elif cmd == "set":
        typ, _, val = sys.stdin.readline().strip().partition(" ")
        if oid != BASE + (2, 0):
            out("not-writable")
        elif typ != "integer":
            out("wrong-type")
        else:
            value = int(val)
            out("DONE")
