#!/usr/bin/env python3
"""Writes the seed corpora under Fixtures/fuzz/ that scripts/fuzz.sh starts from.

reassembly/: packet scripts of real Fragmenter packets (see FuzzTesting/Sources/FuzzReassembly)
and round-trip messages; uuid/: UUID strings and byte forms; fixtures/: the bundled profiles
and scenarios; capture/: a small LE session as btsnoop (H4 both byte orders, H1, Linux
monitor) and as PacketLogger (both byte orders, with a note), and the smallest bundled capture
with its PacketLogger twin; recording/: the bundled session recordings, the first events of
each (a recording cut short), and a session that fails to connect, connects and reconnects. Regression inputs found by fuzzing live beside them as crash-*/regression-*
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


def att(pdu, sent, handle=0x0040):
    """An ATT PDU in one L2CAP frame on channel 4, as an H4 ACL packet."""
    frame = struct.pack("<HH", len(pdu), 4) + pdu
    boundary = 0 if sent else 2
    return (sent, bytes([0x02]) + struct.pack("<HH", handle | boundary << 12, len(frame)) + frame)


def event(code, parameters):
    return (False, bytes([0x04, code, len(parameters)]) + parameters)


def session():
    """(sent, H4 packet) of a short LE session: an advertisement, a connection, discovery of a
    heart rate service, a read, a notification and the disconnection."""
    peer = bytes([0xA6, 0xB5, 0xC4, 0xD3, 0xE2, 0xF1])
    return [
        event(0x3E, bytes([0x02, 0x01, 0x00, 0x01]) + peer + bytes([0x06, 0x02, 0x01, 0x06, 0x02, 0x0A, 0x00, 0xC4])),
        event(0x3E, bytes([0x01, 0x00, 0x40, 0x00, 0x00, 0x01]) + peer + bytes([0x18, 0, 0, 0, 0x48, 0, 0])),
        att(bytes([0x02, 0xF7, 0x00]), True),
        att(bytes([0x03, 0xB9, 0x00]), False),
        att(bytes([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]), True),
        att(bytes([0x11, 0x06, 0x01, 0x00, 0x04, 0x00, 0x0D, 0x18]), False),
        att(bytes([0x08, 0x01, 0x00, 0x04, 0x00, 0x03, 0x28]), True),
        att(bytes([0x09, 0x07, 0x02, 0x00, 0x12, 0x03, 0x00, 0x37, 0x2A]), False),
        att(bytes([0x04, 0x04, 0x00, 0x04, 0x00]), True),
        att(bytes([0x05, 0x01, 0x04, 0x00, 0x02, 0x29]), False),
        att(bytes([0x0A, 0x03, 0x00]), True),
        att(bytes([0x0B, 0x06, 0x48]), False),
        att(bytes([0x12, 0x04, 0x00, 0x01, 0x00]), True),
        att(bytes([0x13]), False),
        att(bytes([0x1B, 0x03, 0x00, 0x06, 0x49]), False),
        (True, bytes([0x01, 0x06, 0x04, 0x03, 0x40, 0x00, 0x13])),
        event(0x05, bytes([0x00, 0x40, 0x00, 0x16])),
    ]


def btsnoop(packets, datalink=1002, order=">"):
    """A btsnoop file of the packets, one record each, 1 ms apart."""
    out = b"btsnoop\0" + struct.pack(order + "II", 1, datalink)
    for index, (sent, packet) in enumerate(packets):
        kind, received = packet[0], 0 if sent else 1
        if datalink == 2001:
            flags, data = {0x01: 2, 0x04: 3, 0x02: 4 + received}[kind], packet[1:]
        else:
            flags = received | (0x02 if kind in (0x01, 0x04) else 0)
            data = packet if datalink == 1002 else packet[1:]
        time = 0x00E03AB44A676000 + index * 1000
        out += struct.pack(order + "IIIIq", len(data), len(data), flags, 0, time) + data
    return out


def pklg(packets, order=">"):
    """A PacketLogger file of the packets, with a note first, 1 ms apart."""
    types = {(0x01, True): 0x00, (0x04, False): 0x01, (0x02, True): 0x02, (0x02, False): 0x03}
    records = [(0xFC, b"fuzz seed\0")] + [(types[(p[0], sent)], p[1:]) for sent, p in packets]
    out = b""
    for index, (kind, data) in enumerate(records):
        out += struct.pack(order + "IIIB", 9 + len(data), 1_704_067_200, index * 1000, kind) + data
    return out


def captures():
    packets = session()
    write("capture", "seed-btsnoop-h4", btsnoop(packets))
    write("capture", "seed-btsnoop-h4-little-endian", btsnoop(packets, order="<"))
    write("capture", "seed-btsnoop-h1", btsnoop(packets, datalink=1001))
    write("capture", "seed-btsnoop-monitor", btsnoop(packets, datalink=2001))
    write("capture", "seed-pklg-big-endian", pklg(packets))
    write("capture", "seed-pklg-little-endian", pklg(packets, order="<"))
    bundled = ROOT / "Fixtures" / "captures"
    write("capture", "seed-att-errors-btsnoop", (bundled / "att-errors.btsnoop").read_bytes())
    write("capture", "seed-att-errors-pklg", (bundled / "att-errors.pklg").read_bytes())


def recordings():
    for source in sorted((ROOT / "Fixtures" / "recordings").glob("*.json")):
        text = source.read_text()
        write("recording", f"seed-{source.name}", text.encode())
        head, rest = text.split("\n", 1)
        events = [line.rstrip(",") for line in rest.splitlines() if line.startswith("  {")]
        for count in (1, 4, 12):
            cut = head + "\n" + ",\n".join(events[:count]) + "\n]}\n"
            write("recording", f"seed-first-{count}-{source.name}", cut.encode())
    peripheral = "E4546FDA-DA9E-4A73-96DA-AEC92CD44D42"
    service = "0000180D-0000-1000-8000-00805F9B34FB"
    events = [
        f'{{"time":"0s","event":"connectionFailed","peripheral":"{peripheral}",'
        '"error":{"domain":"cb","code":14}}',
        f'{{"time":"0.5s","event":"connected","peripheral":"{peripheral}","mtu":23}}',
        f'{{"time":"0.6s","event":"services","peripheral":"{peripheral}",'
        f'"services":[{{"uuid":"{service}","primary":true,"handle":1,"endHandle":5}}]}}',
        f'{{"time":"0.7s","event":"disconnected","peripheral":"{peripheral}"}}',
        f'{{"time":"2s","event":"connected","peripheral":"{peripheral}","mtu":247}}',
        f'{{"time":"2.1s","event":"disconnected","peripheral":"{peripheral}"}}',
    ]
    text = '{"format": "mockble-recording", "version": 1, "events": [\n  ' + ",\n  ".join(events) + "\n]}\n"
    write("recording", "seed-reconnect.json", text.encode())


if __name__ == "__main__":
    for directory in ("reassembly", "uuid", "fixtures", "capture", "recording"):
        for old in (FUZZ / directory).glob("seed-*"):
            old.unlink()
    reassembly()
    uuids()
    fixtures()
    captures()
    recordings()
