# SPDX-License-Identifier: LGPL-2.1-or-later
"""asyncio: the caller's container for asyncio.start_unix_server servers.

    async def handle(reader, writer, peer):
        if peer.error or peer.container.runtime != Runtime.SYSTEM_SERVICE: ...

    await asyncio.start_unix_server(peercgroup.aio.with_peer(handle), path)

The ioctl does not block: it reads the record the kernel made at connect.
"""
import functools
from dataclasses import dataclass, field
from typing import Optional

from . import get, Info, PeercgroupError
from .classify import Container
from ._owner import classify_peer


@dataclass(frozen=True)
class Peer:
    """The record of an accepted connection, its classification, or why
    there is neither (error set: deny, there is no proof)."""
    info: Optional[Info] = None
    container: Container = field(default_factory=Container)
    error: Optional[PeercgroupError] = None


def peer_of(writer):
    """The Peer of the connection behind an asyncio StreamWriter."""
    sock = writer.get_extra_info("socket")
    try:
        if sock is None:
            raise PeercgroupError(9)  # EBADF: a transport without a socket
        info = get(sock)
    except PeercgroupError as e:
        return Peer(error=e)
    return Peer(info, classify_peer(info))


def with_peer(callback):
    """Wrap callback(reader, writer, peer) as a client_connected_cb."""
    @functools.wraps(callback)
    def wrapper(reader, writer):
        return callback(reader, writer, peer_of(writer))
    return wrapper
