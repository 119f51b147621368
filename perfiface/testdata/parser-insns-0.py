def perf_parser(pkt, state):
    # Program: parser.o
    # Metric: BPF instructions
    # Packets: any bytes (malformed headers included; --well-formed leaves them out)
    # Resolution: exact (paths with equal cost merged only)
    # State: proto_count (percpu_array)
    if pkt.eth.type == 0x86dd:
        if pkt.len >= 54:
            if pkt.ipv6.next_hdr == 17:
                if pkt.len >= 62:
                    if pkt.udp.dport == 9:
                        return 46  # path 15
                    else:
                        return 48  # path 14
                else:
                    return 33  # path 16
            elif pkt.ipv6.next_hdr == 6:
                if pkt.len >= 74:
                    if pkt.tcp.dport == 23:
                        return 48  # path 11
                    else:
                        return 50  # path 10
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
                        if pkt.udp.dport == 9:
                            return 50  # path 5
                        else:
                            return 52  # path 4
                    else:
                        return 38  # path 6
                elif pkt.ip.proto == 6:
                    if pkt.len >= 54:
                        if pkt.tcp.dport == 23:
                            return 53  # path 1
                        else:
                            return 55  # path 0
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
