#!/usr/bin/env python3
"""Makes the btsnoop captures in this folder with Google's bumble, an independent Bluetooth
stack: two (or three) bumble devices, each a host with its own controller, talk over bumble's
in-process link while a snooper on one host writes every HCI packet it exchanges with its
controller in btsnoop format (datalink 1002, H4).

Timestamps come from a clock this script sets, not the wall clock: each packet is stamped
with the clock's time, which then moves on by 10 microseconds, and the script moves the clock
to fixed offsets from the connection (`at(seconds)`) before the steps whose timing matters.
So the times in the captures — and the values, handles and errors below, which the
BLECaptureTests hard-code — are the same on every run.

Set up once, then run from the repository root:

    python3 -m venv /tmp/bumble-venv && /tmp/bumble-venv/bin/pip install bumble
    /tmp/bumble-venv/bin/python Fixtures/captures/make-captures.py

The tests do not need bumble: they read the committed .btsnoop files.
"""

import asyncio
import logging
import struct
import sys
from pathlib import Path

from bumble import att
from bumble.controller import Controller
from bumble.device import Device, DeviceConfiguration, Peer
from bumble.gatt import Characteristic, CharacteristicValue, Descriptor, Service
from bumble.core import UUID
from bumble.hci import Address
from bumble.host import Host
from bumble.link import LocalLink
from bumble.snoop import Snooper
from bumble.transport.common import AsyncPipeSink

OUT = Path(__file__).resolve().parent
CENTRAL = "F0:F0:F0:F0:F0:F0"
THERMO = "C1:C1:C1:C1:C1:C1"
SECOND = "C2:C2:C2:C2:C2:C2"
CUSTOM_SERVICE = "A0B40001-926D-4D61-98DF-8C5C62EE53B3"
CUSTOM_TEXT = "A0B40002-926D-4D61-98DF-8C5C62EE53B3"
CUSTOM_COMMAND = "A0B40003-926D-4D61-98DF-8C5C62EE53B3"

READ = Characteristic.Properties.READ
WRITE = Characteristic.Properties.WRITE
WRITE_WITHOUT_RESPONSE = Characteristic.Properties.WRITE_WITHOUT_RESPONSE
NOTIFY = Characteristic.Properties.NOTIFY
INDICATE = Characteristic.Properties.INDICATE


class Clock:
    """The capture's clock: microseconds since 1 January of year 0, as btsnoop counts."""

    BASE = 0x00E03AB44A676000 + 757_382_400_000_000  # 2024-01-01T00:00:00Z
    TICK = 10

    def __init__(self):
        self.now = self.BASE
        self.connected = None

    def stamp(self):
        time = self.now
        self.now += self.TICK
        return time

    def at(self, seconds):
        """Moves the clock to `seconds` after the (first) connection completed."""
        target = self.connected + round(seconds * 1_000_000)
        assert target >= self.now, f"the clock is already past {seconds}s"
        self.now = target


class ClockedSnooper(Snooper):
    """A btsnoop writer (big-endian header and records, datalink 1002) on the script's clock."""

    def __init__(self, output, clock):
        self.output = output
        self.clock = clock
        output.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))

    def snoop(self, packet, direction):
        flags = int(direction) | (0x02 if packet[0] in (0x01, 0x04) else 0x00)
        time = self.clock.stamp()
        # LE Meta event, LE (Enhanced) Connection Complete: the clock's origin.
        if packet[0] == 0x04 and packet[1] == 0x3E and packet[3] in (0x01, 0x0A, 0x29):
            if self.clock.connected is None:
                self.clock.connected = time
        self.output.write(struct.pack(">IIIIq", len(packet), len(packet), flags, 0, time) + packet)


def ad(kind, data):
    """One AD structure."""
    return bytes([len(data) + 1, kind]) + data


