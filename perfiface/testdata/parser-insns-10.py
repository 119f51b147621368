def perf_parser(pkt, state):
    # Program: parser.o
    # Metric: BPF instructions
    # Packets: any bytes (malformed headers included; --well-formed leaves them out)
    # Resolution: 10 (inputs in one class differ by less than this; the value is the middle of the class)
    # State: proto_count (percpu_array)
    if pkt.eth.type == 0x86dd:
        if pkt.len >= 54:
            if pkt.ipv6.next_hdr == 17:
                if pkt.len >= 62:
                    return 47  # 46..48, 2 paths
                else:
                    return 33  # path 16
            elif pkt.ipv6.next_hdr == 6:
                if pkt.len >= 74:
                    return 49  # 48..50, 2 paths
                else:
                    return 35  # path 12
            else:
                return 31  # path 13
        else:
            return 17  # path 17
    elif pkt.eth.type == 0x0800:
        if pkt.len >= 34:
            if pkt.ip.ihl == 5:
                if pkt.ip.proto == 17:
                    if pkt.len >= 42:
                        return 51  # 50..52, 2 paths
                    else:
                        return 38  # path 6
                elif pkt.ip.proto == 6:
                    if pkt.len >= 54:
                        return 54  # 53..55, 2 paths
                    else:
                        return 40  # path 2
                else:
                    return 36  # path 3
            else:
                return 32  # path 7
        else:
            return 18  # path 8
    else:
        return 25  # path 9
