def perf_fig2(pkt, state):
    # Program: fig2.o
    # Metric: BPF instructions
    # Packets: any bytes (malformed headers included; --well-formed leaves them out)
    # Resolution: exact (paths with equal cost merged only)
    # State: ip4_counter (array)
    if pkt.len >= 100:
        if pkt.eth.type == 0x0800:
            return 29  # path 0
        elif pkt.eth.type == 0x86dd:
            return 47  # path 1
        else:
            return 18  # path 2
    else:
        return 10  # path 3
