
# ---------------------------------------------------------------------------
# What the names of the interface mean. Everything below is the same for
# every program; the tables above it (FIELDS, MAPS, DEFAULTS, CLASSES) are
# the program's.

import argparse
import json
import struct
import sys


class Undetermined(Exception):
    """A test needs a value that neither the packet nor the map state gives
    as an offset or a length."""


class OutOfPacket(Exception):
    """A test reads bytes beyond the end of the packet."""


class _Oracle:
    """Outcomes of the tests on values the packet and the map state do not
    give (a hash, the clock, a random number): forced ones first, then
    False; classify tries every sequence."""

    def __init__(self, forced):
        self.forced = forced
        self.taken = []

    def choose(self):
        i = len(self.taken)
        c = self.forced[i] if i < len(self.forced) else False
        self.taken.append(c)
        return c


_oracle = _Oracle([])


class Unknown:
    """A value neither the packet nor the map state gives: arithmetic keeps
    it unknown, a test on it has either outcome."""

    def _op(self, *other):
        return Unknown()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _op
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _op
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _op
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _op
    __neg__ = __invert__ = _op

    def _test(self, other):
        return _oracle.choose()

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _test
    __hash__ = None

    def __bool__(self):
        return _oracle.choose()

    def __index__(self):
        raise Undetermined("an offset depends on a value the packet and the state do not give")

    def __repr__(self):
        return "unknown()"


def opaque():
    """A term too large to print."""
    return Unknown()


def hash(*inputs):  # noqa: A001 - the interface's name for an abstracted hash
    """A hash the analysis abstracts, of the inputs listed."""
    return Unknown()


def unknown(*_):
    return Unknown()


def now():
    return Unknown()


def random():
    return Unknown()


def cpu():
    return Unknown()


def concat(*parts):
    return Unknown()


def branch_at(insn):
    return Unknown()


class _Mem:
    def __getitem__(self, _):
        return Unknown()


mem = _Mem()


class _Ctx:
    ingress_ifindex = 1
    rx_queue_index = 0


ctx = _Ctx()


def bit(x, k):
    return (x >> k) & 1


def _le(n):
    def swap(x):
        if isinstance(x, Unknown):
            return x
        return int.from_bytes((x & ((1 << (8 * n)) - 1)).to_bytes(n, "big"), "little")
    swap.__name__ = "le%d" % (8 * n)
    return swap


le16, le24, le32, le40, le48, le56, le64 = (_le(n) for n in range(2, 9))
le128 = _le(16)


class BE(int):
    """Bytes of the packet in network order, as they sit in the packet: a
    map key takes them byte for byte."""

    def __new__(cls, data):
        v = int.__new__(cls, int.from_bytes(data, "big"))
        v.n = len(data)
        return v


VLAN_TYPES = (0x8100, 0x88A8)


class Header:
    """A header at a byte offset of the packet; its fields by name."""

    def __init__(self, pkt, off, fields):
        self._pkt, self._off, self._fields = pkt, off, fields

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._fields:
            raise AttributeError(name)
        o, n = self._fields[name]
        return self._pkt[self._off + o:self._off + o + n]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._pkt[self._off + i.start:self._off + i.stop]
        return self._pkt[self._off + i]

    @property
    def off(self):
        """The header's offset in the packet."""
        return self._off

    @property
    def tcp_hlen(self):
        """The length in bytes of a TCP header here (data offset * 4)."""
        return (self[12] >> 4) * 4


class IPv4(Header):
    @property
    def ihl(self):
        return self.ver_ihl & 15

    @property
    def version(self):
        return self.ver_ihl >> 4


class TCP(Header):
    pass


for _i, _flag in enumerate(("fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr")):
    setattr(TCP, _flag, property(lambda h, b=1 << _i: h.flags & b != 0))


class QUIC(Header):
    long_header = property(lambda h: h.flags & 0x80 != 0)
    fixed_bit = property(lambda h: h.flags & 0x40 != 0)


class Tags:
    """Stacked VLAN tags: pkt.vlan is the first, pkt.vlan[i] the i-th."""

    def __init__(self, pkt):
        self._pkt = pkt

    def __getitem__(self, i):
        return Header(self._pkt, 14 + 4 * i, FIELDS["vlan"])

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self[0], name)