def make_device(link, address, name, advertising=b"", scan_response=b""):
    controller = Controller(name, link=link, public_address=address)
    config = DeviceConfiguration(name=name, address=Address(address))
    config.advertising_data = advertising
    config.scan_response_data = scan_response
    return Device(config=config, host=Host(controller, AsyncPipeSink(controller)))


async def scan_for(central, address, legacy):
    """Scans until the device's advertisement and scan response were both seen (bumble's
    controller reports the advertising data in both)."""
    seen = set()
    done = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement):
        if str(advertisement.address).startswith(address):
            seen.add(advertisement.is_scan_response)
            if len(seen) == 2 and not done.done():
                done.set_result(None)

    central.on("advertisement", on_advertisement)
    await central.start_scanning(legacy=legacy, filter_duplicates=True)
    await done
    await central.stop_scanning()
    central.remove_listener("advertisement", on_advertisement)


async def capture(name, peripherals, session, snoop_peripheral=False, legacy_scan=False):
    """Runs `session(clock, central, peripherals, peers)` with a snooper on the central's
    host (or on the first peripheral's) and writes NAME.btsnoop."""
    link = LocalLink()
    clock = Clock()
    central = make_device(link, CENTRAL, "Central")
    devices = [make_device(link, *spec[:4]) for spec in peripherals]
    for device, spec in zip(devices, peripherals):
        for service in spec[4]:
            device.add_service(service)
        device.gatt_server.max_mtu = spec[5] if len(spec) > 5 else device.gatt_server.max_mtu
    path = OUT / f"{name}.btsnoop"
    with open(path, "wb") as output:
        snooped = devices[0] if snoop_peripheral else central
        snooped.host.snooper = ClockedSnooper(output, clock)
        await central.power_on()
        for device in devices:
            await device.power_on()
            await device.start_advertising(advertising_interval_min=100, advertising_interval_max=100)
        connections = []
        for device, spec in zip(devices, peripherals):
            await scan_for(central, spec[0], legacy_scan)
            connections.append(await central.connect(Address(spec[0])))
        peers = [Peer(connection) for connection in connections]
        await session(clock, central, devices, peers)
        await asyncio.sleep(0)
    print(f"wrote {path.relative_to(OUT.parent.parent)}")


async def discover_everything(peer):
    await peer.discover_services()
    peer.everything = list(peer.services)
    for service in list(peer.services):
        for included in await peer.discover_included_services(service):
            peer.everything.append(included)
            await peer.discover_characteristics(service=included)
            for characteristic in included.characteristics:
                await peer.discover_descriptors(characteristic)
        await peer.discover_characteristics(service=service)
        for characteristic in service.characteristics:
            await peer.discover_descriptors(characteristic)


def server_characteristic(device, uuid):
    for attribute in device.gatt_server.attributes:
        if isinstance(attribute, Characteristic) and attribute.uuid == UUID(uuid):
            return attribute
    raise LookupError(uuid)


def find(peer, uuid):
    for service in peer.everything:
        for characteristic in service.characteristics:
            if characteristic.uuid == UUID(uuid):
                return characteristic
    raise LookupError(uuid)


# -- discovery-reads: discovery (with an included secondary service), reads, writes ----------

def thermo_services():
    calibration = Service(
        "FFF0", [Characteristic("FFF1", READ, "READABLE", bytes([0x01, 0x02]))], primary=False)
    text = bytearray(b"hello")

    def write_text(connection, value):
        text[:] = value

    sensing = Service(
        "181A",
        [
            Characteristic(
                "2A6E", READ | NOTIFY, "READABLE", bytes([0x0A, 0x09]),
                descriptors=[Descriptor("2901", "READABLE", b"Temperature")]),
            Characteristic("2A6F", READ, "READABLE", bytes([0x11, 0x27])),
        ],
        included_services=[calibration],
    )
    custom = Service(
        CUSTOM_SERVICE,
        [
            Characteristic(
                CUSTOM_TEXT, READ | WRITE, "READABLE|WRITEABLE",
                CharacteristicValue(read=lambda connection: bytes(text), write=write_text)),
            Characteristic(CUSTOM_COMMAND, WRITE_WITHOUT_RESPONSE, "WRITEABLE", bytes(1)),
        ],
    )
    return [calibration, sensing, custom]


