#!/usr/bin/env python3
"""Makes a PacketLogger twin (NAME.pklg) of each btsnoop capture in this folder (NAME.btsnoop).

PacketLogger, Apple's HCI logger (the format of a Mac's PacketLogger captures and of the
Bluetooth log in an iOS sysdiagnose), has no file header: the file is a run of records, each
a 32-bit length (of what follows it), a timestamp of two 32-bit fields (seconds since 1970,
then microseconds: in a big-endian file, a 64-bit value with the seconds in its upper half),
a packet type byte and the packet. The HCI packets carry
no H4 type byte; the record type says what they are and which way they went:

    0x00 HCI command    0x01 HCI event    0x02 ACL sent    0x03 ACL received
    0x08 SCO sent       0x09 SCO received

and Apple adds records of its own (0xF7 syslog, 0xF8 kernel, 0xFB power, 0xFC note,
0xFD config, 0xFE new controller and newer types), which an importer skips. The classic files
are big-endian; newer ones are little-endian. This script writes some twins each way (see
LITTLE_ENDIAN) and inserts a few of Apple's records (see EXTRAS), so the importer's byte-order
detection and its skipping of those records are both exercised.

Each btsnoop record becomes one PacketLogger record with the same packet bytes (less the H4
type byte) and the same time, moved from btsnoop's origin (year 0) to 1970. So a twin imports
to the same profile and scenario as its btsnoop file; only the packet numbers in warnings
differ (PacketLogger numbers Apple's records too, as Wireshark does).

Run from anywhere, with any Python 3 (standard library only), after changing a capture:

    python3 Fixtures/captures/make-pklg.py
"""

import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# btsnoop counts microseconds from 1 January of year 0; 0x00E03AB44A676000 of them reach
# 1 January 2000, which is 946,684,800 seconds after 1 January 1970.
BTSNOOP_1970 = 0x00E03AB44A676000 - 946_684_800 * 1_000_000

# H4 packet type -> (PacketLogger type when the host sent it, when the host received it).
TYPES = {
    0x01: (0x00, None),  # command: host to controller only
    0x04: (None, 0x01),  # event: controller to host only
    0x02: (0x02, 0x03),  # ACL data
    0x03: (0x08, 0x09),  # SCO data
}

# The twins written little-endian; the others are big-endian.
LITTLE_ENDIAN = {"notifications", "two-peripherals"}


def syslog(pid, process, sender, subsystem, category, message):
    """A syslog record's payload: process id (little-endian), message type, then five strings."""
    strings = (process, sender, subsystem, category, message)
    return struct.pack("<IB", pid, 0) + b"".join(text.encode() + b"\0" for text in strings)


def note(text):
    return text.encode() + b"\0"


# Apple's records to insert: (position, type, payload), the position counting btsnoop records
# ("middle" is half-way). Every twin starts with a note and has another half-way.
COMMON = [(0, 0xFC, note("PacketLogger twin made by make-pklg.py")), ("middle", 0xFC, note("half-way"))]
EXTRAS = {
    "discovery-reads": [
        (0, 0xFD, note("Bluetooth configuration")),
        (3, 0xF7, syslog(81, "bluetoothd", "CoreBluetooth", "com.apple.bluetooth", "Server", "LE scan started")),
        (10, 0x28, bytes([0x01, 0x02, 0x03, 0x04])),
    ],
    "notifications": [(0, 0xFB, note("Power on"))],
    "two-peripherals": [(0, 0xFE, note("New controller")), (5, 0xF8, note("kernel: HCI transport ready"))],
}


def btsnoop_records(data, name):
    """(flags, time, packet) of each record of a big-endian H4 btsnoop file."""
    if data[:8] != b"btsnoop\0":
        sys.exit(f"{name}: not a btsnoop file")
    version, datalink = struct.unpack(">II", data[8:16])
    if (version, datalink) != (1, 1002):
        sys.exit(f"{name}: version {version}, datalink {datalink}; only version 1, H4 (1002) is converted")
    offset, records = 16, []
    while offset < len(data):
        original, included, flags, _drops, time = struct.unpack(">IIIIq", data[offset : offset + 24])
        if included != original:
            sys.exit(f"{name}: record {len(records)} was cut short; only whole packets are converted")
        records.append((flags, time, data[offset + 24 : offset + 24 + included]))
        offset += 24 + included
    if offset != len(data):
        sys.exit(f"{name}: the last record runs past the end of the file")
    return records


def pklg_record(order, time, kind, payload):
    """One PacketLogger record: length, seconds, microseconds, type, payload."""
    seconds, microseconds = divmod(time - BTSNOOP_1970, 1_000_000)
    return struct.pack(order + "IIIB", 9 + len(payload), seconds, microseconds, kind) + payload


def convert(source):
    name = source.stem
    order = "<" if name in LITTLE_ENDIAN else ">"
    records = btsnoop_records(source.read_bytes(), source.name)
    extras = {}
    for position, kind, payload in COMMON + EXTRAS.get(name, []):
        index = len(records) // 2 if position == "middle" else position
        extras.setdefault(index, []).append((kind, payload))
    out = bytearray()
    for index, (flags, time, packet) in enumerate(records):
        for kind, payload in extras.get(index, []):
            out += pklg_record(order, time, kind, payload)
        received = flags & 0x01
        kinds = TYPES.get(packet[0])
        kind = kinds[received] if kinds else None
        if kind is None:
            sys.exit(f"{source.name}: record {index} (H4 type 0x{packet[0]:02X}, flags {flags}) has no PacketLogger type")
        out += pklg_record(order, time, kind, packet[1:])
    target = source.with_suffix(".pklg")
    target.write_bytes(bytes(out))
    added = sum(len(items) for items in extras.values())
    endian = "little" if order == "<" else "big"
    print(f"{target.name}: {len(records)} HCI records and {added} of Apple's, {endian}-endian, {len(out)} bytes")


def main():
    sources = sorted(HERE.glob("*.btsnoop"))
    if not sources:
        sys.exit(f"no .btsnoop files in {HERE}")
    for source in sources:
        convert(source)


if __name__ == "__main__":
    main()
