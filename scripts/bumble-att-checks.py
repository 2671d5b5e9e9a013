#!/usr/bin/env python3
"""Checks how Google's bumble Bluetooth stack behaves at the ATT/GATT edges BLEMockKit models.

Each check connects a bumble GATT client (Peer) to a bumble GATT server over bumble's
in-process link (LocalLink + Controller, as Fixtures/captures/make-captures.py does), records
every ATT PDU that crosses (a snooper on the client's host reassembles L2CAP CID 0x0004 from
the HCI ACL packets it exchanges with its controller) and prints one line: what bumble
answered and the PDUs each way ("C>S" client to server, "S>C" server to client).
Section numbers are those of the Bluetooth Core Specification, Vol 3.

    python3 -m venv /tmp/bumble-venv && /tmp/bumble-venv/bin/pip install bumble
    /tmp/bumble-venv/bin/python scripts/bumble-att-checks.py

Its output on the bumble version named there is at the bottom of this file.
"""

import asyncio
import logging
from collections import Counter
from importlib.metadata import version

from bumble import att
from bumble.controller import Controller
from bumble.device import Device, DeviceConfiguration, Peer
from bumble.gatt import (GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR as CCCD,
                         Characteristic, Descriptor, Service)
from bumble.hci import Address
from bumble.host import Host
from bumble.link import LocalLink
from bumble.snoop import Snooper
from bumble.transport.common import AsyncPipeSink

P = Characteristic.Properties
SERVER, CLIENT = "C1:C1:C1:C1:C1:C1", "F0:F0:F0:F0:F0:F0"
NAMES = {op: op.name[4:] for op in att.Opcode}


class AttTap(Snooper):
    """Reassembles the ATT PDUs in the ACL packets between the client's host and controller."""

    def __init__(self):
        self.pdus, self.partial = [], {}

    def snoop(self, packet, direction):
        if packet[0] != 0x02:  # H4 ACL data only
            return
        handle = int.from_bytes(packet[1:3], "little")
        data = packet[5:]
        way = "C>S" if direction == Snooper.Direction.HOST_TO_CONTROLLER else "S>C"
        key = (way, handle & 0x0FFF)
        buffer = data if (handle >> 12) & 0x3 != 0x1 else self.partial.get(key, b"") + data
        if len(buffer) < 4 or len(buffer) - 4 < int.from_bytes(buffer[0:2], "little"):
            self.partial[key] = buffer
            return
        self.partial.pop(key, None)
        if int.from_bytes(buffer[2:4], "little") == 0x0004:
            self.pdus.append((way, buffer[4:]))

    def take(self):
        pdus, self.pdus = self.pdus, []
        return pdus


def summary(pdus):
    """'C>S 29 PREPARE_WRITE_REQUEST(0x16), ...' with lengths of the largest PDU where useful."""
    counts = Counter((way, pdu[0]) for way, pdu in pdus)
    parts = [f"{way} {n}x{NAMES.get(op, hex(op))}(0x{op:02X})" for (way, op), n in counts.items()]
    for way, pdu in pdus:
        if pdu[0] == att.Opcode.ATT_ERROR_RESPONSE:
            parts.append(f"error(req 0x{pdu[1]:02X}, code 0x{pdu[4]:02X})")
    return f"[{'; '.join(parts) or 'no PDUs'}]"


