#!/usr/bin/env python3
"""Writes the seed corpora under Fixtures/fuzz/ that scripts/fuzz.sh starts from.

reassembly/: packet scripts of real Fragmenter packets (see FuzzTesting/Sources/FuzzReassembly)
and round-trip messages; uuid/: UUID strings and byte forms; fixtures/: the bundled profiles
and scenarios. Regression inputs found by fuzzing live beside them as crash-*/regression-*
files and are kept. Run from anywhere: python3 scripts/make-fuzz-seeds.py
"""
import pathlib
import shutil
import struct

ROOT = pathlib.Path(__file__).resolve().parent.parent
FUZZ = ROOT / "Fixtures" / "fuzz"


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def packets(message, max_packet_length, message_id):
    """The packets Fragmenter produces (format in Sources/Transport/Fragmenter.swift)."""
    checksum = crc32c(struct.pack(">H", message_id) + message)
    frame = struct.pack(">I", len(message)) + message + struct.pack(">I", checksum)
    payload = max_packet_length - 4
    return [
        struct.pack(">HH", message_id, index) + frame[start : start + payload]
        for index, start in enumerate(range(0, len(frame), payload))
    ]


def script(configuration, records):
    """A packet script: mode byte (even), then [control][length][bytes] records."""
    out = bytes([configuration * 2])
    for link, seconds, packet in records:
        if packet == "expire":
            out += bytes([seconds << 2 | link, 255])
        elif packet == "discard":
            out += bytes([seconds << 2 | link, 254])
        else:
            out += bytes([seconds << 2 | link, len(packet)]) + packet
    return out


def round_trip(packet_extra, message_id, seed, message):
    return bytes([1, packet_extra]) + struct.pack(">HH", message_id, seed) + message


def write(directory, name, data):
    path = FUZZ / directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def reassembly():
    text = b"The quick brown fox jumps over the lazy dog; BLE at MTU 23."
    three = packets(text[:30], 20, 1)
    write("reassembly", "seed-in-order", script(0, [(0, 0, p) for p in three]))
    write("reassembly", "seed-reversed", script(0, [(1, 1, p) for p in reversed(three)]))
    write("reassembly", "seed-single-packet", script(1, [(0, 0, p) for p in packets(b"hi", 20, 7)]))
    duplicated = [three[1], three[1], three[0], "expire", three[0], three[2], "discard"]
    write("reassembly", "seed-duplicates-expire", script(0, [(2, 0, p) for p in duplicated]))
    a = packets(text, 24, 0xFFFF)
    b = packets(bytes(range(64)), 40, 2)
    interleaved = [x for pair in zip(a, b) for x in pair] + a[len(b) :]
    write("reassembly", "seed-interleaved", script(0, [(i % 2, 0, p) for i, p in enumerate(interleaved)]))
    corrupt = [bytearray(p) for p in packets(text[:20], 20, 3)]
    corrupt[1][6] ^= 0x40
    write("reassembly", "seed-corrupted", script(0, [(0, 0, bytes(p)) for p in corrupt]))
    late = packets(text[:40], 20, 9)
    write("reassembly", "seed-expired", script(3, [(0, 0, late[0]), (0, 1, "expire"), (0, 0, late[1])]))
    write("reassembly", "seed-round-trip-mtu23", round_trip(0, 1, 5, text))
    write("reassembly", "seed-round-trip-mtu185", round_trip(162, 0xABCD, 77, bytes(range(256)) * 2))
    write("reassembly", "seed-round-trip-empty", round_trip(13, 0, 0, b""))


def uuids():
    strings = [
        "180D", "2a37", "12345678", "0000180D-0000-1000-8000-00805F9B34FB",
        "6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "6e400001-b5a3-f393-e0a9-e50e24dcca9e",
        "180G", "0x180D", "{180D}", "", "180D-", "6E400001B5A3-F393-E0A9-E50E24DCCA9E-",
        "１８０Ｄ",
    ]
    for index, string in enumerate(strings):
        write("uuid", f"seed-string-{index:02}", string.encode())
    write("uuid", "seed-bytes-16", bytes(range(16)))
    write("uuid", "seed-bytes-2", b"\x18\x0d")


def fixtures():
    for kind in ("peripherals", "scenarios"):
        for source in sorted((ROOT / "Fixtures" / kind).glob("*.json")):
            write("fixtures", f"seed-{kind}-{source.name}", source.read_bytes())


if __name__ == "__main__":
    for directory in ("reassembly", "uuid", "fixtures"):
        for old in (FUZZ / directory).glob("seed-*"):
            old.unlink()
    reassembly()
    uuids()
    fixtures()
