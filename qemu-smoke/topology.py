"""The guest topologies: qemu-smoke/topologies/*.topo as a data model.

Topology(path) reads one file; its methods give the QEMU options that build
it and the facts boot.py passes to the guest (ktv_memnodes, ktv_slit,
ktv_homes). No QEMU and no I/O but reading the file: tests/ runs it on the
real topology files.
"""

import os
import re


class TopologyError(ValueError):
    """A topology file that cannot be booted: bad input (boot.py exits 3)."""


class Topology:
    """A topology file: cpus N / node ID [cpus=A-B] [mem=SIZE] / dist A B V /
    paging 4|5 / append KERNEL-PARAMETERS / dimm NODE SIZE ADDR. A node
    without cpus= has memory only. A dimm is a pc-dimm at guest physical
    ADDR that the guest adds itself (memory/probe): its node, if no node
    line names it, has nothing at boot and is not counted in ktv_nodes."""

    def __init__(self, path):
        self.name = os.path.basename(path).removesuffix(".topo")
        self.cpus, self.levels, self.nodes, self.dists, self.append = 0, 4, [], [], []
        self.dimms = []
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                words = line.split("#", 1)[0].split()
                if not words:
                    continue
                key, args = words[0], words[1:]
                try:
                    if key == "cpus":
                        self.cpus = int(args[0])
                    elif key == "paging":
                        self.levels = int(args[0])
                        assert self.levels in (4, 5)
                    elif key == "node":
                        opts = dict(a.split("=", 1) for a in args[1:])
                        unknown = set(opts) - {"cpus", "mem"}
                        if unknown:
                            raise ValueError(f"node takes cpus= and mem=, not {', '.join(sorted(unknown))}")
                        self.nodes.append((int(args[0]), opts.get("cpus"), opts.get("mem")))
                    elif key == "append":
                        self.append += args
                    elif key == "dist":
                        self.dists.append(tuple(int(a) for a in args[:3]))
                    elif key == "dimm":
                        self.dimms.append((int(args[0]), parse_size(args[1]), int(args[2], 0)))
                    else:
                        raise ValueError(key)
                except (ValueError, IndexError, KeyError, AssertionError) as err:
                    raise TopologyError(f"{path}:{lineno}: bad line ({err}): {line.strip()}") from err
        if not self.cpus or not self.nodes:
            raise TopologyError(f"{path}: needs a 'cpus' line and at least one 'node' line")

    def qemu_args(self, backend, workdir):
        cpu = "max" if self.levels == 5 else "max,la57=off"
        mem = sum(parse_size(m) for _, _, m in self.nodes if m)
        # One socket per node with CPUs: the kernel warns when a package
        # spans nodes.
        nodes = sum(1 for _, cpus, _ in self.nodes if cpus)
        if not nodes or self.cpus % nodes:
            raise TopologyError(f"{self.name}: {self.cpus} CPUs do not split into {nodes} nodes")
        smp = f"{self.cpus},sockets={nodes},cores={self.cpus // nodes},threads=1"
        args = ["-cpu", cpu, "-smp", smp, "-m", self.memory_arg(mem)]
        for nid, cpus, size in self.nodes:
            node = f"node,nodeid={nid}" + (f",cpus={cpus}" if cpus else "")
            if size:
                obj = f"memory-backend-{backend},id=m{nid},size={parse_size(size)}M"
                if backend == "file":
                    obj += f",mem-path={workdir}/node{nid}.mem,share=on"
                args += ["-object", obj]
                node += f",memdev=m{nid}"
            args += ["-numa", node]
        for nid in sorted({n for n, _, _ in self.dimms} - set(self.ids())):
            args += ["-numa", f"node,nodeid={nid}"]
        for src, dst, val in self.dists:
            args += ["-numa", f"dist,src={src},dst={dst},val={val}"]
        for i, (nid, size, addr) in enumerate(self.dimms):
            obj = f"memory-backend-{backend},id=d{i},size={size}M"
            if backend == "file":
                obj += f",mem-path={workdir}/dimm{i}.mem,share=on"
            args += ["-object", obj,
                     "-device", f"pc-dimm,id=dimm{i},memdev=d{i},node={nid},addr={addr:#x}"]
        return args

    def memory_arg(self, mem):
        """-m: the boot memory, and with DIMMs a slot each and a maxmem that
        makes QEMU's device memory region (from 4 GiB on, boot memory all
        below it) reach the highest DIMM, plus 1 GiB of alignment per slot."""
        if not self.dimms:
            return f"{mem}M"
        if mem > 2048:
            raise TopologyError(f"{self.name}: DIMMs need the boot memory below 2 GiB")
        end = max(addr // 2**20 + size for _, size, addr in self.dimms)
        maxmem = mem + max(end - 4096, 0) + 1024 * len(self.dimms)
        return f"{mem}M,slots={len(self.dimms)},maxmem={maxmem}M"

    def dimm_param(self):
        """ktv_dimms: NODE:ADDR:MIB of each DIMM, comma-separated."""
        return ",".join(f"{nid}:{addr:#x}:{size}" for nid, size, addr in self.dimms)


    def cpunodes(self):
        """The node of each vCPU, as the locality meter wants it: 0:0:1:1."""
        node_of = {}
        for nid, cpus, _ in self.nodes:
            for part in cpus.split(",") if cpus else []:
                lo, _, hi = part.partition("-")
                for cpu in range(int(lo), int(hi or lo) + 1):
                    node_of[cpu] = nid
        return ":".join(str(node_of.get(c, 0)) for c in range(self.cpus))

    def distance(self, a, b):
        """The SLIT distance from node a to node b, as QEMU builds it: the
        dist line for (a, b), else the one for (b, a), else 10 or 20."""
        dist = {(x, y): v for x, y, v in self.dists}
        return 10 if a == b else dist.get((a, b), dist.get((b, a), 20))

    def ids(self):
        return sorted(nid for nid, _, _ in self.nodes)

    def homes(self):
        """For each node, the nearest node with memory (itself if it has some)."""
        mem = [nid for nid, _, size in self.nodes if size]
        return ":".join(str(min(mem, key=lambda m, n=n: (self.distance(n, m), m)))
                        for n in self.ids())

    def memnodes(self):
        """The nodes with memory, as the guest prints has_memory: 0,1."""
        return ",".join(str(nid) for nid, _, size in sorted(self.nodes) if size)

    def slit(self):
        """The distance table, a row per node: 10.20/20.10."""
        return "/".join(".".join(str(self.distance(a, b)) for b in self.ids())
                        for a in self.ids())


def parse_size(text):
    """'512M' or '1G' -> MiB."""
    m = re.fullmatch(r"(\d+)([MG])", text)
    if not m:
        raise TopologyError(f"bad memory size {text!r}: use e.g. 512M or 1G")
    return int(m.group(1)) * (1024 if m.group(2) == "G" else 1)
