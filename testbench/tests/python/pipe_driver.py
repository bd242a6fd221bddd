"""Drives a simulated design through its generated register_map.py: every MMIO
access goes over a pipe to the Rust test, which performs it on the simulated
AXI-Lite slave and answers.

    python3 pipe_driver.py DRIVER.py SESSION EXPECTED_JSON

Protocol (one line each way per access): this side writes "R <offset>" and reads
"<value> <resp>", or writes "W <offset> <value>" and reads "<resp>" (resp 0 is
OKAY); it ends with "DONE <reads> <writes>". SESSION is "panama" or "lightning";
EXPECTED_JSON holds the values the Rust side expects (from its own constants,
not from the driver).
"""

import importlib.util
import json
import sys


class BusError(Exception):
    """The slave answered an access with an error response."""


class PipeMMIO(object):
    """An MMIO object whose accesses are served by the process on the pipe."""

    def __init__(self):
        self.reads = 0
        self.writes = 0

    def _ask(self, line):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        answer = sys.stdin.readline()
        if not answer:
            raise EOFError("the simulator side closed the pipe")
        return [int(x) for x in answer.split()]

    def read(self, offset):
        self.reads += 1
        value, resp = self._ask("R %d" % offset)
        if resp:
            raise BusError("read of %#x: response %d" % (offset, resp))
        return value

    def write(self, offset, value):
        self.writes += 1
        (resp,) = self._ask("W %d %d" % (offset, value))
        if resp:
            raise BusError("write of %#x: response %d" % (offset, resp))


def load(path):
    spec = importlib.util.spec_from_file_location("register_map_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expect(got, want, what):
    if got != want:
        raise AssertionError("%s: got %r, expected %r" % (what, got, want))


def refuses(mod, bus, fn, what):
    """`fn` raises AccessError without any bus write."""
    writes = bus.writes
    try:
        fn()
    except mod.AccessError:
        expect(bus.writes, writes, what + ": bus writes")
        return
    raise AssertionError(what + " was not refused")


def check_params(drv, exp):
    """Every field of `params` the Rust side names has its value; returns params."""
    params = drv.params
    for field, want in sorted(exp["params"].items()):
        expect(getattr(params, field), want, "params." + field)
    return params


def panama(mod, bus, exp):
    drv = mod.Driver(bus)
    expect(drv.check_id(), exp["id"], "id")
    check_params(drv, exp)
    expect(drv.agg_udp_port, exp["agg_udp_port"], "agg_udp_port after reset")
    drv.agg_udp_port = 0x1234
    expect(drv.agg_udp_port, 0x1234, "agg_udp_port")
    drv.full_wait = 77
    expect(drv.full_wait, 77, "full_wait")
    written = drv.update_slot1_ports(port0=1, port2=1)
    expect(int(written), 0b101, "slot1_ports written")
    ports = drv.slot1_ports
    expect((ports.port0, ports.port1, ports.port2, int(ports)), (1, 0, 1, 0b101), "slot1_ports")
    refuses(mod, bus, lambda: drv.write_register("id", 0), "write to id")
    refuses(mod, bus, lambda: setattr(drv, "agg_udp_port", 1 << 16), "17-bit agg_udp_port")
    # A write the driver would refuse, sent raw: the hardware answers SLVERR.
    try:
        bus.write(drv.OFFSETS["id"], 0)
        raise AssertionError("the slave accepted a write to id")
    except BusError:
        pass
    expect(drv.packets_in, 0, "packets_in")
    drv.clear_packets_in()


def sign_extend(value):
    return value - (1 << 32) if value & (1 << 31) else value


def lightning(mod, bus, exp):
    drv = mod.Driver(bus)
    expect(drv.check_id(), exp["id"], "id")
    params = check_params(drv, exp)
    expect(drv.preamble_length, exp["preamble_length"], "preamble_length")
    expect(drv.status.busy, 0, "status.busy before start")
    image = exp["image"]
    for word in range(0, len(image), 16):
        chunk = image[word : word + 16] + [0] * 16
        drv.image_addr = word // 16
        for k in range(4):
            value = int.from_bytes(bytes(chunk[4 * k : 4 * k + 4]), "little")
            setattr(drv, "image_data%d" % k, value)
        drv.image_commit()
    drv.start()
    polls = 0
    while drv.status.busy:
        polls += 1
        if polls > 500:
            raise AssertionError("status.busy never fell")
    status = drv.status
    expect((status.done, status.failed, status.fail_reason), (1, 0, 0), "status")
    logits = [sign_extend(drv.read_register("logit%d" % i)) for i in range(params.logits)]
    expect(logits, exp["logits"], "logits")
    expect(drv.runs, 1, "runs")
    drv.clear_stats()
    # The clear crosses to the datapath clock and the counters cross back.
    for _ in range(50):
        if drv.runs == 0:
            break
    expect(drv.runs, 0, "runs after clear_stats")


def main():
    path, session, expected = sys.argv[1:4]
    mod = load(path)
    bus = PipeMMIO()
    {"panama": panama, "lightning": lightning}[session](mod, bus, json.loads(expected))
    sys.stdout.write("DONE %d %d\n" % (bus.reads, bus.writes))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