class ExtHeaders:
    """IPv6 extension headers, walked by their lengths: ext[0] follows the
    fixed header, ext[k+1] follows ext[k] ((hdr_len + 1) * 8 bytes)."""

    def __init__(self, pkt, off):
        self._pkt, self._off = pkt, off

    def __getitem__(self, k):
        off = self._off
        for _ in range(k):
            off += (self._pkt[off + 1] << 3) + 8
        return Header(self._pkt, off, FIELDS["ext"])


class IPv6(Header):
    @property
    def ext(self):
        return ExtHeaders(self._pkt, self._off + 40)

    def after(self, steps):
        """The header reached from the fixed header's end by the steps
        named in a string ("opt frag ah"): "opt" over an options header ((hdr_len + 1) * 8 bytes), "ah" over
        an authentication header ((hdr_len + 2) * 4), "frag" over a
        fragment header (8)."""
        off = self._off + 40
        for step in steps.split():
            if step == "opt":
                off += (self._pkt[off + 1] << 3) + 8
            elif step == "ah":
                off += (self._pkt[off + 1] << 2) + 8
            elif step == "frag":
                off += 8
            else:
                raise ValueError("unknown extension-header step %r" % (step,))
        return Header(self._pkt, off, FIELDS["ext"])


class Packet:
    """The frame: pkt[i] is a byte, pkt[i:j] and pkt[i, k, ...] the bytes
    as a number in network order, pkt.len the length; headers by name,
    their offsets from the tags and lengths of this packet."""

    def __init__(self, data):
        self.data = bytes(data)
        self.len = len(self.data)

    def _byte(self, i):
        i = i.__index__()
        if not 0 <= i < self.len:
            raise OutOfPacket("byte %d of a %d-byte packet" % (i, self.len))
        return self.data[i]

    def __getitem__(self, i):
        if isinstance(i, slice):
            lo, hi = i.start.__index__(), i.stop.__index__()
            return BE(bytes(self._byte(k) for k in range(lo, hi)))
        if isinstance(i, tuple):
            return BE(bytes(self._byte(k) for k in i))
        return self._byte(i)

    def _u16(self, off):
        return self._byte(off) << 8 | self._byte(off + 1)

    def _l3(self):
        off = 12
        while self._u16(off) in VLAN_TYPES:
            off += 4
        return off + 2, self._u16(off)

    @property
    def eth(self):
        return Header(self, 0, FIELDS["eth"])

    @property
    def vlan(self):
        return Tags(self)

    @property
    def ip(self):
        return IPv4(self, self._l3()[0], FIELDS["ip"])

    @property
    def ipv6(self):
        return IPv6(self, self._l3()[0], FIELDS["ipv6"])

    def _l4(self):
        off, kind = self._l3()
        if kind == 0x86DD:
            return off + 40
        return off + (self._byte(off) & 15) * 4

    @property
    def tcp(self):
        return TCP(self, self._l4(), FIELDS["tcp"])

    @property
    def udp(self):
        return Header(self, self._l4(), FIELDS["udp"])

    @property
    def icmp(self):
        return Header(self, self._l4(), FIELDS["icmp"])

    icmpv6 = icmp

    @property
    def quic(self):
        return QUIC(self, self._l4() + 8, FIELDS["quic"])


def _hex(s):
    s = s.strip()
    if s.startswith(("0x", "0X")):
        s = s[2:]
    for sep in " _:-":
        s = s.replace(sep, "")
    return bytes.fromhex(s)