THERMO_ADVERTISING = (
    ad(0x01, bytes([0x06]))
    + ad(0x09, b"Thermo-1")
    + ad(0x03, bytes([0x1A, 0x18]))
    + ad(0xFF, bytes([0xFF, 0xFF, 0x01, 0x02])))


async def discovery_reads(clock, central, devices, peers):
    peer = peers[0]
    clock.at(0.1)
    await discover_everything(peer)
    clock.at(0.5)
    await peer.read_value(find(peer, "2A00"))
    clock.at(0.6)
    await peer.read_value(find(peer, "2A6E"))
    clock.at(0.7)
    await peer.read_value(find(peer, "2A6F"))
    clock.at(0.8)
    await peer.read_value(find(peer, "FFF1"))
    clock.at(0.9)
    await peer.read_value(find(peer, "2A6E").get_descriptor(UUID("2901")))
    clock.at(1.0)
    await peer.read_value(find(peer, CUSTOM_TEXT))
    clock.at(1.1)
    await peer.write_value(find(peer, CUSTOM_TEXT), b"world", with_response=True)
    clock.at(1.2)
    await peer.write_value(find(peer, CUSTOM_COMMAND), bytes([0x01]), with_response=False)
    clock.at(1.3)
    await peer.read_value(find(peer, CUSTOM_TEXT))
    clock.at(1.5)
    await peer.connection.disconnect()


# -- long-values: a 300-byte read and a 100-byte write at the minimum ATT_MTU of 23 ----------

def long_services():
    log = bytes(i % 256 for i in range(300))
    config = bytearray()

    def write_config(connection, value):
        config[:] = value

    return [
        Service(
            "A0B50001-926D-4D61-98DF-8C5C62EE53B3",
            [
                Characteristic("A0B50002-926D-4D61-98DF-8C5C62EE53B3", READ, "READABLE", log),
                Characteristic(
                    "A0B50003-926D-4D61-98DF-8C5C62EE53B3", READ | WRITE, "READABLE|WRITEABLE",
                    CharacteristicValue(read=lambda connection: bytes(config), write=write_config)),
            ],
        )
    ]


async def long_values(clock, central, devices, peers):
    peer = peers[0]
    clock.at(0.1)
    await discover_everything(peer)
    clock.at(0.5)
    await peer.read_value(find(peer, "A0B50002-926D-4D61-98DF-8C5C62EE53B3"))
    clock.at(1.0)
    await peer.write_value(find(peer, "A0B50003-926D-4D61-98DF-8C5C62EE53B3"), bytes(range(100)), with_response=True)
    clock.at(1.5)
    await peer.read_value(find(peer, "A0B50003-926D-4D61-98DF-8C5C62EE53B3"))
    clock.at(2.0)
    await peer.connection.disconnect()


# -- notifications: MTU exchange, notifications and indications at set times ------------------

def pulse_services():
    return [
        Service(
            "180D",
            [
                Characteristic("2A37", NOTIFY, "READABLE", bytes([0x00])),
                Characteristic("2A38", READ, "READABLE", bytes([0x01])),
            ],
        ),
        Service("FFE0", [Characteristic("FFE1", INDICATE, "READABLE", bytes(0))]),
    ]


