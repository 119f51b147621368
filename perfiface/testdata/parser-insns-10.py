def perf_parser(pkt, state):
    # Program: parser.o
    # Metric: BPF instructions
    # Packets: any bytes (malformed headers included; --well-formed leaves them out)
    # Resolution: 10 (every input is within this of its class's value, the middle of the class)
    # State: proto_count (percpu_array)
    if pkt.eth.type == 0x86dd:
        if pkt.len >= 54:
            return 40.5  # 31..50, 7 paths
        else:
            return 17  # path 17
    elif pkt.eth.type == 0x0800:
        if pkt.len >= 34:
            if pkt.ip.ihl == 5:
                return 45.5  # 36..55, 7 paths
            else:
                return 32  # path 7
        else:
            return 18  # path 8
    else:
        return 25  # path 9