class Warnings(logging.Handler):
    """Collects what bumble logs (warnings, swallowed exceptions) so a check can show it."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage().splitlines()[0].strip("!- "))

    def take(self):
        messages, self.messages = self.messages, []
        return f" bumble logged: {messages}" if messages else ""


WARNINGS = Warnings()


def make_device(link, address, name):
    controller = Controller(name, link=link, public_address=address)
    config = DeviceConfiguration(name=name, address=Address(address))
    return Device(config=config, host=Host(controller, AsyncPipeSink(controller)))


class Session:
    """One connection: a server with `services`, a client at ATT_MTU `mtu`, all discovered."""

    async def open(self, services, mtu=23, strip_last_cccd=False):
        link = LocalLink()
        self.server = make_device(link, SERVER, "Server")
        self.client = make_device(link, CLIENT, "Client")
        for service in services:
            self.server.add_service(service)
        if strip_last_cccd:  # drop the CCCD bumble added after the last characteristic
            drop_last_cccd(self.server.gatt_server)
        self.tap = AttTap()
        self.client.host.snooper = self.tap
        await self.server.power_on()
        await self.client.power_on()
        await self.server.start_advertising()
        self.peer = Peer(await self.client.connect(Address(SERVER)))
        if mtu != 23:
            await self.peer.request_mtu(mtu)
        await self.peer.discover_services()
        for service in self.peer.services:
            await self.peer.discover_characteristics(service=service)
        await self.settle()
        self.tap.take()
        WARNINGS.take()
        return self

    async def settle(self):
        for _ in range(20):  # let the local link deliver whatever is in flight
            await asyncio.sleep(0.005)

    async def step(self, coroutine):
        """Runs one client action; returns (its result or the ATT error, the PDUs that crossed)."""
        try:
            result = await coroutine
        except att.ATT_Error as error:
            result = f"ATT_Error 0x{error.error_code:02X}"
        await self.settle()
        return result, self.tap.take()

    def char(self, uuid):
        return self.peer.get_characteristics_by_uuid(Characteristic(uuid, 0, 0).uuid)[0]

    def server_char(self, uuid):
        uuid = Characteristic(uuid, 0, 0).uuid
        return next(a for a in self.server.gatt_server.attributes
                    if isinstance(a, Characteristic) and a.uuid == uuid)

    async def close(self):
        await self.peer.connection.disconnect()
        await self.settle()


def drop_last_cccd(server):
    cccd = server.attributes.pop()
    assert cccd.type == CCCD
    for attribute in server.attributes:
        if attribute.end_group_handle == cccd.handle:
            attribute.end_group_handle = cccd.handle - 1
    server.attributes_by_handle.pop(cccd.handle, None)


def request(session, pdu):
    return session.peer.gatt_client.send_request(pdu)


def out(check, text):
    print(f"{check}: {text}{WARNINGS.take()}")


# -- 1. Long writes: Vol 3 Part F 3.4.6.1 Prepare Write Request, 3.4.6.3 Execute Write
#       Request; Part G 4.9.4 Write Long Characteristic Values. A value may be 512 bytes at most
#       (Part F 3.2.9); the error is 0x0D Invalid Attribute Value Length.
async def check_long_write():
    for mtu in (23, 247):
        s = await Session().open([Service("AA00", [Characteristic(
            "AA01", P.READ | P.WRITE, "READABLE|WRITEABLE", bytes(512))])], mtu)
        char = s.char("AA01")
        result, pdus = await s.step(s.peer.write_value(char, bytes(513), with_response=True))
        order = " -> ".join(NAMES[pdu[0]] for _, pdu in pdus[-2:])
        out(f"1 long write 513 B, ATT_MTU {s.peer.gatt_client.mtu}",
            f"client got {result}; ends {order}; stored value still "
            f"{len(s.server_char('AA01').value)} B {summary(pdus)}")
        await s.close()
    s = await Session().open([Service("AA00", [Characteristic(
        "AA01", P.READ | P.WRITE, "READABLE|WRITEABLE", bytes(512))])])
    handle = s.char("AA01").handle
    # bumble checks neither length nor offset on Prepare Write; on Execute it rebuilds the value
    # from an empty buffer (not from the stored value), so a queue not starting at 0 gets 0x07.
    prepared, pdus = await s.step(request(s, att.ATT_Prepare_Write_Request(
        attribute_handle=handle, value_offset=510, part_attribute_value=b"\x01\x02\x03")))
    executed, pdus2 = await s.step(request(s, att.ATT_Execute_Write_Request(flags=0x01)))
    out("1 raw Prepare Write offset 510 + 3 B (ends at 513)",
        f"answered {NAMES[prepared.op_code]} {summary(pdus)}; then Execute Write (flags 01) "
        f"answered {summary(pdus2)}")
    pdus = []
    for offset, part in ((0, bytes(18)), (600, bytes(1))):
        echo, more = await s.step(request(s, att.ATT_Prepare_Write_Request(
            attribute_handle=handle, value_offset=offset, part_attribute_value=part)))
        pdus += more
    cancelled, more = await s.step(request(s, att.ATT_Execute_Write_Request(flags=0x00)))
    out("1 raw Prepare Write offset 0 + 18 B, offset 600 + 1 B, then Execute (flags 00)",
        f"last prepare answered {NAMES[echo.op_code]} at offset {echo.value_offset}; cancel "
        f"answered {NAMES[cancelled.op_code]} {summary(pdus + more)}")
    await s.close()


# -- 2. Read Blob: Vol 3 Part F 3.4.4.5 Read Blob Request (0x0B Attribute Not Long,
#       0x07 Invalid Offset); Part G 4.8.3 Read Long Characteristic Values.
async def check_read_blob():
    s = await Session().open([Service("BB00", [
        Characteristic("BB01", P.READ, "READABLE", b"\x01\x02\x03\x04\x05"),
        Characteristic("BB02", P.READ, "READABLE", bytes(range(30))),
        Characteristic("BB03", P.READ, "READABLE", bytes(range(22)))])])
    for uuid, length, offsets in (("BB01", 5, (0, 1, 5, 6)), ("BB02", 30, (1, 22, 30, 31))):
        for offset in offsets:
            response, pdus = await s.step(request(s, att.ATT_Read_Blob_Request(
                attribute_handle=s.char(uuid).handle, value_offset=offset)))
            answer = (f"{len(response.part_attribute_value)} B"
                      if response.op_code == att.Opcode.ATT_READ_BLOB_RESPONSE else "error")
            out(f"2 Read Blob offset {offset} of a {length}-B value, ATT_MTU 23",
                f"{answer} {summary(pdus)}")
    value, pdus = await s.step(s.peer.read_value(s.char("BB03")))
    out("2 client read_value of a 22-B value (= ATT_MTU-1), ATT_MTU 23",
        f"got {len(value)} B {summary(pdus)}")
    await s.close()


# -- 3. Subscribing: Vol 3 Part G 4.10 Characteristic Value Notification, 4.12.3 Write
#       Characteristic Descriptors, 3.3.3.3 Client Characteristic Configuration, 4.7.1 Discover
#       All Characteristic Descriptors. bumble's server adds a CCCD to every notify/indicate
#       characteristic; `strip` removes it again. (bumble's client never sets
#       `descriptors_discovered`, so subscribe() discovers the descriptors again each time.)
async def check_subscribe():
    for strip, descriptors in ((True, []), (True, [Descriptor("2901", "READABLE", b"x")]),
                               (False, [])):
        s = await Session().open([Service("CC00", [
            Characteristic("CC01", P.READ, "READABLE", b"\x00"),
            Characteristic("CC02", P.READ | P.NOTIFY, "READABLE", b"\x00",
                           descriptors=descriptors)])], strip_last_cccd=strip)
        char = s.char("CC02")
        found, discovery = await s.step(s.peer.discover_descriptors(char))
        result, pdus = await s.step(s.peer.subscribe(char, lambda value: None))
        out(f"3 subscribe, notify characteristic with descriptors {[str(d.type)[8:12] for d in found]}",
            f"discovery before {summary(discovery)}; subscribe returned {result} {summary(pdus)}")
        await s.close()


# -- 4. Write Command: Vol 3 Part F 3.4.5.3 Write Command (no response, not even an error);
#       Part G 4.9.1 Write Without Response. Write Request contrast: Part F 3.4.5.1.
async def check_write_command():
    # bumble's server does not check the WRITEABLE permission (a TODO in gatt_server.py); it does
    # check WRITE_REQUIRES_ENCRYPTION, and swallows (logs) that error for a Write Command.
    s = await Session().open([Service("DD00", [
        Characteristic("DD01", P.READ | P.WRITE_WITHOUT_RESPONSE, "READABLE", b"\x00"),
        Characteristic("DD02", P.READ | P.WRITE_WITHOUT_RESPONSE | P.WRITE,
                       "READABLE|WRITEABLE|WRITE_REQUIRES_ENCRYPTION", b"\x00")])])
    for uuid, what in (("DD01", "no WRITEABLE permission"), ("DD02", "WRITE_REQUIRES_ENCRYPTION")):
        for with_response in (False, True):
            server_char = s.server_char(uuid)
            server_char.value = b"\x00"
            result, pdus = await s.step(s.peer.write_value(
                s.char(uuid), b"\x2A", with_response=with_response))
            out(f"4 {'Write Request' if with_response else 'Write Command'} 2A to {what}",
                f"client got {result}; server value now {server_char.value.hex()} {summary(pdus)}")
    await s.close()


# -- 5. ATT_MTU 517: Vol 3 Part F 3.4.7.1 Handle Value Notification (value up to ATT_MTU-3),
#       3.4.5.3 Write Command; 3.2.9 Long Attribute Values (512 bytes at most).
async def check_mtu_517():
    s = await Session().open([Service("EE00", [
        Characteristic("EE01", P.READ | P.NOTIFY | P.WRITE_WITHOUT_RESPONSE,
                       "READABLE|WRITEABLE", bytes(range(256)) * 2)])], mtu=517)
    char, server_char = s.char("EE01"), s.server_char("EE01")
    received = []
    await s.step(s.peer.subscribe(char, received.append))
    for label, value in (("its 512-B value", None), ("a 600-B value passed in", bytes(600))):
        received.clear()
        result, pdus = await s.step(s.server.notify_subscribers(server_char, value))
        out(f"5 notify {label}, ATT_MTU {s.peer.gatt_client.mtu}",
            f"client received {[len(v) for v in received]} B, PDU {len(pdus[0][1])} B {summary(pdus)}")
    for size in (512, 514, 515):
        server_char.value = b"\x00"
        result, pdus = await s.step(s.peer.write_value(char, bytes([0x55]) * size))
        out(f"5 Write Command of {size} B, ATT_MTU 517",
            f"client sent PDU of {len(pdus[0][1])} B; server value now {len(server_char.value)} B "
            f"{summary(pdus)}")
    await s.close()


# -- 6. CCCD value: Vol 3 Part G 3.3.3.3 Client Characteristic Configuration (bit 0
#       notification, bit 1 indication); 4.11 Characteristic Value Indications.
async def check_cccd_value():
    s = await Session().open([Service("FF00", [
        Characteristic("FF01", P.READ | P.NOTIFY, "READABLE", b"\x01"),
        Characteristic("FF02", P.READ | P.INDICATE, "READABLE", b"\x02")])])
    for uuid in ("FF01", "FF02"):
        char = s.char(uuid)
        await s.peer.discover_descriptors(char)
        cccd = char.get_descriptor(CCCD)
        await s.step(s.peer.subscribe(char, lambda value: None))
        if uuid == "FF02":
            _, indication = await s.step(s.server.indicate_subscribers(s.server_char(uuid)))
        value, pdus = await s.step(s.peer.read_value(cccd))
        await s.step(s.peer.unsubscribe(char))
        after, _ = await s.step(s.peer.read_value(cccd))
        out(f"6 CCCD after subscribing to {'notify' if uuid == 'FF01' else 'indicate'}",
            f"read {value.hex()} {summary(pdus)}"
            + (f" (indication {summary(indication)})" if uuid == "FF02" else "")
            + f"; after unsubscribe {after.hex()}")
    await s.close()


# -- 7. A full prepare queue: Vol 3 Part F 3.4.6.1 (0x09 Prepare Queue Full) and 3.4.6.3 (an
#       Execute Write with flags 0x00 cancels what was queued). bumble's server queues at most 64
#       Prepare Writes a bearer; its client, refused a Prepare Write, cancels before it raises.
async def check_prepare_queue_full():
    s = await Session().open([Service("CC00", [Characteristic(
        "CC01", P.READ | P.WRITE, "READABLE|WRITEABLE", bytes(1))])])
    char = s.char("CC01")
    result, pdus = await s.step(s.peer.write_value(char, bytes(1200), with_response=True))
    order = " -> ".join(NAMES[pdu[0]] for _, pdu in pdus[-4:])
    out("7 long write 1200 B, ATT_MTU 23 (65 parts of 18 B)",
        f"client got {result}; ends {order}; stored value still "
        f"{len(s.server_char('CC01').value)} B {summary(pdus)}")
    await s.close()


async def main():
    bumble_logger = logging.getLogger("bumble")
    bumble_logger.setLevel(logging.WARNING)
    bumble_logger.propagate = False
    bumble_logger.addHandler(WARNINGS)
    print(f"bumble {version('bumble')}")
    for check in (check_long_write, check_read_blob, check_subscribe, check_write_command,
                  check_mtu_517, check_cccd_value, check_prepare_queue_full):
        await check()


if __name__ == "__main__":
    asyncio.run(main())

# Output of `python scripts/bumble-att-checks.py` (bumble 0.0.236, Python 3.11.7):
#
# bumble 0.0.236
# 1 long write 513 B, ATT_MTU 23: client got ATT_Error 0x0D; ends EXECUTE_WRITE_REQUEST -> ERROR_RESPONSE; stored value still 512 B [C>S 29xPREPARE_WRITE_REQUEST(0x16); S>C 29xPREPARE_WRITE_RESPONSE(0x17); C>S 1xEXECUTE_WRITE_REQUEST(0x18); S>C 1xERROR_RESPONSE(0x01); error(req 0x18, code 0x0D)]
# 1 long write 513 B, ATT_MTU 247: client got ATT_Error 0x0D; ends EXECUTE_WRITE_REQUEST -> ERROR_RESPONSE; stored value still 512 B [C>S 3xPREPARE_WRITE_REQUEST(0x16); S>C 3xPREPARE_WRITE_RESPONSE(0x17); C>S 1xEXECUTE_WRITE_REQUEST(0x18); S>C 1xERROR_RESPONSE(0x01); error(req 0x18, code 0x0D)]
# 1 raw Prepare Write offset 510 + 3 B (ends at 513): answered PREPARE_WRITE_RESPONSE [C>S 1xPREPARE_WRITE_REQUEST(0x16); S>C 1xPREPARE_WRITE_RESPONSE(0x17)]; then Execute Write (flags 01) answered [C>S 1xEXECUTE_WRITE_REQUEST(0x18); S>C 1xERROR_RESPONSE(0x01); error(req 0x18, code 0x07)]
# 1 raw Prepare Write offset 0 + 18 B, offset 600 + 1 B, then Execute (flags 00): last prepare answered PREPARE_WRITE_RESPONSE at offset 600; cancel answered EXECUTE_WRITE_RESPONSE [C>S 2xPREPARE_WRITE_REQUEST(0x16); S>C 2xPREPARE_WRITE_RESPONSE(0x17); C>S 1xEXECUTE_WRITE_REQUEST(0x18); S>C 1xEXECUTE_WRITE_RESPONSE(0x19)]
# 2 Read Blob offset 0 of a 5-B value, ATT_MTU 23: error [C>S 1xREAD_BLOB_REQUEST(0x0C); S>C 1xERROR_RESPONSE(0x01); error(req 0x0C, code 0x0B)]
# 2 Read Blob offset 1 of a 5-B value, ATT_MTU 23: error [C>S 1xREAD_BLOB_REQUEST(0x0C); S>C 1xERROR_RESPONSE(0x01); error(req 0x0C, code 0x0B)]
# 2 Read Blob offset 5 of a 5-B value, ATT_MTU 23: error [C>S 1xREAD_BLOB_REQUEST(0x0C); S>C 1xERROR_RESPONSE(0x01); error(req 0x0C, code 0x0B)]
# 2 Read Blob offset 6 of a 5-B value, ATT_MTU 23: error [C>S 1xREAD_BLOB_REQUEST(0x0C); S>C 1xERROR_RESPONSE(0x01); error(req 0x0C, code 0x07)]
# 2 Read Blob offset 1 of a 30-B value, ATT_MTU 23: 22 B [C>S 1xREAD_BLOB_REQUEST(0x0C); S>C 1xREAD_BLOB_RESPONSE(0x0D)]
# 2 Read Blob offset 22 of a 30-B value, ATT_MTU 23: 8 B [C>S 1xREAD_BLOB_REQUEST(0x0C); S>C 1xREAD_BLOB_RESPONSE(0x0D)]
# 2 Read Blob offset 30 of a 30-B value, ATT_MTU 23: 0 B [C>S 1xREAD_BLOB_REQUEST(0x0C); S>C 1xREAD_BLOB_RESPONSE(0x0D)]
# 2 Read Blob offset 31 of a 30-B value, ATT_MTU 23: error [C>S 1xREAD_BLOB_REQUEST(0x0C); S>C 1xERROR_RESPONSE(0x01); error(req 0x0C, code 0x07)]
# 2 client read_value of a 22-B value (= ATT_MTU-1), ATT_MTU 23: got 22 B [C>S 1xREAD_REQUEST(0x0A); S>C 1xREAD_RESPONSE(0x0B); C>S 1xREAD_BLOB_REQUEST(0x0C); S>C 1xERROR_RESPONSE(0x01); error(req 0x0C, code 0x0B)]
# 3 subscribe, notify characteristic with descriptors []: discovery before [no PDUs]; subscribe returned None [no PDUs] bumble logged: ['subscribing to characteristic with no CCCD descriptor']
# 3 subscribe, notify characteristic with descriptors ['2901']: discovery before [C>S 1xFIND_INFORMATION_REQUEST(0x04); S>C 1xFIND_INFORMATION_RESPONSE(0x05)]; subscribe returned None [C>S 1xFIND_INFORMATION_REQUEST(0x04); S>C 1xFIND_INFORMATION_RESPONSE(0x05)] bumble logged: ['subscribing to characteristic with no CCCD descriptor']
# 3 subscribe, notify characteristic with descriptors ['2902']: discovery before [C>S 1xFIND_INFORMATION_REQUEST(0x04); S>C 1xFIND_INFORMATION_RESPONSE(0x05)]; subscribe returned None [C>S 1xFIND_INFORMATION_REQUEST(0x04); S>C 1xFIND_INFORMATION_RESPONSE(0x05); C>S 1xWRITE_REQUEST(0x12); S>C 1xWRITE_RESPONSE(0x13)]
# 4 Write Command 2A to no WRITEABLE permission: client got None; server value now 2a [C>S 1xWRITE_COMMAND(0x52)]
# 4 Write Request 2A to no WRITEABLE permission: client got None; server value now 2a [C>S 1xWRITE_REQUEST(0x12); S>C 1xWRITE_RESPONSE(0x13)]
# 4 Write Command 2A to WRITE_REQUIRES_ENCRYPTION: client got None; server value now 00 [C>S 1xWRITE_COMMAND(0x52)] bumble logged: ['ignoring exception']
# 4 Write Request 2A to WRITE_REQUIRES_ENCRYPTION: client got ATT_Error 0x0F; server value now 00 [C>S 1xWRITE_REQUEST(0x12); S>C 1xERROR_RESPONSE(0x01); error(req 0x12, code 0x0F)]
# 5 notify its 512-B value, ATT_MTU 517: client received [512] B, PDU 515 B [S>C 1xHANDLE_VALUE_NOTIFICATION(0x1B)]
# 5 notify a 600-B value passed in, ATT_MTU 517: client received [514] B, PDU 517 B [S>C 1xHANDLE_VALUE_NOTIFICATION(0x1B)]
# 5 Write Command of 512 B, ATT_MTU 517: client sent PDU of 515 B; server value now 512 B [C>S 1xWRITE_COMMAND(0x52)]
# 5 Write Command of 514 B, ATT_MTU 517: client sent PDU of 517 B; server value now 1 B [C>S 1xWRITE_COMMAND(0x52)]
# 5 Write Command of 515 B, ATT_MTU 517: client sent PDU of 518 B; server value now 1 B [C>S 1xWRITE_COMMAND(0x52)]
# 6 CCCD after subscribing to notify: read 0100 [C>S 1xREAD_REQUEST(0x0A); S>C 1xREAD_RESPONSE(0x0B)]; after unsubscribe 0000
# 6 CCCD after subscribing to indicate: read 0200 [C>S 1xREAD_REQUEST(0x0A); S>C 1xREAD_RESPONSE(0x0B)] (indication [S>C 1xHANDLE_VALUE_INDICATION(0x1D); C>S 1xHANDLE_VALUE_CONFIRMATION(0x1E)]); after unsubscribe 0000
# 7 long write 1200 B, ATT_MTU 23 (65 parts of 18 B): client got ATT_Error 0x09; ends PREPARE_WRITE_REQUEST -> ERROR_RESPONSE -> EXECUTE_WRITE_REQUEST -> EXECUTE_WRITE_RESPONSE; stored value still 1 B [C>S 65xPREPARE_WRITE_REQUEST(0x16); S>C 64xPREPARE_WRITE_RESPONSE(0x17); S>C 1xERROR_RESPONSE(0x01); C>S 1xEXECUTE_WRITE_REQUEST(0x18); S>C 1xEXECUTE_WRITE_RESPONSE(0x19); error(req 0x16, code 0x09)]