async def notifications(clock, central, devices, peers):
    peer = peers[0]
    device = devices[0]
    clock.at(0.05)
    await peer.request_mtu(247)
    clock.at(0.1)
    await discover_everything(peer)
    measurement = find(peer, "2A37")
    alerts = find(peer, "FFE1")
    clock.at(0.5)
    await peer.subscribe(measurement, lambda value: None)
    clock.at(0.6)
    await peer.subscribe(alerts, lambda value: None, prefer_notify=False)
    server_measurement = server_characteristic(device, "2A37")
    server_alerts = server_characteristic(device, "FFE1")
    for seconds, value in [(1.0, bytes([0x06, 0x48])), (1.25, bytes([0x06, 0x4A])),
                           (1.5, bytes(i % 256 for i in range(100)))]:
        clock.at(seconds)
        await device.notify_subscribers(server_measurement, value)
        await asyncio.sleep(0)
    clock.at(2.0)
    await device.indicate_subscribers(server_alerts, b"alert")
    clock.at(2.5)
    await device.indicate_subscribers(server_alerts, bytes([0x02]))
    clock.at(3.0)
    await peer.unsubscribe(measurement)
    clock.at(3.5)
    await next(iter(device.connections.values())).disconnect()
    await asyncio.sleep(0.01)


# -- att-errors: reads and writes the peripheral refuses ----------------------------------------

def guarded_services():
    def refuse(connection):
        raise att.ATT_Error(0x80)  # an application error

    def refuse_write(connection, value):
        raise att.ATT_Error(0x03)  # write not permitted

    return [
        Service(
            "FFD0",
            [
                Characteristic("FFD1", READ, "READABLE", CharacteristicValue(read=refuse)),
                Characteristic("FFD2", READ, "READABLE", bytes([0x2A])),
                Characteristic("FFD3", WRITE, "WRITEABLE", CharacteristicValue(write=refuse_write)),
            ],
        )
    ]


async def att_errors(clock, central, devices, peers):
    peer = peers[0]
    clock.at(0.1)
    await discover_everything(peer)
    for seconds, step in [
        (0.5, lambda: peer.read_value(find(peer, "FFD1"))),
        (0.6, lambda: peer.write_value(find(peer, "FFD3"), bytes([0x01]), with_response=True)),
    ]:
        clock.at(seconds)
        try:
            await step()
        except att.ATT_Error as error:
            print(f"  (expected) {error}", file=sys.stderr)
    clock.at(0.7)
    await peer.read_value(find(peer, "FFD2"))
    clock.at(1.0)
    await peer.connection.disconnect()


# -- two-peripherals: two connections in one capture, for --peer ------------------------------

async def two_peripherals(clock, central, devices, peers):
    clock.at(0.1)
    for peer in peers:
        await discover_everything(peer)
    clock.at(0.5)
    await peers[0].read_value(find(peers[0], "2A6F"))
    clock.at(0.6)
    await peers[1].read_value(find(peers[1], "2A19"))
    clock.at(1.0)
    for peer in peers:
        await peer.connection.disconnect()


async def main():
    logging.basicConfig(level=logging.WARNING)
    thermo = (THERMO, "Thermo-1", THERMO_ADVERTISING, b"")
    await capture("discovery-reads", [thermo + (thermo_services(),)], discovery_reads)
    await capture(
        "long-values", [(THERMO, "Logger", ad(0x09, b"Logger"), b"", long_services())], long_values,
        legacy_scan=True)
    await capture(
        "notifications", [(THERMO, "Pulse", ad(0x09, b"Pulse"), b"", pulse_services(), 185)], notifications)
    await capture(
        "notifications-peripheral-side", [(THERMO, "Pulse", ad(0x09, b"Pulse"), b"", pulse_services(), 185)],
        notifications, snoop_peripheral=True)
    await capture("att-errors", [(THERMO, "Guard", ad(0x09, b"Guard"), b"", guarded_services())], att_errors)
    battery = Service("180F", [Characteristic("2A19", READ, "READABLE", bytes([0x5A]))])
    await capture(
        "two-peripherals",
        [thermo + (thermo_services(),), (SECOND, "Battery-2", ad(0x09, b"Battery-2"), b"", [battery])],
        two_peripherals)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(), 60))
