#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""examples/responder.c's policy in Python: answer each client ALLOW or DENY
from its connect-time cgroup.   python-responder.py POLICY SOCKET|@NAME
The policy format is examples/responder.policy's (first match wins)."""
import asyncio, fnmatch, os, stat, sys

from peercgroup import ContainerFlags
from peercgroup.aio import with_peer


def load(fn):
    rules = []
    for n, line in enumerate(open(fn), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            act, key, pattern = line.split()
            rules.append((act == "allow", key, pattern, n))
    return rules


def subject(key, path, ct):
    """What a rule's key sees for this peer; None: the key does not apply."""
    monitor = bool(ct.flags & ContainerFlags.MONITOR)  # never the container
    # where a user may create cgroups, it names them after anything
    user_named = bool(ct.flags & (ContainerFlags.ROOTLESS | ContainerFlags.UNPROVEN))
    who = f"{ct.runtime}:{ct.id}"
    return {"runtime": str(ct.runtime), "cgroup": path,
            "container": who if ct.id and not monitor and not user_named else None,
            "monitor": who if monitor and not user_named else None,
            "app": ct.app or None, "unit": ct.unit or None}[key]


async def answer(reader, writer, peer):
    if peer.error:  # no record means no proof: deny, and say why
        reply = f"DENY error: {peer.error.strerror}"
    else:
        i, ct = peer.info, peer.container
        rule = next((r for r in RULES if (s := subject(r[1], i.path, ct)) is not None
                     and fnmatch.fnmatchcase(s, r[2])), None)
        mon = "(monitor)" if ct.flags & ContainerFlags.MONITOR else ""
        reply = (f"{'ALLOW' if rule and rule[0] else 'DENY'} {ct.runtime}{mon} {i.path} "
                 f"pid={i.pid} rule={rule[3] if rule else 0}")
    print(reply, flush=True)
    writer.write(reply.encode() + b"\n")
    await writer.drain()
    writer.close()


async def main(sock):
    if not sock.startswith("@") and os.path.exists(sock) and stat.S_ISSOCK(os.lstat(sock).st_mode):
        os.unlink(sock)  # a stale socket, never another file
    server = await asyncio.start_unix_server(with_peer(answer), sock.replace("@", "\0", 1))
    await server.serve_forever()

if __name__ == "__main__":
    RULES = load(sys.argv[1])
    asyncio.run(main(sys.argv[2]))
