#!/usr/bin/env python3
"""A small AgentX subagent (RFC 2741) for tsnmpd's tests and tsnmp bench.

It speaks network byte order (the master must honour the flag), registers
PREFIX (1.3.6.1.4.1.99998) and serves:
  PREFIX.1.0          INTEGER, writable; values above 100 fail TestSet (wrongValue)
  PREFIX.2.1.2.N      OCTET STRING "row N" for N in 1..ROWS
  PREFIX.2.1.3.N      Counter64 N * 2**33
It sends one Notify-PDU after registering, and prints "registered" on stdout.
Usage: subagent.py SOCKET [ROWS]
"""
import bisect
import socket
import struct
import sys

PREFIX = (1, 3, 6, 1, 4, 1, 99998)
NBO = 0x10
T_OPEN, T_CLOSE, T_REGISTER, T_GET, T_GETNEXT, T_GETBULK = 1, 2, 3, 5, 6, 7
T_TESTSET, T_COMMIT, T_UNDO, T_CLEANUP, T_NOTIFY, T_RESPONSE = 8, 9, 10, 11, 12, 18
INTEGER, OCTETS, OID, COUNTER64, NOSUCHOBJECT, ENDOFMIB = 2, 4, 6, 70, 128, 130


def enc_oid(oid, include=0):
    oid = tuple(oid)
    prefix = 0
    if len(oid) > 4 and oid[:4] == (1, 3, 6, 1) and 0 < oid[4] < 256:
        prefix, oid = oid[4], oid[5:]
    return struct.pack("!BBBB", len(oid), prefix, include, 0) + b"".join(struct.pack("!I", s) for s in oid)


def dec_oid(b, off):
    n, prefix, include, _ = struct.unpack_from("!BBBB", b, off)
    off += 4
    subs = list(struct.unpack_from("!%dI" % n, b, off))
    off += 4 * n
    if prefix:
        subs = [1, 3, 6, 1, prefix] + subs
    return tuple(subs), include, off


def enc_octets(s):
    return struct.pack("!I", len(s)) + s + b"\0" * ((4 - len(s) % 4) % 4)


def enc_vb(oid, typ, val):
    b = struct.pack("!HH", typ, 0) + enc_oid(oid)
    if typ == INTEGER:
        b += struct.pack("!i", val)
    elif typ == OCTETS:
        b += enc_octets(val)
    elif typ == COUNTER64:
        b += struct.pack("!Q", val)
    return b


def dec_vb(b, off):
    typ, _ = struct.unpack_from("!HH", b, off)
    name, _, off = dec_oid(b, off + 4)
    val = None
    if typ == INTEGER:
        (val,) = struct.unpack_from("!i", b, off)
        off += 4
    elif typ in (OCTETS, 64, 68):
        (n,) = struct.unpack_from("!I", b, off)
        val = b[off + 4:off + 4 + n]
        off += 4 + n + (4 - n % 4) % 4
    elif typ in (65, 66, 67):
        (val,) = struct.unpack_from("!I", b, off)
        off += 4
    elif typ == COUNTER64:
        (val,) = struct.unpack_from("!Q", b, off)
        off += 8
    elif typ == OID:
        val, _, off = dec_oid(b, off)
    return (name, typ, val), off