def _bytes_of(v, size):
    """A key member's bytes: packet bytes as they sit, a number in the
    machine's (little-endian) order."""
    if isinstance(v, BE):
        b = v.to_bytes(v.n, "big")
        return (b + bytes(size))[:size]
    return (int(v) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


class Value:
    """The value the map's last lookup found: value[i:j] its bytes in
    memory order, read as a number in network order (le64(...) reads them
    as the machine does), value.member the member of its C type."""

    def __init__(self, m, data, prefix=""):
        self._m, self._data, self._prefix = m, data, prefix

    def __getitem__(self, i):
        if self._data is None:
            return Unknown()
        if isinstance(i, slice):
            return BE(self._data[i.start:i.stop])
        if isinstance(i, tuple):
            return BE(bytes(self._data[k] for k in i))
        return self._data[i]

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        path = self._prefix + name
        members = self._m.info["value_members"]
        if any(p.startswith(path + ".") for p in members) and path not in members:
            return Value(self._m, self._data, path + ".")
        if path not in members:
            raise AttributeError("%s.value has no member %s" % (self._m.name, path))
        if self._data is None:
            return Unknown()
        o, n = members[path]
        return int.from_bytes(self._data[o:o + n], "little")


class Map:
    """A map's contents, from the object's own data and --maps."""

    def __init__(self, name, info):
        self.name, self.info = name, info
        self.entries = {}
        self.found = None

    def load(self, entries):
        self.entries = {}
        for e in entries:
            v = e.get("value")
            if v is None:
                v = e["values"][0]  # CPU 0, as the interpreter runs
            self.entries[_hex(e["key"])] = _hex(v)

    def _key(self, args, kw):
        size = self.info["key_size"]
        if args:
            if isinstance(args[0], Unknown):
                return None
            return _bytes_of(args[0], size)
        key = bytearray(size)
        for name, v in kw.items():
            if isinstance(v, Unknown):
                return None
            o, n = self.info["key_members"][name]
            key[o:o + n] = _bytes_of(v, n)
        return bytes(key)

    def contains(self, *args, **kw):
        key = self._key(args, kw)
        kind = self.info["type"]
        self.found = None
        if key is None or kind not in ("hash", "lru_hash", "percpu_hash", "lru_percpu_hash",
                                       "array", "percpu_array", "lpm_trie"):
            return _oracle.choose()
        if kind in ("array", "percpu_array"):
            if int.from_bytes(key[:4], "little") >= self.info["max_entries"]:
                return False
            self.found = self.entries.get(key[:4], bytes(self.info["value_size"]))
            return True
        if kind == "lpm_trie":
            plen, best = int.from_bytes(key[:4], "little"), None
            for k, v in self.entries.items():
                p = int.from_bytes(k[:4], "little")
                if p <= plen and _prefix_eq(k[4:], key[4:], p) and (best is None or p > best[0]):
                    best = (p, v)
            if best is None:
                return False
            self.found = best[1]
            return True
        self.found = self.entries.get(key)
        return self.found is not None

    @property
    def value(self):
        return Value(self, self.found)

    def update(self, *_):
        return Unknown()

    def delete(self, *_):
        return Unknown()


def _prefix_eq(a, b, bits):
    for i in range(bits):
        if (a[i // 8] >> (7 - i % 8)) & 1 != (b[i // 8] >> (7 - i % 8)) & 1:
            return False
    return True


class Class:
    """The class an input falls in and its cost."""

    def __init__(self, id, cost):
        self.id, self.cost = id, cost


def cls(id, cost):
    return Class(id, cost)


def load_state(path):
    """Lays a map state (mapstate/format.md) over the object's own data."""
    named = {}
    if path:
        with open(path) as f:
            named = json.load(f).get("maps") or {}
    for name, info in MAPS.items():
        m = globals()[info["ident"]]
        src = named.get(name, DEFAULTS.get(name))
        m.load((src or {}).get("entries") or [])


def read_capture(path):
    """Yields the frames of a classic pcap or a pcapng capture of Ethernet
    frames."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError("%s: not a capture" % path)
    magic = data[:4]
    if magic == b"\x0a\x0d\x0d\x0a":
        yield from _pcapng(data, path)
        return
    for end in "<>":
        m = struct.unpack(end + "I", magic)[0]
        if m in (0xA1B2C3D4, 0xA1B23C4D):
            break
    else:
        raise ValueError("%s: not a pcap or pcapng capture" % path)
    link = struct.unpack(end + "I", data[20:24])[0] & 0xFFFF
    if link != 1:
        raise ValueError("%s: link type %d, want Ethernet (1)" % (path, link))
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + "I", data[off + 8:off + 12])[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def _pcapng(data, path):
    off, end, links = 0, "<", []
    while off + 12 <= len(data):
        kind = struct.unpack(end + "I", data[off:off + 4])[0]
        if kind == 0x0A0D0D0A:
            end = "<" if data[off + 8:off + 12] == b"\x4d\x3c\x2b\x1a" else ">"
            links = []
        size = struct.unpack(end + "I", data[off + 4:off + 8])[0]
        body = data[off + 8:off + size - 4]
        if kind == 1:
            links.append(struct.unpack(end + "H", body[:2])[0])
        elif kind == 6:
            iface, _, _, cap = struct.unpack(end + "IIII", body[:16])
            if links[iface] != 1:
                raise ValueError("%s: link type %d, want Ethernet (1)" % (path, links[iface]))
            yield body[20:20 + cap]
        elif kind == 3:
            orig = struct.unpack(end + "I", body[:4])[0]
            yield body[4:4 + orig]
        if size < 12:
            raise ValueError("%s: bad pcapng block" % path)
        off += size


MIN_FRAME = 14  # an Ethernet header: the smallest input


def classify(frame, limit=256):
    """The classes a frame can fall in and their costs: one unless a test
    reads a value the frame and the state do not give (then every outcome
    of such tests is tried, up to limit runs)."""
    global _oracle
    pkt, out, pending, runs = Packet(frame), {}, [[]], 0
    while pending and runs < limit:
        forced = pending.pop()
        _oracle = _Oracle(forced)
        for info in MAPS.values():
            globals()[info["ident"]].found = None
        c = INTERFACE(pkt, None)
        runs += 1
        out.setdefault(c.id, c.cost)
        for j in range(len(forced), len(_oracle.taken)):
            pending.append(_oracle.taken[:j] + [not _oracle.taken[j]])
    return sorted(out.items())


def _num(v):
    return ("%.6f" % v).rstrip("0").rstrip(".")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Evaluates the performance interface of %s on every frame of a "
                                 "capture: one line per frame with its class and predicted cost, then a "
                                 "summary per class." % PROGRAM)
    ap.add_argument("capture", help="pcap or pcapng file of Ethernet frames")
    ap.add_argument("--maps", metavar="STATE.json", help="map contents (mapstate/format.md), laid over the "
                    "object's own data; every frame meets this state (the program's own updates are not applied)")
    ap.add_argument("--pcv", action="append", default=[], metavar="NAME=VALUE",
                    help="value of a performance-critical variable in the formulas (default 1)")
    ap.add_argument("--ifindex", type=int, default=1, help="ctx.ingress_ifindex (default 1)")
    args = ap.parse_args(argv)
    for a in args.pcv:
        name, _, v = a.partition("=")
        if name not in PCVS:
            ap.error("--pcv %s: the formulas have no variable %s (they have: %s)" % (a, name, ", ".join(PCVS) or "none"))
        globals()[name] = float(v)
    ctx.ingress_ifindex = args.ifindex
    load_state(args.maps)
    counts, costs, skipped, failed = {}, {}, 0, 0
    for i, frame in enumerate(read_capture(args.capture)):
        if len(frame) < MIN_FRAME:
            print("frame %d: not run (%d bytes, under %d)" % (i, len(frame), MIN_FRAME))
            skipped += 1
            continue
        try:
            got = classify(frame)
        except (Undetermined, OutOfPacket, NameError) as e:
            print("frame %d: error: %s" % (i, e))
            failed += 1
            continue
        ids = "|".join(str(c) for c, _ in got)
        cost = "|".join(_num(v) for _, v in got)
        print("frame %d: class %s cost %s" % (i, ids, cost))
        key = got[0][0] if len(got) == 1 else ids
        counts[key] = counts.get(key, 0) + 1
        costs.setdefault(key, cost)
    print("# summary: %d frames in classes, %d not run, %d failed" % (sum(counts.values()), skipped, failed))
    for key in sorted(counts, key=lambda k: (isinstance(k, str), k if isinstance(k, int) else 0, str(k))):
        note = CLASSES[key] if isinstance(key, int) else "one of several classes (tests on values not given)"
        print("# class %s: %d frames, cost %s  # %s" % (key, counts[key], costs[key], note))


for _name, _info in MAPS.items():
    globals()[_info["ident"]] = Map(_name, _info)
load_state(None)

if __name__ == "__main__":
    main()
