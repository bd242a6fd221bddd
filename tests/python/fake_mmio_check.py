"""Checks a generated register_map.py against its register_map.json with a
dict-backed fake MMIO. The JSON is parsed here, independently of the driver:
offsets, reset values, access rules, field masks and commands all come from it.

    python3 fake_mmio_check.py DRIVER.py MAP.json HOST

HOST is "pynq", "dev_mem" or "any": the helpers the driver must offer. Prints
"checked N registers, F fields" and exits 0, or fails with a traceback.
"""

import ast
import importlib.util
import json
import keyword
import os
import random
import struct
import sys
import tempfile
import types

STDLIB = {"collections", "mmap", "os"}


def load(path):
    spec = importlib.util.spec_from_file_location("register_map_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeMMIO(object):
    """Words by byte offset; records every access."""

    def __init__(self, words):
        self.mem = dict(words)
        self.reads = []
        self.writes = []

    def read(self, offset):
        assert offset in self.mem, "read of unmapped offset %#x" % offset
        self.reads.append(offset)
        return self.mem[offset]

    def write(self, offset, value):
        assert offset in self.mem, "write of unmapped offset %#x" % offset
        assert 0 <= value < 1 << 32, value
        self.writes.append((offset, value))
        self.mem[offset] = value


def ones(width):
    return (1 << width) - 1


def expect_raises(kind, fn, what):
    try:
        fn()
    except kind:
        return
    raise AssertionError("%s did not raise %s" % (what, kind.__name__))


def check_imports(path):
    """Only the standard library at import time; pynq only inside a function."""
    tree = ast.parse(open(path).read())
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            for n in names:
                assert n in STDLIB, "module-level import of %s" % n


def check_register(mod, drv, mmio, r, index, rng):
    name, off, width, access, reset = r["name"], r["offset"], r["width"], r["access"], r["reset"]
    assert name.isidentifier() and not keyword.iskeyword(name), name
    assert off == 4 * index, "%s: offset %#x, expected %#x" % (name, off, 4 * index)
    assert mod.OFFSETS[name] == off, "%s: driver offset %#x, map %#x" % (name, mod.OFFSETS[name], off)
    assert mod.RESETS[name] == reset, "%s: driver reset %#x, map %#x" % (name, mod.RESETS[name], reset)
    command = r.get("command", False)
    # The reset value reads back from the register's offset.
    got = drv.read_register(name)
    assert got == reset, "%s: read %#x, reset %#x" % (name, got, reset)
    assert mmio.reads[-1] == off, "%s: read at %#x, map offset %#x" % (name, mmio.reads[-1], off)
    if not command:
        assert int(getattr(drv, name)) == reset, name
        assert mmio.reads[-1] == off, name
    writes = len(mmio.writes)
    if access == "read_only":
        expect_raises(AttributeError, lambda: setattr(drv, name, 0), "setting " + name)
        expect_raises(mod.AccessError, lambda: drv.write_register(name, 0), "writing " + name)
        assert not hasattr(drv, "clear_" + name), name
        assert len(mmio.writes) == writes, "%s: a refused write reached the bus" % name
    elif access == "read_write":
        v = rng.randrange(1 << width)
        setattr(drv, name, v)
        assert mmio.writes[-1] == (off, v), (name, mmio.writes[-1], v)
        assert int(getattr(drv, name)) == v, name
        writes = len(mmio.writes)
        if width < 32:
            expect_raises(mod.AccessError, lambda: setattr(drv, name, 1 << width), "overflow " + name)
        expect_raises(mod.AccessError, lambda: setattr(drv, name, -1), "negative " + name)
        assert len(mmio.writes) == writes, "%s: a refused write reached the bus" % name
        mmio.mem[off] = reset
    elif access == "clear_on_write":
        if command:
            assert callable(getattr(drv, name)), name
            getattr(drv, name)()
        else:
            expect_raises(AttributeError, lambda: setattr(drv, name, 0), "setting " + name)
            getattr(drv, "clear_" + name)()
        assert len(mmio.writes) == writes + 1 and mmio.writes[-1][0] == off, name
        mmio.mem[off] = reset
    else:
        raise AssertionError("%s: unknown access %s" % (name, access))
    return check_fields(mod, drv, mmio, r, rng)


def check_fields(mod, drv, mmio, r, rng):
    """Each field decodes its own bits and nothing else; writable ones encode."""
    fields = r.get("fields", [])
    name, off, width = r["name"], r["offset"], r["width"]
    if not fields:
        return 0
    covered = 0
    for f in fields:
        mask = ones(f["width"]) << f["lsb"]
        assert mask & covered == 0, "%s: fields overlap" % name
        assert f["lsb"] + f["width"] <= width, "%s.%s outside the register" % (name, f["name"])
        covered |= mask
    saved = mmio.mem[off]
    patterns = [ones(width), 0] + [rng.randrange(1 << width) for _ in range(8)]
    patterns += [ones(f["width"]) << f["lsb"] for f in fields]
    for raw in patterns:
        mmio.mem[off] = raw
        value = getattr(drv, name)
        assert int(value) == raw, name
        for f in fields:
            got = getattr(value, f["name"])
            want = (raw >> f["lsb"]) & ones(f["width"])
            assert got == want, "%s.%s of %#x: %#x, expected %#x" % (name, f["name"], raw, got, want)
        repr(value)
    if r["access"] == "read_write":
        for f in fields:
            old = rng.randrange(1 << width)
            mmio.mem[off] = old
            v = rng.randrange(1 << f["width"])
            getattr(drv, "update_" + name)(**{f["name"]: v})
            mask = ones(f["width"]) << f["lsb"]
            assert mmio.writes[-1] == (off, (old & ~mask) | (v << f["lsb"])), (name, f["name"])
            expect_raises(
                mod.AccessError,
                lambda: getattr(drv, "update_" + name)(**{f["name"]: 1 << f["width"]}),
                "field overflow %s.%s" % (name, f["name"]),
            )
    mmio.mem[off] = saved
    return len(fields)


def check_dev_mem(mod, regs):
    """The mmap helper over a plain file: the window at a base past a page."""
    base = 2 * 4096 + 0x100
    words = {r["offset"]: r["reset"] for r in regs}
    with tempfile.NamedTemporaryFile(delete=False) as f:
        path = f.name
        f.write(bytes(base + mod.WINDOW_BYTES + 4096))
    try:
        with open(path, "r+b") as f:
            for off, v in words.items():
                f.seek(base + off)
                f.write(struct.pack("<I", v))
        with mod.Driver.from_dev_mem(base, path=path) as drv:
            for r in regs:
                assert drv.read_register(r["name"]) == r["reset"], r["name"]
            rw = [r for r in regs if r["access"] == "read_write"]
            if rw:
                drv.write_register(rw[-1]["name"], 1)
        if rw:
            with open(path, "rb") as f:
                f.seek(base + rw[-1]["offset"])
                assert struct.unpack("<I", f.read(4))[0] == 1
    finally:
        os.unlink(path)


def check_pynq(mod):
    """from_pynq builds pynq.MMIO(base, window) only when called."""
    assert "pynq" not in sys.modules
    made = []

    class MMIO(object):
        def __init__(self, base, length):
            made.append((base, length))

    sys.modules["pynq"] = types.SimpleNamespace(MMIO=MMIO)
    try:
        drv = mod.Driver.from_pynq(0xA0010000)
        assert made == [(0xA0010000, mod.WINDOW_BYTES)], made
        assert isinstance(drv.mmio, MMIO)
    finally:
        del sys.modules["pynq"]


def main():
    path, json_path, host = sys.argv[1:4]
    check_imports(path)
    mod = load(path)
    assert "pynq" not in sys.modules
    m = json.load(open(json_path))
    regs = m["registers"]
    assert mod.BLOCK == m["block"] and mod.ADDR_WIDTH == m["addr_width"]
    assert mod.WINDOW_BYTES == 1 << m["addr_width"]
    assert [r.name for r in mod.REGISTERS] == [r["name"] for r in regs]
    mmio = FakeMMIO({r["offset"]: r["reset"] for r in regs})
    drv = mod.Driver(mmio)
    rng = random.Random(12)
    fields = 0
    for i, r in enumerate(regs):
        fields += check_register(mod, drv, mmio, r, i, rng)
    assert list(drv.read_all().items()) == [(r["name"], r["reset"]) for r in regs]
    ids = [r for r in regs if r["name"] == "id"]
    if ids:
        assert drv.check_id() == ids[0]["reset"] == mod.ID_VALUE
        mmio.mem[ids[0]["offset"]] ^= 1
        expect_raises(mod.IdMismatch, drv.check_id, "check_id of a wrong id")
        mmio.mem[ids[0]["offset"]] ^= 1
    assert hasattr(mod.Driver, "from_pynq") == (host in ("pynq", "any")), host
    assert hasattr(mod.Driver, "from_dev_mem") == (host in ("dev_mem", "any")), host
    if host in ("pynq", "any"):
        check_pynq(mod)
    if host in ("dev_mem", "any"):
        check_dev_mem(mod, regs)
    print("checked %d registers, %d fields" % (len(regs), fields))


if __name__ == "__main__":
    main()
