def perf_counter(pkt, state):
    # Program: counter.o
    # Metric: cost in ns under target x86-64
    # Packets: any bytes (malformed headers included; --well-formed leaves them out)
    # Resolution: exact (paths with equal cost merged only)
    # State: sources (hash), unknown (array)
    # PCVs (summed over the operations of a packet):
    #   traversals_sources - sources: keys compared while walking the bucket's chain from its head: the position of the key on a hit, the whole chain on a miss
    if pkt.len >= 34:
        if pkt.eth.type == 0x0800:
            if sources.contains(pkt.ip.src):
                if sources.value.bytes + pkt.len <= sources.value.budget:
                    return 62.4 + 4*traversals_sources  # path 1
                else:
                    return 62.5 + 4*traversals_sources  # path 2
            else:
                return 54.8 + 4*traversals_sources  # path 0
        else:
            return 20.8  # path 3
    else:
        return 18.8  # path 4
