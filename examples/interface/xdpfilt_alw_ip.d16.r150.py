def perf_xdpfilt_alw_ip(pkt, state):
    # Program: /usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_ip.o (xdpfilt_alw_ip)
    # Metric: BPF instructions
    # Resolution: 150 (inputs in one class differ by less than this; the value is the middle of the class)
    # State: filter_ipv4 (percpu_hash), filter_ipv6 (percpu_hash), xdp_stats_map (percpu_array)
    # Bounded: 790 subtrees below 16 decisions were not explored; each is a class
    #   whose range runs from the cheapest to the dearest way through the program from there
    if pkt.eth.type == 0x8100:
        if pkt.len >= 18:
            if pkt.vlan.type == 0x8100:
                if pkt.len >= 22:
                    if pkt[20:22] == 0x8100:  # parsing_helpers.h:68
                        if pkt.len >= 26:
                            return 159.5  # 91..228, 99 paths, 47 not explored further
                        else:
                            return 78  # path 1512
                    elif pkt[20:22] == 0x88a8:  # parsing_helpers.h:68
                        if pkt.len >= 26:
                            return 159.5  # 91..228, 69 paths, 30 not explored further
                        else:
                            return 78  # path 1412
                    else:
                        return 139.5  # 75..204, 82 paths, 42 not explored further
                else:
                    return 62  # path 1513
            elif pkt.vlan.type == 0x88a8:
                if pkt.len >= 22:
                    if pkt[20:22] == 0x8100:  # parsing_helpers.h:68
                        if pkt.len >= 26:
                            return 159.5  # 91..228, 69 paths, 30 not explored further
                        else:
                            return 78  # path 1259
                    elif pkt[20:22] == 0x88a8:  # parsing_helpers.h:68
                        if pkt.len >= 26:
                            return 159.5  # 91..228, 47 paths, 22 not explored further
                        else:
                            return 78  # path 1189
                    else:
                        return 139.5  # 75..204, 54 paths, 28 not explored further
                else:
                    return 62  # path 1260
            else:
                return 123.5  # 59..188, 192 paths, 112 not explored further
        else:
            return 46  # path 1514
    elif pkt.eth.type == 0x88a8:
        if pkt.len >= 18:
            if pkt.vlan.type == 0x8100:
                if pkt.len >= 22:
                    if pkt[20:22] == 0x8100:  # parsing_helpers.h:68
                        if pkt.len >= 26:
                            return 159.5  # 91..228, 69 paths, 30 not explored further
                        else:
                            return 78  # path 893
                    elif pkt[20:22] == 0x88a8:  # parsing_helpers.h:68
                        if pkt.len >= 26:
                            return 159.5  # 91..228, 47 paths, 22 not explored further
                        else:
                            return 78  # path 823
                    else:
                        return 139.5  # 75..204, 54 paths, 28 not explored further
                else:
                    return 62  # path 894
            elif pkt.vlan.type == 0x88a8:
                if pkt.len >= 22:
                    if pkt[20:22] == 0x8100:  # parsing_helpers.h:68
                        if pkt.len >= 26:
                            return 159.5  # 91..228, 47 paths, 22 not explored further
                        else:
                            return 78  # path 720
                    elif pkt[20:22] == 0x88a8:  # parsing_helpers.h:68
                        if pkt.len >= 26:
                            return 159.5  # 91..228, 32 paths, 15 not explored further
                        else:
                            return 78  # path 672
                    else:
                        return 139.5  # 75..204, 36 paths, 18 not explored further
                else:
                    return 62  # path 721
            else:
                return 123.5  # 59..188, 124 paths, 68 not explored further
        else:
            return 46  # path 895
    else:
        return 108.5  # 44..173, 480 paths, 276 not explored further
