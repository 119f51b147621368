def perf_xdpfilt_alw_ip(pkt, state):
    # Program: /usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_ip.o (xdpfilt_alw_ip)
    # Metric: BPF instructions
    # Packets: any bytes (malformed headers included; --well-formed leaves them out)
    # Resolution: 60 (every input is within this of its class's value, the middle of the class)
    # State: filter_ipv4 (percpu_hash), filter_ipv6 (percpu_hash), xdp_stats_map (percpu_array)
    # Bounded: 15 subtrees below 6 decisions were not explored; each is a class
    #   whose range runs from the cheapest to the dearest way through the program from there
    if pkt.eth.type == 0x8100:
        if pkt.len >= 18:
            if pkt.vlan.type == 0x8100:
                if pkt.len >= 22:
                    if pkt.vlan[1].type == 0x8100:
                        if pkt.len >= 26:
                            return 159  # 89..229, path 25 not explored further
                        else:
                            return 78  # path 26
                    elif pkt.vlan[1].type == 0x88a8:
                        return 153.5  # 78..229, path 24 not explored further
                    else:
                        return 139.5  # 75..204, path 23 not explored further
                else:
                    return 62  # path 27
            elif pkt.vlan.type == 0x88a8:
                if pkt.len >= 22:
                    if pkt.vlan[1].type == 0x8100:
                        return 153.5  # 78..229, path 21 not explored further
                    else:
                        return 152  # 74..230, path 20 not explored further
                else:
                    return 62  # path 22
            elif pkt.vlan.type == 0x86dd:
                if pkt.len >= 58:
                    return 126  # 64..188, path 18 not explored further
                else:
                    return 61  # path 19
            else:
                return 77.5  # 59..96, 2 paths, 1 not explored further
        else:
            return 46  # path 28
    elif pkt.eth.type == 0x88a8:
        if pkt.len >= 18:
            if pkt.vlan.type == 0x8100:
                if pkt.len >= 22:
                    if pkt.vlan[1].type == 0x8100:
                        return 153.5  # 78..229, path 13 not explored further
                    else:
                        return 152  # 74..230, path 12 not explored further
                else:
                    return 62  # path 14
            elif pkt.vlan.type == 0x88a8:
                if pkt.len >= 22:
                    return 151.5  # 73..230, path 10 not explored further
                else:
                    return 62  # path 11
            elif pkt.vlan.type == 0x86dd:
                return 124.5  # 61..188, path 9 not explored further
            else:
                return 77.5  # 59..96, path 8 not explored further
        else:
            return 46  # path 15
    elif pkt.eth.type == 0x86dd:
        if pkt.len >= 54:
            if pkt.len >= 56:
                return 117  # 61..173, 2 paths, 2 not explored further
            else:
                return 49  # path 6
        else:
            return 46  # path 7
    else:
        return 62.5  # 44..81, 4 paths, 1 not explored further