class Subagent:
    def __init__(self, path, rows):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.sid = 0
        self.packet = 0
        self.value = 42
        self.pending = None
        self.rows = rows
        self.cache = None

    def objects(self):
        if self.cache is None:
            self.cache = self.build()
        return self.cache

    def build(self):
        objs = {PREFIX + (1, 0): (INTEGER, self.value)}
        for n in range(1, self.rows + 1):
            objs[PREFIX + (2, 1, 2, n)] = (OCTETS, b"row %d" % n)
            objs[PREFIX + (2, 1, 3, n)] = (COUNTER64, n << 33)
        return objs, sorted(objs)

    def send(self, typ, payload=b"", packet=None, txn=0, flags=0):
        if packet is None:
            self.packet += 1
            packet = self.packet
        hdr = struct.pack("!BBBBIIII", 1, typ, NBO | flags, 0, self.sid, txn, packet, len(payload))
        self.s.sendall(hdr + payload)

    def recv(self):
        hdr = self.readn(20)
        ver, typ, flags, _, sid, txn, packet, n = struct.unpack(
            "!BBBBIIII" if flags_nbo(hdr) else "<BBBBIIII", hdr)
        return typ, flags, sid, txn, packet, self.readn(n)

    def readn(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                sys.exit(0)
            b += c
        return b

    def respond(self, txn, packet, err=0, index=0, vbs=b""):
        self.send(T_RESPONSE, struct.pack("!IHH", 0, err, index) + vbs, packet=packet, txn=txn)

    def run(self):
        self.send(T_OPEN, struct.pack("!B3x", 0) + enc_oid(PREFIX) + enc_octets(b"python test subagent"))
        typ, _, sid, _, _, payload = self.recv()
        self.sid = sid
        self.send(T_REGISTER, struct.pack("!BBBB", 0, 127, 0, 0) + enc_oid(PREFIX))
        typ, _, _, _, _, payload = self.recv()
        if struct.unpack_from("!IHH", payload)[1] != 0:
            sys.exit("registration refused")
        # A notification: snmpTrapOID.0 = PREFIX.0.1
        trap = struct.pack("!HH", OID, 0) + enc_oid((1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0)) + enc_oid(PREFIX + (0, 1))
        self.send(T_NOTIFY, trap)
        self.recv()
        print("registered", flush=True)
        while True:
            typ, flags, sid, txn, packet, payload = self.recv()
            off = 0
            if flags & 0x08:
                (n,) = struct.unpack_from("!I", payload, 0)
                off = 4 + n + (4 - n % 4) % 4
            if typ in (T_GET, T_GETNEXT, T_GETBULK):
                self.read_request(typ, txn, packet, payload, off)
            elif typ == T_TESTSET:
                vbs = []
                while off < len(payload):
                    vb, off = dec_vb(payload, off)
                    vbs.append(vb)
                err, index = 0, 0
                for i, (name, t, val) in enumerate(vbs):
                    if name != PREFIX + (1, 0):
                        err, index = 17, i + 1  # notWritable
                    elif t != INTEGER:
                        err, index = 7, i + 1  # wrongType
                    elif val > 100:
                        err, index = 10, i + 1  # wrongValue
                    if err:
                        break
                self.pending = None if err else vbs[-1][2]
                self.respond(txn, packet, err, index)
            elif typ == T_COMMIT:
                self.old, self.value = self.value, self.pending
                self.cache = None
                self.respond(txn, packet)
            elif typ == T_UNDO:
                self.value = self.old
                self.cache = None
                self.respond(txn, packet)
            elif typ == T_CLEANUP:
                self.pending = None
            elif typ == T_CLOSE:
                sys.exit(0)

    def read_request(self, typ, txn, packet, payload, off):
        nonrep, maxrep = 0, 1
        if typ == T_GETBULK:
            nonrep, maxrep = struct.unpack_from("!HH", payload, off)
            off += 4
        ranges = []
        while off < len(payload):
            start, include, off = dec_oid(payload, off)
            end, _, off = dec_oid(payload, off)
            ranges.append((start, include, end))
        objs, names = self.objects()
        out = b""
        for i, (start, include, end) in enumerate(ranges):
            if typ == T_GET:
                t, v = objs.get(start, (NOSUCHOBJECT, None))
                out += enc_vb(start, t, v)
                continue
            reps = 1 if typ == T_GETNEXT or i < nonrep else maxrep
            cur, inc = start, include
            for _ in range(reps):
                found = None
                k = bisect.bisect_left(names, cur) if inc else bisect.bisect_right(names, cur)
                if k < len(names) and (not end or names[k] < end):
                    found = names[k]
                if found is None:
                    out += enc_vb(cur, ENDOFMIB, None)
                    break
                out += enc_vb(found, *objs[found])
                cur, inc = found, 0
        self.respond(txn, packet, vbs=out)


def flags_nbo(hdr):
    return hdr[2] & NBO


if __name__ == "__main__":
    Subagent(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5).run()
